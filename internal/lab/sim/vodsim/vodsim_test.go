package vodsim

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/strata-media/strata/internal/core/vod"
	"github.com/strata-media/strata/internal/lab/golden"
)

// tiny is a scale small enough for go test: every experiment runs, with
// two-hour runs and two points per sweep.
func tiny() scale {
	sc := scales["small"]
	sc.Name, sc.Duration = "small", 2*time.Hour
	sc.RAM, sc.Flash, sc.FlashBW = []float64{1, 4}, []float64{32, 64}, []float64{80, 155}
	sc.Rates, sc.Zipf, sc.Lengths = []float64{0.1, 0.5}, []float64{0.271, 0.8}, []float64{30, 60}
	sc.OnsetStep, sc.MaxDRAM, sc.MaxSSD = 0.02, 2, 6
	sc.DeviceCapacity, sc.DeviceRun, sc.WAFCapacity = 4*GB, 10*time.Second, 4*GB
	sc.HalfLives = []time.Duration{time.Hour}
	return sc
}

// TestExperimentsSmoke runs every experiment at a tiny scale and checks
// the machinery and the invariants the paper's model implies, not the
// paper's numbers.
func TestExperimentsSmoke(t *testing.T) {
	rep, err := Run(tiny(), 1, Options{})
	if err != nil {
		t.Fatal(err)
	}
	md, figs := rep.Markdown("go test")
	if len(figs) < 10 || !strings.Contains(md, "Fig. 11") {
		t.Fatalf("report has %d figures:\n%s", len(figs), md)
	}
	for _, x := range rep.Fig11Rate.LFU {
		if x.PeakBuffered > 647 {
			t.Errorf("flash served %d streams at once, above its 647-stream bandwidth", x.PeakBuffered)
		}
	}
	if o := rep.Onset; !(o.HDD.Rate > 0 && o.IC.Rate >= o.HDD.Rate && o.LFU.Rate >= o.IC.Rate) {
		t.Errorf("onsets HDD %v IC %v LFU %v: caches should add capacity, flash more", o.HDD.Rate, o.IC.Rate, o.LFU.Rate)
	}
	for _, x := range rep.Cost.Strict {
		if x.Result.Rejected != 0 {
			t.Errorf("strict mix %+v rejected %d", x, x.Result.Rejected)
		}
	}
	if ic := rep.Lifetime.Rows[0]; !(ic.WriteMBps > 1 && ic.Hours < 1e5) {
		t.Errorf("interval caching on flash writes %v MB/s, lasts %v h", ic.WriteMBps, ic.Hours)
	}
	if lfu := rep.Lifetime.Rows[2]; lfu.WriteMBps != 0 || lfu.Hours < maxHours {
		t.Errorf("static LFU writes %v MB/s after staging", lfu.WriteMBps)
	}
}

// TestDeterministic runs the same configurations twice with one seed.
func TestDeterministic(t *testing.T) {
	p := paperParams()
	p.Duration, p.Rate, p.Shift = 3*time.Hour, 0.2, defaultShift
	c := dynamicLFU(time.Hour, 1)
	a, err := runLFU(p, c)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := runLFU(p, c)
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	if string(ja) != string(jb) {
		t.Fatalf("two runs differ:\n%s\n%s", ja, jb)
	}
	x, _ := runInterval(p, icConfig{RAM: 2 * GB})
	y, _ := runInterval(p, icConfig{RAM: 2 * GB})
	jx, _ := json.Marshal(x)
	jy, _ := json.Marshal(y)
	if string(jx) != string(jy) {
		t.Fatalf("interval caching runs differ:\n%s\n%s", jx, jy)
	}
}

// TestLittlesLaw checks the runs' bookkeeping: with no limits, the mean
// number of streams playing is the arrival rate times the length (less the
// first hour's ramp), and no request is rejected.
func TestLittlesLaw(t *testing.T) {
	p := paperParams()
	p.Rate, p.Disk, p.Duration = 0.5, unlimited, 6*time.Hour
	want := p.Rate * p.Length.Seconds() * (1 - 0.5/6)
	for _, run := range []func() (Result, error){
		func() (Result, error) { return runInterval(p, icConfig{RAM: 4 * GB}) },
		func() (Result, error) { return runLFU(p, lfuConfig{Flash: 64 * GB, FlashBW: vod.Unlimited}) },
	} {
		r, err := run()
		if err != nil {
			t.Fatal(err)
		}
		if r.Rejected != 0 || math.Abs(r.Streams-want)/want > 0.05 {
			t.Errorf("%s: %d rejected, mean %.0f streams, want about %.0f", r.Policy, r.Rejected, r.Streams, want)
		}
	}
}

// TestStaticLFUHitRatio checks that static LFU's hit ratio is the mass of
// the titles it holds when nothing limits it (64 GB: 76 titles).
func TestStaticLFUHitRatio(t *testing.T) {
	p := paperParams()
	p.Rate, p.Disk = 0.1, unlimited
	r, err := runLFU(p, lfuConfig{Flash: 64 * GB, FlashBW: vod.Unlimited})
	if err != nil {
		t.Fatal(err)
	}
	if want := topMass(p, 76); math.Abs(r.HitRatio-want) > 0.03 {
		t.Fatalf("hit ratio %.3f, top-76 mass %.3f", r.HitRatio, want)
	}
}

// TestSmallScaleTables runs `strata-lab sim vod --scale small --seed 1` and
// compares its report's tables with testdata (go test -rewrite updates it).
func TestSmallScaleTables(t *testing.T) {
	if testing.Short() {
		t.Skip("a few seconds of simulation")
	}
	rep, err := Run(scales["small"], 1, Options{})
	if err != nil {
		t.Fatal(err)
	}
	md, _ := rep.Markdown("strata-lab sim vod --scale small --seed 1")
	golden.Check(t, "testdata/small-seed1.tables", golden.Tables(md))
}
