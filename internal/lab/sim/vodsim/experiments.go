package vodsim

import (
	"fmt"
	"sync"
	"time"

	"github.com/strata-media/strata/internal/lab/sim/des"
	"github.com/strata-media/strata/internal/progress"
)

// Options control a run of the experiments.
type Options struct {
	// Parallel is how many simulations run at once. Default 2.
	Parallel int
	// Progress receives progress lines; nil discards them.
	Progress progress.Func
}

// Report holds the results of strata-lab sim vod.
type Report struct {
	Scale   string  `json:"scale"`
	Seed    uint64  `json:"seed"`
	Seconds float64 `json:"wall_seconds"`
	Base    params  `json:"base"`
	// Probe is the device models' 1 MB random-read throughput.
	Probe []probeResult `json:"probe"`
	// Fig9 is interval caching against RAM size at rate 0.5 with the
	// 100 MB/s disk (Algorithm 1); Fig9NoDisk without a disk limit;
	// Fig9ArrivalOnly with buffers given only at arrival.
	Fig9            []Result `json:"fig9"`
	Fig9NoDisk      []Result `json:"fig9_no_disk"`
	Fig9ArrivalOnly []Result `json:"fig9_arrival_only"`
	// Fig10Capacity is static LFU against flash size at 200 MB/s;
	// Fig10Bandwidth against flash bandwidth at 64 GB.
	Fig10Capacity  []Result `json:"fig10_capacity"`
	Fig10Bandwidth []Result `json:"fig10_bandwidth"`
	// Fig11 compares 5.23 GB of RAM with 64 GB of flash at 155 MB/s.
	Fig11Rate   Sweep `json:"fig11_rate"`
	Fig11Zipf   Sweep `json:"fig11_zipf"`
	Fig11Length Sweep `json:"fig11_length"`
	Onset       Onset `json:"onset"`
	Cost        Cost  `json:"cost"`
	Lifetime    life  `json:"lifetime"`
	Device      dev   `json:"device"`
	Dynamic     dyn   `json:"dynamic"`

	costUnits []*costUnit
}

// Sweep is one Fig. 11 row: both caches at each x.
type Sweep struct {
	X   []float64 `json:"x"`
	IC  []Result  `json:"ic"`
	LFU []Result  `json:"lfu"`
}

// The paper's equal-cost pair (§6.3): 5.23 GB of DRAM and 64 GB of flash
// cost the same at Table 1's $23/GB and $1.88/GB; the flash is SSD A,
// 155 MB/s.
var (
	paperRAM     = gbBytes(5.23)
	paperFlash   = 64 * GB
	paperFlashBW = 155 * mb
)

// Run runs every experiment at a scale.
func Run(sc scale, seed uint64, o Options) (*Report, error) {
	if o.Parallel <= 0 {
		o.Parallel = 2
	}
	if o.Progress == nil {
		o.Progress = progress.Discard
	}
	start := time.Now()
	base := paperParams()
	base.Duration, base.Seed = sc.Duration, seed
	r := &Report{Scale: sc.Name, Seed: seed, Base: base}
	b := &batch{progress: o.Progress}
	r.addProbe(b, sc)
	r.addFig9(b, sc)
	r.addFig10(b, sc)
	r.addFig11(b, sc)
	r.addOnset(b, sc)
	r.addCost(b, sc)
	r.addLifetime(b, sc)
	r.addDevice(b, sc)
	r.addDynamic(b, sc)
	if err := b.run(o.Parallel); err != nil {
		return nil, err
	}
	r.finish()
	r.Seconds = time.Since(start).Seconds()
	return r, nil
}

// batch is a set of independent jobs; each writes only its own slots of
// the report, so they run concurrently and the report is the same
// whatever the order.
type batch struct {
	jobs     []func() error
	progress func(format string, args ...any)
	mu       sync.Mutex
	done     int
}

func (b *batch) add(name string, fn func() error) {
	b.jobs = append(b.jobs, func() error {
		if err := fn(); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		b.mu.Lock()
		b.done++
		b.progress("%d/%d %s", b.done, len(b.jobs), name)
		b.mu.Unlock()
		return nil
	})
}

func (b *batch) run(parallel int) error { return des.RunJobs(b.jobs, parallel) }

// at returns base with one change.
func at(base params, change func(*params)) params {
	change(&base)
	return base
}

func (r *Report) addFig9(b *batch, sc scale) {
	n := len(sc.RAM)
	r.Fig9, r.Fig9NoDisk, r.Fig9ArrivalOnly = make([]Result, n), make([]Result, n), make([]Result, n)
	noDisk := at(r.Base, func(p *params) { p.Disk = unlimited })
	for i, gb := range sc.RAM {
		ram := int64(gb * float64(GB))
		b.add(fmt.Sprintf("fig9 %.2f GB", gb), func() (err error) {
			if r.Fig9[i], err = runInterval(r.Base, icConfig{RAM: ram}); err != nil {
				return err
			}
			if r.Fig9ArrivalOnly[i], err = runInterval(r.Base, icConfig{RAM: ram, ArrivalOnly: true}); err != nil {
				return err
			}
			r.Fig9NoDisk[i], err = runInterval(noDisk, icConfig{RAM: ram})
			return err
		})
	}
}

func (r *Report) addFig10(b *batch, sc scale) {
	r.Fig10Capacity, r.Fig10Bandwidth = make([]Result, len(sc.Flash)), make([]Result, len(sc.FlashBW))
	for i, gb := range sc.Flash {
		b.add(fmt.Sprintf("fig10a %.0f GB", gb), func() (err error) {
			r.Fig10Capacity[i], err = runLFU(r.Base, lfuConfig{Flash: int64(gb * float64(GB)), FlashBW: 200 * mb})
			return err
		})
	}
	for i, bw := range sc.FlashBW {
		b.add(fmt.Sprintf("fig10b %.0f MB/s", bw), func() (err error) {
			r.Fig10Bandwidth[i], err = runLFU(r.Base, lfuConfig{Flash: paperFlash, FlashBW: int64(bw * float64(mb))})
			return err
		})
	}
}

func (r *Report) addFig11(b *batch, sc scale) {
	r.Fig11Rate = r.sweep(b, "fig11 rate", sc.Rates, func(p *params, x float64) { p.Rate = x })
	r.Fig11Zipf = r.sweep(b, "fig11 zipf", sc.Zipf, func(p *params, x float64) { p.ZipfS = x })
	r.Fig11Length = r.sweep(b, "fig11 length", sc.Lengths, func(p *params, x float64) {
		p.Length = time.Duration(x * float64(time.Minute))
	})
}

// sweep runs both equal-cost caches at every x.
func (r *Report) sweep(b *batch, name string, xs []float64, set func(*params, float64)) Sweep {
	s := Sweep{X: xs, IC: make([]Result, len(xs)), LFU: make([]Result, len(xs))}
	for i, x := range xs {
		p := at(r.Base, func(p *params) { set(p, x) })
		b.add(fmt.Sprintf("%s %v", name, x), func() (err error) {
			if s.IC[i], err = runInterval(p, icConfig{RAM: paperRAM}); err != nil {
				return err
			}
			s.LFU[i], err = runLFU(p, lfuConfig{Flash: paperFlash, FlashBW: paperFlashBW})
			return err
		})
	}
	return s
}

func (r *Report) addProbe(b *batch, sc scale) {
	r.Probe = make([]probeResult, 2)
	b.add("probe", func() error {
		for i, d := range []struct {
			preset string
			cap    int64
			paper  float64
		}{{"vod-raid0", 0, 100}, {"vod-low-end", sc.DeviceCapacity, 155}} {
			p, err := probeReads(d.preset, d.cap, 16, 30*time.Second, r.Seed)
			if err != nil {
				return err
			}
			p.Paper = d.paper
			r.Probe[i] = p
		}
		return nil
	})
}

// finish derives what needs several experiments' results.
func (r *Report) finish() {
	r.Onset.derive()
	r.cheapest()
	r.Lifetime.derive()
}
