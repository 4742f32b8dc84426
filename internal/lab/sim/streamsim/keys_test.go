package streamsim

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/strata-media/strata/internal/workload"
)

// TestDistinctAgainstSampling checks the expected distinct counts against
// drawing from the same Zipf law.
func TestDistinctAgainstSampling(t *testing.T) {
	const keys, fields, s = 20000, 10, 0.99
	d := newDistinct(keys, s, fields)
	z, err := workload.NewZipf(keys, s)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(3, 4))
	seenKeys, seenCells := map[int]bool{}, map[int]bool{}
	for n := 1; n <= 200000; n++ {
		k := z.Draw(rng)
		seenKeys[k] = true
		seenCells[k*fields+rng.IntN(fields)] = true
		if n == 1000 || n == 20000 || n == 200000 {
			for _, c := range []struct {
				what      string
				got, want float64
			}{{"keys", d.Keys(float64(n)), float64(len(seenKeys))}, {"cells", d.Cells(float64(n)), float64(len(seenCells))}} {
				tol := 0.03 // a few standard deviations of one sample
				if n == 1000 {
					tol = 0.07
				}
				if math.Abs(c.got-c.want) > tol*c.want {
					t.Errorf("n=%d: expected %s %.0f, sampled %.0f", n, c.what, c.got, c.want)
				}
			}
		}
	}
}

func TestDistinctBounds(t *testing.T) {
	d := newDistinct(1000, 0.99, 10)
	if d.Keys(0) != 0 || d.Keys(1) != 1 {
		t.Fatalf("D(0), D(1) = %v, %v", d.Keys(0), d.Keys(1))
	}
	if got := d.Cells(1e15); got != 10000 {
		t.Fatalf("cells after very many draws = %v, want all 10000", got)
	}
	for n := 1.0; n < 1e7; n *= 3 {
		if d.Keys(n) > n || d.Keys(n) > 1000 || d.Keys(n*3) < d.Keys(n) {
			t.Fatalf("D(%v) = %v out of bounds", n, d.Keys(n))
		}
	}
}
