package streamsim

import (
	"testing"
	"time"
)

func TestHistogramQuantiles(t *testing.T) {
	var h histogram
	for i := 1; i <= 10000; i++ {
		h.Add(time.Duration(i) * time.Microsecond)
	}
	for _, c := range []struct {
		q    float64
		want time.Duration
	}{{0.5, 5 * time.Millisecond}, {0.999, 9990 * time.Microsecond}, {1, 10 * time.Millisecond}} {
		got := h.Quantile(c.q)
		if got < c.want*99/100 || got > c.want*101/100 {
			t.Errorf("q%v = %v, want %v within 1%%", c.q, got, c.want)
		}
	}
	var empty histogram
	if empty.Quantile(0.5) != 0 {
		t.Fatal("empty histogram has a quantile")
	}
}
