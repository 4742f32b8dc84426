package loadgen

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

func TestSearchBracketsCapacity(t *testing.T) {
	for _, tc := range []struct{ start, capacity float64 }{
		{20, 137}, {20, 20}, {200, 37}, {20, 0.5}, {1, 1000},
	} {
		var rates []float64
		res, err := search(context.Background(), tc.start, SearchOptions{Tolerance: 0.05, MinStep: 1, MaxTrials: 40},
			func(_ context.Context, r float64, _ bool) (Trial, error) {
				rates = append(rates, r)
				return Trial{RateRPS: r, Clean: r <= tc.capacity, Requests: 1}, nil
			})
		if err != nil || !res.Converged {
			t.Fatalf("%+v: %v, converged %v", tc, err, res.Converged)
		}
		if res.MaxRPS > tc.capacity || res.FailRPS <= tc.capacity ||
			res.FailRPS-res.MaxRPS > max(0.05*res.MaxRPS, 1) {
			t.Errorf("%+v: bracket [%v, %v] after rates %v", tc, res.MaxRPS, res.FailRPS, rates)
		}
		if len(res.Trials) != len(rates) {
			t.Errorf("%d trials recorded of %d", len(res.Trials), len(rates))
		}
	}
}

func TestSearchStopsOnError(t *testing.T) {
	n := 0
	res, err := search(context.Background(), 10, SearchOptions{Tolerance: 0.05, MinStep: 1, MaxTrials: 40},
		func(ctx context.Context, r float64, _ bool) (Trial, error) {
			if n++; n == 3 {
				return Trial{}, context.Canceled
			}
			return Trial{RateRPS: r, Clean: true, Requests: 1}, nil
		})
	if !errors.Is(err, context.Canceled) || len(res.Trials) != 2 || res.MaxRPS != 20 {
		t.Fatalf("err %v, result %+v", err, res)
	}
}

// TestSearchConfirms: a server that holds 137 req/s for a short trial
// but only 120 for a long run; the confirming runs step down from the
// rate the trials found until one holds, and the answer is that rate.
func TestSearchConfirms(t *testing.T) {
	var confirms []float64
	res, err := search(context.Background(), 20, SearchOptions{Tolerance: 0.05, MinStep: 1, MaxTrials: 40, Confirm: time.Minute},
		func(_ context.Context, r float64, confirm bool) (Trial, error) {
			capacity := 137.0
			if confirm {
				confirms = append(confirms, r)
				capacity = 120
			}
			return Trial{RateRPS: r, Clean: r <= capacity, Requests: 1, Confirm: confirm}, nil
		})
	if err != nil || !res.Converged || !res.Confirmed {
		t.Fatalf("%v, converged %v, confirmed %v", err, res.Converged, res.Confirmed)
	}
	if res.MaxRPS > 120 || res.MaxRPS < 120*0.95*0.95 || len(confirms) < 2 || confirms[0] <= 120 {
		t.Errorf("max %v after confirming runs at %v", res.MaxRPS, confirms)
	}
	if last := res.Trials[len(res.Trials)-1]; !last.Confirm || !last.Clean || last.RateRPS != res.MaxRPS {
		t.Errorf("last trial %+v, max %v", last, res.MaxRPS)
	}
	// A server that holds the short trials' rate: one confirming run.
	confirms = nil
	res, _ = search(context.Background(), 20, SearchOptions{Tolerance: 0.05, MinStep: 1, MaxTrials: 40, Confirm: time.Minute},
		func(_ context.Context, r float64, confirm bool) (Trial, error) {
			if confirm {
				confirms = append(confirms, r)
			}
			return Trial{RateRPS: r, Clean: r <= 137, Requests: 1}, nil
		})
	if len(confirms) != 1 || !res.Confirmed || res.MaxRPS != confirms[0] {
		t.Errorf("confirms %v, result %+v", confirms, res)
	}
}

// TestFindMaxFindsCapacity runs a real search against a server of about
// 100 requests/s: 2 handlers of 20 ms each. Below capacity the fixed-rate
// load never queues; above it the queue grows until requests wait past
// their 0.2 s deadline. With short trials the edge it finds lies somewhat
// above the capacity, so the bounds are wide: this checks the search, not
// the server.
func TestFindMaxFindsCapacity(t *testing.T) {
	if testing.Short() {
		t.Skip("a few seconds of trials")
	}
	srv := newFakeServer(t, []titleSpec{{id: "a", duration: 0.2}, {id: "b", duration: 0.2}},
		fakeOptions{capacity: 2, service: 20 * time.Millisecond})
	var seen []Trial
	res, err := FindMax(context.Background(), Config{URL: srv.URL, Rate: 40, Duration: 400 * time.Millisecond},
		SearchOptions{Tolerance: 0.2, OnTrial: func(tr Trial) { seen = append(seen, tr) }})
	if err != nil {
		t.Fatal(err)
	}
	for _, tr := range res.Trials {
		t.Logf("trial %.1f req/s: clean %v, %d/%d misses, p99 %.1f ms", tr.RateRPS, tr.Clean, tr.Misses, tr.Requests, tr.P99Ms)
	}
	if !res.Converged || res.MaxRPS < 40 || res.MaxRPS > 300 || len(seen) != len(res.Trials) {
		t.Fatalf("max %v req/s (converged %v) for a server of about 100 req/s", res.MaxRPS, res.Converged)
	}
	if res.Trials[0].RateRPS != 40 || res.Trials[1].RateRPS != 80 {
		t.Fatalf("search did not start at 40 and double: %+v", res.Trials[:2])
	}
}

func TestFindMaxRejects(t *testing.T) {
	_, err := FindMax(context.Background(), Config{URL: "http://127.0.0.1:1"}, SearchOptions{Tolerance: -1})
	if !errors.Is(err, ErrConfig) {
		t.Fatalf("negative tolerance: %v", err)
	}
}

// TestFindMaxFreshSeeds: with FreshSeeds each trial draws its own
// sequence (seed, seed+1, ...), and the session's seed is restored.
func TestFindMaxFreshSeeds(t *testing.T) {
	srv := newFakeServer(t, []titleSpec{{id: "a", duration: 1}}, fakeOptions{})
	res, err := FindMax(context.Background(), Config{URL: srv.URL, Rate: 20, Duration: 100 * time.Millisecond, Seed: 9},
		SearchOptions{MaxTrials: 3, FreshSeeds: true})
	if err != nil {
		t.Fatal(err)
	}
	for i, tr := range res.Trials {
		if tr.Report.Seed != 9+uint64(i) {
			t.Errorf("trial %d ran seed %d, want %d", i, tr.Report.Seed, 9+i)
		}
	}
	if len(res.Trials) != 3 {
		t.Fatalf("%d trials, want 3", len(res.Trials))
	}
}

// A trial's line says what its errors were: near the maximum a few dozen
// of them decide the search.
func TestTrialSummaryNamesErrorKinds(t *testing.T) {
	tr := Trial{RateRPS: 100, Requests: 1000, Errors: 3, Misses: 3, ErrorKinds: map[string]int{"timeout": 1, "status 503": 2}}
	if got, want := tr.Summary(), "MISSES, 3 of 1000 missed (3 errors: status 503 2, timeout 1), p99 0.0 ms, 0.0 req/s done"; got != want {
		t.Fatalf("summary %q, want %q", got, want)
	}
	tr = Trial{Requests: 10, Clean: true}
	if got := tr.Summary(); !strings.Contains(got, "(0 errors)") {
		t.Fatalf("clean summary %q", got)
	}
}
