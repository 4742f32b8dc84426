package policysim

import (
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/strata-media/strata/internal/core/tier"
)

// TestDiagnose splits reinsert's gap to the static oracle on the
// flashstream workload (STRATA_POLICY_DIAG=small or paper;
// STRATA_POLICY_DIAG_HOURS changes the trace's length, the first third
// still warm-up; STRATA_POLICY_DIAG_WL another workload): the default;
// with groups scored by requests per distinct segment (GroupRatio); and,
// on flashstream and vod (whose laws are fixed), with the sketch replaced
// by every segment's true probability (ScoreOracle), which leaves only
// what the block mechanics lose. After each run it compares what flash holds with the
// ideal set of the same bytes (highest true probability per byte).
//
//	STRATA_POLICY_DIAG=paper go test ./internal/lab/sim/policysim/ -run TestDiagnose -v
func TestDiagnose(t *testing.T) {
	sc, ok := scales[os.Getenv("STRATA_POLICY_DIAG")]
	if !ok {
		t.Skip("STRATA_POLICY_DIAG=small|paper not set")
	}
	if h, err := strconv.ParseFloat(os.Getenv("STRATA_POLICY_DIAG_HOURS"), 64); err == nil {
		sc.Duration = time.Duration(h * float64(time.Hour))
	}
	wl := os.Getenv("STRATA_POLICY_DIAG_WL")
	if wl == "" {
		wl = "flashstream"
	}
	tr, err := makeTrace(wl, sc, 1)
	if err != nil {
		t.Fatal(err)
	}
	prob, _ := trueProbs(tr, sc)
	oracle, _ := staticOracle(tr, sc, sc.capacity())
	t.Logf("%s %s, %s: static oracle %.4f (0: the workload's law is not fixed)", wl, sc.Name, sc.Duration, oracle)
	idx := make(map[string]int, len(tr.Cat.Keys))
	for i, k := range tr.Cat.Keys {
		idx[k] = i
	}
	base := tier.Options{RAMBytes: sc.RAM, BlockSize: sc.Block, DeviceSize: sc.SSD, Admission: tier.Threshold{Max: 2}}
	window := float64((&tier.Options{RAMBytes: sc.RAM, DeviceSize: sc.SSD}).EnsureDefaults().FreqWindow)
	for _, v := range []struct {
		name string
		set  func(*tier.Options)
	}{
		{"reinsert", func(*tier.Options) {}},
		{"reinsert, GroupRatio", func(o *tier.Options) { o.GroupRatio = true }},
		{"reinsert, true scores", func(o *tier.Options) {
			o.ScoreOracle = func(key string) float64 { return prob[idx[key]] * window }
		}},
	} {
		if prob == nil && strings.Contains(v.name, "true") {
			continue
		}
		opts := base
		v.set(&opts)
		var core *tier.Cache
		start := time.Now()
		r, err := replayCore(tr, sc, opts, func(c *tier.Cache) { core = c })
		if err != nil {
			t.Fatal(err)
		}
		of := ""
		if oracle > 0 {
			of = fmt.Sprintf(" (%.1f%% of the static oracle)", 100*r.HitRatio/oracle)
		}
		t.Logf("%s: hit ratio %.4f%s, flash %.1f GB/h (%.0f s)",
			v.name, r.HitRatio, of, r.FlashGBPerHour, time.Since(start).Seconds())
		if prob != nil {
			diagnoseContent(t, tr, prob, core)
		}
	}
}

// diagnoseContent logs what flash holds at the end against the ideal set
// of the same bytes.
func diagnoseContent(t *testing.T, tr *Trace, prob []float64, core *tier.Cache) {
	var onFlash []bool
	var flashB int64
	var flashP float64
	for i, k := range tr.Cat.Keys {
		_, on := core.FlashSegment(k)
		onFlash = append(onFlash, on)
		if on {
			flashB += tr.Cat.Sizes[i]
			flashP += prob[i]
		}
	}
	ideal := idealSet(tr, prob, flashB)
	var idealP, missP, extraP float64
	var extraB int64
	for i, on := range onFlash {
		if ideal[i] {
			idealP += prob[i]
			if !on {
				missP += prob[i]
			}
		} else if on {
			extraP += prob[i]
			extraB += tr.Cat.Sizes[i]
		}
	}
	t.Logf("  end: flash holds probability %.4f in %.1f GB; the ideal set of those bytes %.4f; "+
		"%.1f%% of flash bytes outside it (probability %.4f), ideal segments missing %.4f",
		flashP, float64(flashB)/1e9, idealP, 100*float64(extraB)/float64(max(flashB, 1)), extraP, missP)
	if flashP > 1+1e-9 || idealP > 1+1e-9 || extraB > flashB {
		t.Errorf("inconsistent: flash %.4f ideal %.4f, %d of %d bytes outside", flashP, idealP, extraB, flashB)
	}
}

// idealSet marks the segments of highest probability per byte that fit
// in capacity.
func idealSet(t *Trace, prob []float64, capacity int64) []bool {
	order := make([]int, len(prob))
	for i := range order {
		order[i] = i
	}
	d := func(i int) float64 { return prob[i] / float64(max(t.Cat.Sizes[i], 1)) }
	sort.SliceStable(order, func(a, b int) bool { return d(order[a]) > d(order[b]) })
	in := make([]bool, len(prob))
	var used int64
	for _, i := range order {
		if used+t.Cat.Sizes[i] <= capacity {
			in[i] = true
			used += t.Cat.Sizes[i]
		}
	}
	return in
}
