package tier

import (
	"math"
	"testing"
)

// TestPerSegment checks the capture-recapture inverse against its
// definition: D/R = (1 - e^-x)/x.
func TestPerSegment(t *testing.T) {
	for _, x := range []float64{0.01, 0.1, 0.5, 1, 2, 5, 10, 30} {
		q := (1 - math.Exp(-x)) / x
		if got := perSegment(q); math.Abs(got-x) > 1e-3*max(1, x) {
			t.Errorf("perSegment(%.4f) = %.4f, want %.4f", q, got, x)
		}
	}
	if perSegment(1) != 0 || perSegment(1.5) != 0 {
		t.Error("no repeat must give 0 requests per segment")
	}
}

// TestGroupCapture: three requests that fell on three segments of a title
// say less about each segment than three that fell on one; requests per
// distinct segment (GroupRatio) cannot tell the first from a title whose
// segments were each requested once by a viewer reading it through; the
// floor keeps such a title above zero.
func TestGroupCapture(t *testing.T) {
	for _, capture := range []bool{false, true} {
		g := newGroupSketch(256)
		g.capture = capture
		seen := map[string]bool{}
		req := func(key string) {
			g.add(hashKey(g.group(key)), !seen[key])
			seen[key] = true
		}
		for _, k := range []string{"v/a/r/1", "v/a/r/2", "v/a/r/3"} {
			req(k)
		}
		for range 3 {
			req("v/b/r/1")
		}
		for i := range 40 { // one viewer reads title c through
			req("v/c/r/" + string(rune('A'+i)))
		}
		a, b, c := g.rate("v/a/r/9"), g.rate("v/b/r/9"), g.rate("v/c/r/9")
		t.Logf("capture %v: a %.3f b %.3f c %.3f", capture, a, b, c)
		if b <= a {
			t.Errorf("capture %v: three requests on one segment (%.3f) not above three on three (%.3f)", capture, b, a)
		}
		if capture && !(a < 1 && a > 0 && c > a) {
			t.Errorf("capture: a %.3f (want in (0, 1)), c %.3f (want above a: floored at R over the largest group)", a, c)
		}
		if !capture && (a != 1 || c != 1) {
			t.Errorf("ratio: a %.3f c %.3f, want 1 and 1", a, c)
		}
	}
}
