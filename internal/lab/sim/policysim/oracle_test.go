package policysim

import (
	"math"
	"testing"

	"github.com/strata-media/strata/internal/lab/sim/des"
)

// TestOnlineOracle: the law-known online cache misses every first request
// and holds the segments of highest probability per byte among those
// requested, evicting only what is worth less per byte.
func TestOnlineOracle(t *testing.T) {
	tr := &Trace{Cat: &des.Catalog{Keys: []string{"a", "b", "c", "d"}, Sizes: []int64{1, 1, 1, 2}},
		Reqs: []int32{2, 0, 2, 1, 0, 1, 2, 3, 0}}
	prob := []float64{0.5, 0.3, 0.15, 0.05}
	sc := Scale{WarmRequests: 0, WarmShare: 0}
	// 2 held, 0 held; 2 hit; 1 evicts 2; 0 hit; 1 hit; 2 stays out (less
	// per byte than both held); 3 stays out (too large for what it is
	// worth); 0 hit.
	if got, want := onlineOracle(tr, sc, 2, prob), 4.0/9; math.Abs(got-want) > 1e-12 {
		t.Errorf("hit ratio %.4f, want %.4f", got, want)
	}
	// With room for everything, every repeat is a hit, no first request.
	if got, want := onlineOracle(tr, sc, 10, prob), 5.0/9; math.Abs(got-want) > 1e-12 {
		t.Errorf("unbounded: hit ratio %.4f, want %.4f", got, want)
	}
	// Warm-up requests are not counted.
	sc.WarmRequests = 3
	if got, want := onlineOracle(tr, sc, 2, prob), 3.0/6; math.Abs(got-want) > 1e-12 {
		t.Errorf("after 3 warm-up requests: hit ratio %.4f, want %.4f", got, want)
	}
}

// TestBingeLaw: binge's law is a probability distribution, 70%
// flashstream's and 30% sessions' over uniformly drawn titles.
func TestBingeLaw(t *testing.T) {
	sc := scales["small"]
	tr, err := makeTrace("binge", sc, 1)
	if err != nil {
		t.Fatal(err)
	}
	p, ok := trueProbs(tr, sc)
	fs, _ := lawProbs(tr, sc, 0.8, false)
	if !ok {
		t.Fatal("binge: no law")
	}
	var sum float64
	for i := range p {
		sum += p[i]
		if p[i] < 0.7*fs[i]-1e-15 {
			t.Fatalf("segment %d: %.3g below 70%% of flashstream's %.3g", i, p[i], fs[i])
		}
	}
	if math.Abs(sum-1) > 1e-9 {
		t.Errorf("binge law sums to %.12f", sum)
	}
}
