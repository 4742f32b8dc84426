package loadgen

import (
	"errors"
	"fmt"
	"testing"
	"time"
)

func TestPercentileNearestRank(t *testing.T) {
	var lat []time.Duration
	for i := 1000; i >= 1; i-- {
		lat = append(lat, time.Duration(i)*time.Millisecond)
	}
	var rep Report
	fillLatency(&rep, lat)
	if rep.P50Ms != 500 || rep.P90Ms != 900 || rep.P99Ms != 990 || rep.P999Ms != 999 || rep.MaxMs != 1000 {
		t.Fatalf("percentiles %+v", rep)
	}
	fillLatency(&rep, []time.Duration{7 * time.Millisecond})
	if rep.P50Ms != 7 || rep.P999Ms != 7 {
		t.Fatalf("one sample: %+v", rep)
	}
	fillLatency(&rep, nil)
	if rep.MaxMs != 0 {
		t.Fatalf("no samples: %+v", rep)
	}
}

func TestRecorderClassifies(t *testing.T) {
	p := &plan{targets: []target{{id: "a"}, {id: "b"}}}
	r := newRecorder(p)
	d := time.Second
	for _, res := range []result{
		{rank: 0, measured: true, latency: d / 2, deadline: d, bytes: 10},
		{rank: 0, measured: true, latency: 2 * d, deadline: d, bytes: 10},
		{rank: 1, measured: true, deadline: d, err: statusError(404)},
		{rank: 1, measured: true, deadline: d, err: errDropped},
		{rank: 1, measured: true, deadline: d, err: fmt.Errorf("get: %w", errors.New("reset"))},
		{rank: 1, measured: false, latency: d / 2, deadline: d},
		{rank: 1, measured: true, aborted: true, deadline: d, err: errors.New("cancelled")},
	} {
		r.add(res)
	}
	rep := r.report(2 * time.Second)
	if rep.Requests != 5 || rep.Completed != 2 || rep.Late != 1 || rep.Errors != 3 || rep.Misses != 4 ||
		rep.MissRatio != 0.8 || rep.ThroughputRPS != 1 || rep.Bytes != 20 {
		t.Fatalf("report %+v", rep)
	}
	want := map[string]int{"status 404": 1, "dropped": 1, "transport": 1}
	if fmt.Sprint(rep.ErrorKinds) != fmt.Sprint(want) {
		t.Fatalf("error kinds %v, want %v", rep.ErrorKinds, want)
	}
	if rep.Titles[0] != (TitleStat{ID: "a", Requests: 2, Misses: 1}) || rep.Titles[1] != (TitleStat{ID: "b", Requests: 3, Errors: 3, Misses: 3}) {
		t.Fatalf("titles %+v", rep.Titles)
	}
}

func TestStatsDelta(t *testing.T) {
	into := map[string]float64{}
	flatten("", map[string]any{"a": map[string]any{"b": 1.0, "s": "x", "t": true}, "l": []any{2.0, map[string]any{"c": 3.0}}, "n": nil}, into)
	if fmt.Sprint(into) != "map[a.b:1 l.0:2 l.1.c:3]" {
		t.Fatalf("flatten: %v", into)
	}
	d := statsDelta(map[string]float64{"a.b": 1, "gone": 5}, map[string]float64{"a.b": 4, "new": 2})
	if fmt.Sprint(d) != "map[a.b:3 new:2]" {
		t.Fatalf("delta %v", d)
	}
	if statsDelta(nil, into) != nil || statsDelta(into, nil) != nil {
		t.Fatal("delta without both snapshots")
	}
}
