package tier

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// TestSketchBounds checks the count-min sketch against exact counts: an
// estimate never falls below the true count (capped at 15) between
// halvings, and halving halves what it held.
func TestSketchBounds(t *testing.T) {
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 1))
	s := newSketch(64, 1<<30)
	exact := map[string]int{}
	for range 2000 {
		k := fmt.Sprint(r.IntN(300))
		s.add(k)
		exact[k]++
	}
	before := map[string]uint8{}
	for k, n := range exact {
		e := s.estimate(k)
		if int(e) < min(n, sketchMax) {
			t.Fatalf("estimate of %q is %d, true count %d", k, e, n)
		}
		before[k] = e
	}
	s.halve()
	for k, e := range before {
		if got := s.estimate(k); got != e/2 {
			t.Fatalf("after halving %q estimates %d, was %d", k, got, e)
		}
	}
}
