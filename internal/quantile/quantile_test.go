package quantile

import (
	"testing"
	"time"
)

func TestNearestRank(t *testing.T) {
	var ms []int // 1..1000 ms
	for i := 1; i <= 1000; i++ {
		ms = append(ms, i)
	}
	for _, c := range []struct {
		q    float64
		want int
	}{{0, 1}, {-1, 1}, {0.001, 1}, {0.0011, 2}, {0.5, 500}, {0.9, 900}, {0.99, 990}, {0.999, 999}, {1, 1000}, {2, 1000}} {
		if got := NearestRank(ms, c.q); got != c.want {
			t.Errorf("q %v: %d, want %d", c.q, got, c.want)
		}
	}
	// Float error in q*n must not move an exact rank: 99.9/100*1000 is
	// 999.0000000000001 in float64, rank 999.
	p := 99.9
	if got := NearestRank(ms, p/100); got != 999 {
		t.Errorf("99.9/100 of 1000: %d, want 999", got)
	}
	if got := NearestRank([]time.Duration{7}, 0.999); got != 7 {
		t.Errorf("one sample: %v", got)
	}
	if got := NearestRank([]time.Duration(nil), 0.5); got != 0 {
		t.Errorf("no samples: %v", got)
	}
}

func TestOfLeavesInput(t *testing.T) {
	in := []int{3, 1, 2}
	if got := Of(in, 0.5); got != 2 {
		t.Errorf("median of 3 1 2: %d", got)
	}
	if in[0] != 3 || in[1] != 1 || in[2] != 2 {
		t.Errorf("input reordered: %v", in)
	}
}

func TestRank(t *testing.T) {
	for _, c := range []struct {
		n    int64
		q    float64
		want int64
	}{{1, 0.5, 1}, {10, 0, 1}, {10, 0.1, 1}, {10, 0.11, 2}, {10, 1, 10}, {10, 1.5, 10}, {1000, 99.9 / 100, 999}, {10000, 0.9999, 9999}} {
		if got := Rank(c.n, c.q); got != c.want {
			t.Errorf("Rank(%d, %v) = %d, want %d", c.n, c.q, got, c.want)
		}
	}
}
