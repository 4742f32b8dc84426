package policysim

import (
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/strata-media/strata/internal/core/tier"
)

// TestVariants replays every workload of seeds 1 to 3 (STRATA_POLICY_SEEDS
// changes them) through reinsert and through variants of its options,
// and logs each one's hit ratio and flash GB/h with the median over the
// seeds: the acceptance check of a change to the block policy, at small
// scale in about a minute a variant.
//
//	STRATA_POLICY_VARIANTS=small go test ./internal/lab/sim/policysim/ -run TestVariants -v
func TestVariants(t *testing.T) {
	sc, ok := scales[os.Getenv("STRATA_POLICY_VARIANTS")]
	if !ok {
		t.Skip("STRATA_POLICY_VARIANTS=small|paper not set")
	}
	seeds := []uint64{1, 2, 3}
	if s := os.Getenv("STRATA_POLICY_SEEDS"); s != "" {
		seeds = nil
		for _, f := range strings.Split(s, ",") {
			n, err := strconv.ParseUint(f, 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			seeds = append(seeds, n)
		}
	}
	variants := []struct {
		name string
		set  func(*tier.Options)
	}{
		{"reinsert", func(*tier.Options) {}},
		{"SessionCapture (decision 0032)", func(o *tier.Options) { o.SessionCapture = true }},
	}
	type cell struct{ hr, gb []float64 }
	res := make(map[string]map[string]*cell) // variant, workload
	var mu sync.Mutex
	for _, seed := range seeds {
		trs, err := Traces(sc, seed, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, tr := range trs {
			for _, v := range variants {
				opts := tier.Options{RAMBytes: sc.RAM, BlockSize: sc.Block, DeviceSize: sc.SSD, Admission: tier.Threshold{Max: 2}}
				v.set(&opts)
				r, err := replayOpts(tr, sc, opts)
				if err != nil {
					t.Fatal(err)
				}
				mu.Lock()
				if res[v.name] == nil {
					res[v.name] = make(map[string]*cell)
				}
				c := res[v.name][tr.Workload]
				if c == nil {
					c = &cell{}
					res[v.name][tr.Workload] = c
				}
				c.hr = append(c.hr, r.HitRatio)
				c.gb = append(c.gb, r.FlashGBPerHour)
				mu.Unlock()
				t.Logf("seed %d %-12s %-24s hit ratio %.4f flash %.2f GB/h", seed, tr.Workload, v.name, r.HitRatio, r.FlashGBPerHour)
			}
		}
	}
	med := func(x []float64) float64 {
		y := append([]float64(nil), x...)
		sort.Float64s(y)
		return y[len(y)/2]
	}
	for _, v := range variants {
		var b strings.Builder
		for _, w := range workloadNames {
			c := res[v.name][w]
			base := res[variants[0].name][w]
			fmt.Fprintf(&b, " %s %.4f (%+.4f) %.2f GB/h;", w, med(c.hr), med(c.hr)-med(base.hr), med(c.gb))
		}
		t.Logf("median %-24s%s", v.name, b.String())
	}
}
