package engine

import (
	"math"
	"testing"
	"time"
)

// TestQuantileSince: the quantile is of the events of the window only
// (the counts since its start), taken as its bucket's lower boundary,
// and 0 with too few events to tell.
func TestQuantileSince(t *testing.T) {
	buckets := []float64{math.Inf(-1), 0, 0.001, 0.010, 0.100, math.Inf(1)}
	then := []uint64{0, 1000, 50, 10, 0}
	cases := []struct {
		name string
		now  []uint64
		min  uint64
		want time.Duration
	}{
		{"none since", then, 1, 0},
		{"fast", []uint64{0, 1900, 150, 10, 0}, 1, 0},
		{"more than a tenth past 10 ms", []uint64{0, 1000, 900, 160, 0}, 1, 10 * time.Millisecond},
		{"most past 100 ms", []uint64{0, 1000, 60, 20, 500}, 1, 100 * time.Millisecond},
		{"too few", []uint64{0, 1000, 50, 10, 5}, 10, 0},
		{"fifteen past 10 ms of a hundred", []uint64{0, 1000, 135, 25, 0}, 100, 10 * time.Millisecond},
	}
	for _, c := range cases {
		if got := quantileSince(c.now, then, buckets, 0.9, c.min); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}

// TestSchedLagReads: the runtime has the histogram, and an idle window
// reads 0.
func TestSchedLagReads(t *testing.T) {
	s := newSchedLag()
	if s.cur == nil || len(s.buckets) != len(s.cur)+1 {
		t.Fatalf("no %s histogram: %d counts, %d buckets", schedLagMetric, len(s.cur), len(s.buckets))
	}
	s.tick(time.Now().Add(schedLagWindow))
	_ = s.lag() // whatever the machine's load, it must not panic
}
