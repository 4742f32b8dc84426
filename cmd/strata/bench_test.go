package main

import (
	"bytes"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/strata-media/strata/internal/node/app"
	"github.com/strata-media/strata/internal/storage/origin"
)

// benchServer serves a two-title catalog; title "slow" answers after
// 300 ms, past its 0.2 s segment duration.
func benchServer(t *testing.T) *httptest.Server {
	t.Helper()
	mux := http.NewServeMux()
	mux.HandleFunc("GET /videos", func(w http.ResponseWriter, r *http.Request) {
		rs := []origin.Rendition{{ID: "r", Segments: 3, StartNumber: 1}}
		json.NewEncoder(w).Encode(map[string]any{"titles": []origin.Title{
			{ID: "fast", SegmentDuration: 5, Renditions: rs},
			{ID: "slow", SegmentDuration: 0.2, Renditions: rs},
		}})
	})
	mux.HandleFunc("GET /videos/{title}/{rendition}/{seg}", func(w http.ResponseWriter, r *http.Request) {
		if r.PathValue("title") == "slow" {
			time.Sleep(300 * time.Millisecond)
		}
		w.Write(make([]byte, 500))
	})
	mux.HandleFunc("GET /stats", func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(`{"ram":{"hits":1},"ssd":{"hits":2},"origin":{"reads":3}}`))
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

func TestBenchJSON(t *testing.T) {
	srv := benchServer(t)
	var out, errb bytes.Buffer
	code := run([]string{"bench", srv.URL, "--rate", "50", "--duration", "300ms", "--zipf-s", "0", "--json"}, &out, &errb)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	var rep map[string]any
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatalf("%v in %s", err, out.String())
	}
	for _, k := range []string{"requests", "completed", "errors", "misses", "miss_ratio", "throughput_rps", "mb_per_s",
		"p50_ms", "p90_ms", "p99_ms", "p999_ms", "max_ms", "duration_s", "latency_method", "server", "titles"} {
		if _, ok := rep[k]; !ok {
			t.Errorf("JSON report has no %q: %s", k, out.String())
		}
	}
	if rep["requests"] != 15.0 || rep["popularity"] != "s=0" {
		t.Errorf("requests %v, popularity %v", rep["requests"], rep["popularity"])
	}
	if server, _ := rep["server"].(map[string]any); server["ram.hits"] != 0.0 {
		t.Errorf("server deltas %v", rep["server"])
	}
}

func TestBenchTable(t *testing.T) {
	srv := benchServer(t)
	var out, errb bytes.Buffer
	code := run([]string{"bench", "--rate", "20", "--duration", "1200ms", srv.URL}, &out, &errb)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	for _, want := range []string{"24 due", "misses", "p99", "theta=0.2 (s=0.8)", "server", "top titles  fast"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, out.String())
		}
	}
	if !strings.Contains(errb.String(), "bench: ") || !strings.Contains(errb.String(), "in flight") {
		t.Errorf("no progress on stderr: %q", errb.String())
	}
}

func TestBenchFindMaxJSON(t *testing.T) {
	srv := benchServer(t)
	var out, errb bytes.Buffer
	// Every rate misses (title "slow"): the search halves down to 0.
	code := run([]string{"bench", srv.URL, "--find-max", "--rate", "4", "--duration", "250ms", "--zipf-s", "0", "--json"}, &out, &errb)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	var res struct {
		MaxRPS    *float64         `json:"max_rps"`
		Converged bool             `json:"converged"`
		Trials    []map[string]any `json:"trials"`
	}
	if err := json.Unmarshal(out.Bytes(), &res); err != nil || res.MaxRPS == nil || len(res.Trials) == 0 {
		t.Fatalf("%v in %s", err, out.String())
	}
	if !res.Converged || res.Trials[0]["rate_rps"] != 4.0 || !strings.Contains(errb.String(), "find-max: trial 1 at 4.0 req/s") {
		t.Fatalf("search %s\nstderr %s", out.String(), errb.String())
	}
}

func TestBenchErrors(t *testing.T) {
	srv := benchServer(t)
	empty := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(`{"titles": []}`))
	}))
	defer empty.Close()
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{nil, 2, "URL is required"},
		{[]string{srv.URL, "extra"}, 2, "unexpected argument"},
		{[]string{srv.URL, "--theta", "0.2", "--zipf-s", "1"}, 2, "not both"},
		{[]string{srv.URL, "--rate", "0"}, 2, "--rate"},
		{[]string{srv.URL, "--theta", "1.5"}, 2, "theta"},
		{[]string{srv.URL, "--max-inflight", "0"}, 2, "--max-inflight"},
		{[]string{srv.URL, "--bogus"}, 2, "bogus"},
		{[]string{srv.URL, "--confirm", "30s"}, 2, "--confirm"},
		{[]string{srv.URL, "--find-max", "--confirm", "-1s"}, 2, "--confirm"},
		{[]string{"ftp://x"}, 1, "bad server URL"},
		{[]string{"http://" + deadAddr(t)}, 1, "unreachable"},
		{[]string{empty.URL}, 1, "no segments"},
	} {
		var out, errb bytes.Buffer
		code := run(append([]string{"bench"}, tc.args...), &out, &errb)
		if code != tc.code || !strings.Contains(errb.String(), tc.want) {
			t.Errorf("bench %q: exit %d (want %d), stderr %q (want %q)", tc.args, code, tc.code, errb.String(), tc.want)
		}
	}
}

// deadAddr is a local address nothing listens on.
func deadAddr(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// strata bench against an edge on "/" in front of a real origin node: the
// edge answers /videos itself (no titles of its own), so the bench says
// where the titles are; with --catalog naming the origin's catalog it
// loads the edge, every request answered by the edge from its upstream's
// titles.
func TestBenchEdgeOnRoot(t *testing.T) {
	data := t.TempDir()
	writeLibrary(t, data)
	ocfg := smallConfig(data)
	ocfg.Images.Disabled = true
	originURL, stopOrigin := startServe(t, ocfg, app.Options{})
	defer stopOrigin()
	ecfg, err := loadServeConfig([]string{"--data", t.TempDir(), "--listen", "127.0.0.1:0", "--upstream", "/=" + originURL + "/",
		"--ram", "4MiB", "--flash-size", "16MiB", "--block-size", "1MiB", "--files-flash-size", "0", "--log-level", "warn"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	edgeURL, stopEdge := startServe(t, ecfg, app.Options{})
	defer stopEdge()

	var out, errb bytes.Buffer
	if code := run([]string{"bench", edgeURL, "--rate", "50", "--duration", "300ms"}, &out, &errb); code != 1 ||
		!strings.Contains(errb.String(), "no segments") || !strings.Contains(errb.String(), "--catalog") {
		t.Fatalf("bench of an edge on / without --catalog: exit %d, stderr %q", code, errb.String())
	}
	out.Reset()
	errb.Reset()
	code := run([]string{"bench", edgeURL, "--catalog", originURL + "/videos", "--rate", "50", "--duration", "400ms", "--zipf-s", "0", "--json"}, &out, &errb)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	var rep struct {
		Requests, Completed, Errors float64
		Titles                      float64 `json:"catalog_titles"`
	}
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatalf("%v in %s", err, out.String())
	}
	if rep.Requests != 20 || rep.Completed != 20 || rep.Errors != 0 || rep.Titles != float64(testLibrary.Titles) {
		t.Fatalf("report %+v: %s", rep, out.String())
	}
	if st := getStats(t, edgeURL)["edge"]; st["hits"]+st["misses"] < 20 || st["upstream_requests"] == 0 {
		t.Fatalf("the edge did not answer the bench's requests: edge stats %v", st)
	}
	for _, flag := range [][]string{{"--catalog", "ftp://x/videos"}, {"--catalog", "/videos"}} {
		errb.Reset()
		if code := run(append([]string{"bench", edgeURL}, flag...), &out, &errb); code != 2 || !strings.Contains(errb.String(), "--catalog") {
			t.Errorf("bench %v: exit %d, stderr %q", flag, code, errb.String())
		}
	}
}
