package streamsim

import (
	"testing"

	"github.com/strata-media/strata/internal/core/tier"
)

// TestSegCachePolicyWAF runs the segment cache at 90% of the drive under
// LRU, tinylfu and reinsert with blocks of the drive's write
// unit and of 1/32 of it, on the FTL model with the data stream apart
// (MultiData, as TestSegCacheWholeUnits): whole aligned blocks of the
// write unit keep the device's write amplification at 1 whatever the
// policy, reinsertion included; the smaller blocks' WAF is logged.
func TestSegCachePolicyWAF(t *testing.T) {
	if testing.Short() {
		t.Skip("six drive replays")
	}
	d, err := drive(testScale.Dies)
	if err != nil {
		t.Fatal(err)
	}
	for _, div := range []int64{1, 32} {
		for _, p := range []tier.BlockPolicy{tier.BlockLRU, tier.BlockTinyLFU, tier.BlockReinsert} {
			sc, err := segCacheScenario(testScale, segCacheOptions{Policy: p, Block: d.UnitSize() / div, Seed: 1})
			if err != nil {
				t.Fatal(err)
			}
			r, err := replay(sc, MultiData, false, false)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%s blocks of unit/%d: WAF %.3f, host pages %d", p, div, r.Aged.WAF, r.Aged.HostPages)
			if r.Aged.HostPages == 0 {
				t.Errorf("%s unit/%d: nothing written", p, div)
			}
			if div == 1 && r.Aged.WAF > 1.01 {
				t.Errorf("%s unit/%d: WAF %.3f", p, div, r.Aged.WAF)
			}
		}
	}
}
