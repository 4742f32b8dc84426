package httpapi

import (
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// TestRouteMetricsCachedSeries: the series kept per (route, code) count
// into the vectors that /metrics collects, each request once.
func TestRouteMetricsCachedSeries(t *testing.T) {
	m := newRouteMetrics()
	for range 3 {
		m.observe("GET /a", 200, time.Millisecond)
	}
	m.observe("GET /a", 404, time.Millisecond)
	m.observe("", 0, time.Millisecond)
	reg := prometheus.NewRegistry()
	reg.MustRegister(m)
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	histograms := 0
	for _, mf := range mfs {
		for _, mt := range mf.GetMetric() {
			switch mf.GetName() {
			case "strata_http_requests_total":
				k := ""
				for _, l := range mt.GetLabel() {
					k += l.GetName() + "=" + l.GetValue() + " "
				}
				got[k] = mt.GetCounter().GetValue()
			case "strata_http_request_duration_seconds":
				histograms++
			}
		}
	}
	want := map[string]float64{"code=200 route=GET /a ": 3, "code=404 route=GET /a ": 1, "code=200 route=unmatched ": 1}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: %v requests, want %v (all: %v)", k, got[k], v, got)
		}
	}
	if len(got) != len(want) || histograms != 2 {
		t.Errorf("%d request series, %d duration series; want %d and 2", len(got), histograms, len(want))
	}
}
