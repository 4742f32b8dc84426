package plot

import (
	"math"
	"slices"
	"strings"
	"testing"
)

// labels returns the labels of the labeled ticks of a.
func labels(a axis) []string {
	var ls []string
	for _, t := range a.ticks {
		if t.label != "" {
			ls = append(ls, t.label)
		}
	}
	return ls
}

func TestBuildAxis(t *testing.T) {
	cases := []struct {
		spec   axisSpec
		lo, hi float64
		labels string
	}{
		{axisSpec{lo: 0, hi: 1, length: 300, vertical: true}, 0, 1, "0 0.2 0.4 0.6 0.8 1"},
		{axisSpec{lo: 0.41, hi: 0.95, length: 300, vertical: true}, 0.4, 1, "0.4 0.5 0.6 0.7 0.8 0.9 1"},
		{axisSpec{lo: 0, hi: 2000, length: 560}, 0, 2000, "0 500 1000 1500 2000"},
		{axisSpec{lo: 0, hi: 1.46e6, length: 560}, 0, 1.5e6, "0 0.5M 1M 1.5M"},
		{axisSpec{lo: 3, hi: 97, length: 100}, 0, 100, "0 50 100"},
		{axisSpec{lo: 3, hi: 97, length: 100, vertical: true}, 0, 100, "0 50 100"},
		{axisSpec{lo: -38.5, hi: 21, length: 285, vertical: true}, -40, 30, "-40 -30 -20 -10 0 10 20 30"},
		{axisSpec{lo: 1e-5, hi: 5e-5, length: 560}, 1e-5, 5e-5, "1e-5 2e-5 3e-5 4e-5 5e-5"},
		{axisSpec{lo: 0, hi: 12e9, length: 560}, 0, 12e9, "0 2G 4G 6G 8G 10G 12G"},
		// Fixed ends stay; ticks fall inside them.
		{axisSpec{lo: 0.05, hi: 0.93, fixedLo: true, fixedHi: true, length: 300, vertical: true}, 0.05, 0.93, "0.2 0.4 0.6 0.8"},
		// Log axes: 1-2-5 ends, decades with 2 and 5 where they fit, ...
		{axisSpec{lo: 0.21, hi: 80, log: true, length: 285, vertical: true}, 0.2, 100, "0.2 0.5 1 2 5 10 20 50 100"},
		{axisSpec{lo: 4096, hi: 4194304, log: true, length: 300}, 2000, 5e6, "10k 100k 1M"},
		// ... every digit within about a decade ...
		{axisSpec{lo: 3, hi: 7, log: true, length: 285, vertical: true}, 2, 10, "2 3 4 5 6 7 8 9 10"},
		{axisSpec{lo: 20, hi: 80, fixedLo: true, fixedHi: true, log: true, length: 285, vertical: true}, 20, 80, "20 30 40 50 60 70 80"},
		// ... and every n-th decade on long ranges.
		{axisSpec{lo: 1, hi: 1e12, log: true, length: 300}, 1, 1e12, "1 100 10k 1M 100M 10G 1T"},
		{axisSpec{lo: 1e-300, hi: 1e300, log: true, length: 200}, 1e-300, 1e300, "1e-200 1 1e200"},
	}
	for _, c := range cases {
		a := buildAxis(c.spec)
		got := strings.Join(labels(a), " ")
		if got != c.labels || !near(a.lo, c.lo) || !near(a.hi, c.hi) {
			t.Errorf("%+v:\n got [%g, %g] %s\nwant [%g, %g] %s", c.spec, a.lo, a.hi, got, c.lo, c.hi, c.labels)
		}
	}
}

func near(a, b float64) bool {
	return math.Abs(a-b) <= 1e-9*max(math.Abs(a), math.Abs(b))
}

// TestTicksProperties checks, over many ranges and lengths, that ticks are
// increasing, inside the range, labeled without overlap, and that a free
// range covers the data.
func TestTicksProperties(t *testing.T) {
	for _, log := range []bool{false, true} {
		for _, length := range []float64{60, 200, 555} {
			for e := -12.0; e <= 12; e += 0.7 {
				for _, w := range []float64{1e-6, 0.01, 0.9, 3, 40} {
					lo := math.Pow(10, e)
					s := axisSpec{lo: lo, hi: lo * (1 + w), log: log, length: length, vertical: e > 0}
					if !log {
						s.lo = -lo / 3
					}
					checkAxis(t, s, buildAxis(s))
				}
			}
		}
	}
}

func checkAxis(t *testing.T, s axisSpec, a axis) {
	t.Helper()
	if !(a.lo < a.hi) || below(s.lo, a.lo, s) || below(a.hi, s.hi, s) {
		t.Fatalf("%+v: range [%g, %g] misses the data", s, a.lo, a.hi)
	}
	if len(labels(a)) < 2 && !s.log {
		t.Errorf("%+v: labels %q", s, labels(a))
	}
	if !labelsFit(&a, s) && len(labels(a)) > 2 {
		t.Errorf("%+v: labels overlap: %q", s, labels(a))
	}
	if !slices.IsSortedFunc(a.ticks, func(x, y tick) int { return compareFloat(x.v, y.v) }) {
		t.Errorf("%+v: ticks not sorted", s)
	}
	for _, tk := range a.ticks {
		if below(tk.v, a.lo, s) || below(a.hi, tk.v, s) {
			t.Errorf("%+v: tick %g outside [%g, %g]", s, tk.v, a.lo, a.hi)
		}
	}
}

// below reports whether x is below y by more than rounding error.
func below(x, y float64, s axisSpec) bool {
	if s.log {
		return x < y*(1-1e-9)
	}
	return x < y-1e-9*(s.hi-s.lo)
}

func compareFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func TestNiceStep(t *testing.T) {
	cases := map[float64]float64{0.013: 0.02, 0.3: 0.5, 1: 1, 1.01: 2, 7: 10, 2000: 2000, 2001: 5000, 1e300: 1e300}
	for in, want := range cases {
		if got := niceStep(in); !near(got, want) {
			t.Errorf("niceStep(%g) = %g, want %g", in, got, want)
		}
	}
	floors := map[float64]float64{4096: 2000, 0.21: 0.2, 1: 1, 9.9: 5, 0.0123: 0.01}
	for in, want := range floors {
		if got := niceFloor(in); !near(got, want) {
			t.Errorf("niceFloor(%g) = %g, want %g", in, got, want)
		}
	}
}
