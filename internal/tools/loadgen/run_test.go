package loadgen

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"sync"
	"testing"
	"time"
)

// Timing in these tests is generous: titles that must be on time have a
// deadline of seconds and no delay; titles that must miss are delayed
// well past their deadline and well short of their timeout.

func TestRunCountsMissesAndErrors(t *testing.T) {
	srv := newFakeServer(t, []titleSpec{
		{id: "fast", duration: 5},
		{id: "slow", duration: 0.2, delay: 350 * time.Millisecond}, // timeout 0.8 s
		{id: "broken", duration: 5, status: http.StatusServiceUnavailable},
		{id: "fast2", duration: 5},
	}, fakeOptions{})
	rep, err := Run(context.Background(), Config{URL: srv.URL, Rate: 100,
		Duration: 500 * time.Millisecond, Popularity: Exponent(0)})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Requests != 50 {
		t.Fatalf("%d requests due in 0.5 s at 100/s, want 50", rep.Requests)
	}
	byID := map[string]TitleStat{}
	for _, ts := range rep.Titles {
		byID[ts.ID] = ts
		if ts.Requests == 0 || srv.hits(ts.ID) != ts.Requests {
			t.Errorf("title %s: %d requests, server saw %d", ts.ID, ts.Requests, srv.hits(ts.ID))
		}
	}
	checkTitle(t, byID["fast"], 0, 0)
	checkTitle(t, byID["fast2"], 0, 0)
	checkTitle(t, byID["slow"], 0, byID["slow"].Requests)
	checkTitle(t, byID["broken"], byID["broken"].Requests, byID["broken"].Requests)
	checkTotals(t, rep, byID["broken"].Requests, byID["slow"].Requests)
	if rep.ErrorKinds["status 503"] != rep.Errors {
		t.Errorf("error kinds %v, want %d x status 503", rep.ErrorKinds, rep.Errors)
	}
}

func checkTitle(t *testing.T, ts TitleStat, errs, misses int) {
	t.Helper()
	if ts.Errors != errs || ts.Misses != misses {
		t.Errorf("title %s: %d errors, %d misses; want %d, %d", ts.ID, ts.Errors, ts.Misses, errs, misses)
	}
}

func checkTotals(t *testing.T, rep Report, errs, late int) {
	t.Helper()
	if rep.Errors != errs || rep.Late != late || rep.Misses != errs+late {
		t.Errorf("errors %d late %d misses %d; want %d, %d, %d", rep.Errors, rep.Late, rep.Misses, errs, late, errs+late)
	}
	if rep.Completed != rep.Requests-rep.Errors {
		t.Errorf("completed %d of %d requests with %d errors", rep.Completed, rep.Requests, rep.Errors)
	}
	if want := float64(rep.Misses) / float64(rep.Requests); rep.MissRatio != want {
		t.Errorf("miss ratio %v, want %v", rep.MissRatio, want)
	}
	if rep.Bytes < int64(rep.Completed*bodySize) || rep.MBPerS <= 0 || rep.ThroughputRPS <= 0 {
		t.Errorf("bytes %d, %v MB/s, %v req/s for %d completed", rep.Bytes, rep.MBPerS, rep.ThroughputRPS, rep.Completed)
	}
	if !(rep.P50Ms <= rep.P90Ms && rep.P90Ms <= rep.P99Ms && rep.P99Ms <= rep.P999Ms && rep.P999Ms <= rep.MaxMs) || rep.MaxMs < 350 {
		t.Errorf("latency percentiles %v %v %v %v %v ms", rep.P50Ms, rep.P90Ms, rep.P99Ms, rep.P999Ms, rep.MaxMs)
	}
}

func TestRunZipfSkew(t *testing.T) {
	var specs []titleSpec
	for _, id := range []string{"t0", "t1", "t2", "t3", "t4", "t5", "t6", "t7"} {
		specs = append(specs, titleSpec{id: id, duration: 5})
	}
	srv := newFakeServer(t, specs, fakeOptions{})
	rep, err := Run(context.Background(), Config{URL: srv.URL, Rate: 500, Duration: 600 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if rep.ZipfS != 0.8 || rep.Popularity != "theta=0.2 (s=0.8)" {
		t.Fatalf("default law %q (s=%v), want theta 0.2", rep.Popularity, rep.ZipfS)
	}
	// s = 0.8 over 8 titles: p(first) = 0.31, p(last) = 0.058.
	c := rep.Titles
	t.Logf("per-title requests: %v", c)
	if c[0].ID != "t0" || c[0].Requests < 3*c[7].Requests || c[0].Requests+c[1].Requests < c[6].Requests+c[7].Requests+c[5].Requests+c[4].Requests {
		t.Fatalf("no Zipf skew in %v", c)
	}
}

func TestRunDropsAtMaxInflight(t *testing.T) {
	srv := newFakeServer(t, []titleSpec{{id: "a", duration: 5, delay: 300 * time.Millisecond}}, fakeOptions{})
	rep, err := Run(context.Background(), Config{URL: srv.URL, Rate: 50, Duration: 400 * time.Millisecond, MaxInflight: 2})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Dropped == 0 || rep.ErrorKinds["dropped"] != rep.Dropped || rep.Errors != rep.Dropped || rep.Misses != rep.Dropped {
		t.Fatalf("requests %d dropped %d errors %d misses %d kinds %v", rep.Requests, rep.Dropped, rep.Errors, rep.Misses, rep.ErrorKinds)
	}
	if sent := srv.hits("a"); sent != rep.Requests-rep.Dropped {
		t.Fatalf("server saw %d requests, %d sent", sent, rep.Requests-rep.Dropped)
	}
}

func TestRunServerStats(t *testing.T) {
	srv := newFakeServer(t, []titleSpec{{id: "a", duration: 5}}, fakeOptions{stats: true})
	rep, err := Run(context.Background(), Config{URL: srv.URL, Rate: 100, Duration: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]float64{"ram.hits": 20, "ssd.hits": 0, "origin.reads": 10, "shards.0": 20, "shards.1": 0}
	if len(rep.Server) != len(want) {
		t.Fatalf("server deltas %v, want %v", rep.Server, want)
	}
	for k, v := range want {
		if rep.Server[k] != v {
			t.Errorf("server %s delta %v, want %v", k, rep.Server[k], v)
		}
	}
}

func TestRunWithoutStats(t *testing.T) {
	srv := newFakeServer(t, []titleSpec{{id: "a", duration: 5}}, fakeOptions{})
	rep, err := Run(context.Background(), Config{URL: srv.URL + "/", Rate: 100, Duration: 100 * time.Millisecond})
	if err != nil || rep.Server != nil || rep.URL != srv.URL {
		t.Fatalf("err %v, server %v, url %q", err, rep.Server, rep.URL)
	}
}

func TestRunWarmupNotMeasured(t *testing.T) {
	srv := newFakeServer(t, []titleSpec{{id: "a", duration: 5}}, fakeOptions{})
	var mu sync.Mutex
	var warm, measured int
	rep, err := Run(context.Background(), Config{URL: srv.URL, Rate: 100, Warmup: 300 * time.Millisecond,
		Duration: 300 * time.Millisecond, ProgressInterval: 50 * time.Millisecond,
		Progress: func(p Progress) {
			mu.Lock()
			defer mu.Unlock()
			if p.Warmup {
				warm++
			} else {
				measured++
			}
		}})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Requests != 30 || srv.hits("a") != 60 || rep.DurationS != 0.3 || rep.WarmupS != 0.3 {
		t.Fatalf("measured %d of %d requests over %v s", rep.Requests, srv.hits("a"), rep.DurationS)
	}
	mu.Lock()
	defer mu.Unlock()
	if warm == 0 || measured == 0 {
		t.Fatalf("progress calls: %d in warmup, %d after", warm, measured)
	}
}

// A cancelled run aborts its requests in flight rather than waiting for
// their answers: the server, whose every answer takes a minute, sees each
// request abandoned during its delay and answers none. (srv.Close waits for
// every handler, so a run that left its requests running would show them
// as served.)
func TestRunCancel(t *testing.T) {
	base := runtime.NumGoroutine()
	srv := newFakeServer(t, []titleSpec{{id: "a", duration: 5, delay: time.Minute}}, fakeOptions{})
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	rep, err := Run(ctx, Config{URL: srv.URL, Rate: 50, Duration: 10 * time.Second})
	if !errors.Is(err, context.DeadlineExceeded) || !rep.Interrupted {
		t.Fatalf("err %v, interrupted %v", err, rep.Interrupted)
	}
	if rep.Requests != 0 || rep.Errors != 0 || rep.DurationS > 1 {
		t.Fatalf("aborted requests recorded: %d requests, %d errors over %v s", rep.Requests, rep.Errors, rep.DurationS)
	}
	srv.Close()
	if srv.totalHits() == 0 {
		t.Fatal("no request was in flight when the run was cancelled")
	}
	if n := srv.served(); n != 0 {
		t.Fatalf("%d of %d requests waited out their delay: the cancelled run did not abort them", n, srv.totalHits())
	}
	checkGoroutines(t, base)
}

// checkGoroutines waits for the goroutine count to fall back to base.
func checkGoroutines(t *testing.T, base int) {
	t.Helper()
	deadline := time.Now().Add(3 * time.Second)
	for runtime.NumGoroutine() > base+2 {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<16)
			t.Fatalf("%d goroutines, %d before:\n%s", runtime.NumGoroutine(), base, buf[:runtime.Stack(buf, true)])
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestRunRejects(t *testing.T) {
	empty := newFakeServer(t, nil, fakeOptions{})
	notFound := httptest.NewServer(http.NotFoundHandler())
	defer notFound.Close()
	garbage := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("<html>")) }))
	defer garbage.Close()
	ok := newFakeServer(t, []titleSpec{{id: "a", duration: 1}}, fakeOptions{})
	for _, tc := range []struct {
		cfg  Config
		want error
	}{
		{Config{URL: "ftp://example.com"}, ErrBadURL},
		{Config{URL: "localhost:8080"}, ErrBadURL},
		{Config{URL: "http://"}, ErrBadURL},
		{Config{URL: "http://%zz"}, ErrBadURL},
		{Config{URL: "http://" + closedAddr(t)}, ErrUnreachable},
		{Config{URL: empty.URL}, ErrEmptyCatalog},
		{Config{URL: notFound.URL}, ErrCatalog},
		{Config{URL: garbage.URL}, ErrCatalog},
		{Config{URL: ok.URL, Rate: -1}, ErrConfig},
		{Config{URL: ok.URL, Popularity: Theta(1.5)}, ErrConfig},
		{Config{URL: ok.URL, Popularity: Exponent(-1)}, ErrConfig},
		{Config{URL: ok.URL, MaxInflight: -1}, ErrConfig},
		{Config{URL: ok.URL, Viewers: -1}, ErrConfig},
	} {
		_, err := Run(context.Background(), tc.cfg)
		if !errors.Is(err, tc.want) {
			t.Errorf("%+v: error %v, want %v", tc.cfg, err, tc.want)
		}
	}
}

// closedAddr is a local address nothing listens on.
func closedAddr(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}
