package server

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/strata-media/strata/internal/httpapi/httpapitest"
)

// TestHistorySamplesAndBenchReports: samples are kept oldest first up to
// an hour, since= returns the newer ones, and bench reports add only the
// growth of each run's counts (a stale or repeated report adds nothing).
func TestHistorySamplesAndBenchReports(t *testing.T) {
	ts, _, eng := testServer(t)
	h := NewHistory(eng)
	t0 := time.UnixMilli(1_000_000)
	for i := range HistoryLength + 3 {
		h.Sample(t0.Add(time.Duration(i) * HistoryInterval))
	}
	all := h.Samples(0)
	if len(all) != HistoryLength || all[0].T != t0.Add(3*HistoryInterval).UnixMilli() ||
		all[len(all)-1].T != t0.Add(time.Duration(HistoryLength+2)*HistoryInterval).UnixMilli() {
		t.Fatalf("%d samples from %d to %d", len(all), all[0].T, all[len(all)-1].T)
	}
	if got := h.Samples(all[len(all)-3].T); len(got) != 2 {
		t.Fatalf("since the third last: %d samples", len(got))
	}
	now := t0
	h.Report(BenchReport{Run: "a", Requests: 10, Misses: 1}, now)
	h.Report(BenchReport{Run: "a", Requests: 30, Misses: 2}, now)
	h.Report(BenchReport{Run: "a", Requests: 20, Misses: 2}, now) // stale
	h.Report(BenchReport{Run: "b", Requests: 5}, now)
	if c := h.current(now); c.BenchRequests != 35 || c.BenchMisses != 2 || c.BenchReporting != 2 {
		t.Fatalf("bench totals %d requests %d misses %d runs", c.BenchRequests, c.BenchMisses, c.BenchReporting)
	}
	for i := range 2 * maxBenchRuns {
		h.Report(BenchReport{Run: strings.Repeat("x", i+1), Requests: 1}, now.Add(time.Duration(i)*time.Millisecond))
	}
	if n := len(h.mu.bench); n != maxBenchRuns {
		t.Fatalf("%d runs remembered", n)
	}
	if c := h.current(now); c.BenchRequests != 35+2*maxBenchRuns {
		t.Fatalf("forgotten runs left the totals: %d", c.BenchRequests)
	}

	// Over HTTP: the node's own history (one sample per GET here).
	resp, body := httpapitest.Do(t, "GET", ts.URL+"/stats/history", nil)
	var hr historyResponse
	if err := json.Unmarshal(body, &hr); err != nil || resp.StatusCode != 200 || hr.IntervalSeconds != HistoryInterval.Seconds() {
		t.Fatalf("/stats/history: %d %v %s", resp.StatusCode, err, body)
	}
	if resp, _ := httpapitest.Do(t, "GET", ts.URL+"/stats/history?since=yesterday", nil); resp.StatusCode != 400 {
		t.Fatalf("bad since: %d", resp.StatusCode)
	}
}

// TestBenchReportEndpoint: POST /admin/bench needs the token and a small
// well-formed report.
func TestBenchReportEndpoint(t *testing.T) {
	ts, _, _ := testServer(t)
	post := func(body string, token string) int {
		var hdr []string
		if token != "" {
			hdr = httpapitest.Bearer(token)
		}
		resp, _ := httpapitest.Do(t, "POST", ts.URL+"/admin/bench", strings.NewReader(body), hdr...)
		return resp.StatusCode
	}
	for _, c := range []struct {
		body, token string
		want        int
	}{
		{`{"run":"r1","requests":10,"misses":1}`, "", 401},
		{`{"run":"r1","requests":10,"misses":1}`, "sekrit", 204},
		{`{"run":"","requests":10}`, "sekrit", 400},
		{`{"run":"r1","requests":1,"misses":2}`, "sekrit", 400},
		{`{"run":"r1","requests":1,"extra":2}`, "sekrit", 400},
		{`{"run":"` + strings.Repeat("r", 2000) + `"}`, "sekrit", 400},
		{`not json`, "sekrit", 400},
	} {
		if got := post(c.body, c.token); got != c.want {
			t.Errorf("%.40s with token %q: %d, want %d", c.body, c.token, got, c.want)
		}
	}
	_, body := httpapitest.Do(t, "GET", ts.URL+"/stats/history", nil)
	var hr historyResponse
	json.Unmarshal(body, &hr)
	if hr.Current.BenchRequests != 10 || hr.Current.BenchMisses != 1 {
		t.Fatalf("after one report: %+v", hr.Current)
	}
}
