// Package framesim reproduces the evaluation of the frame-grouping paper
// (Jeong et al., "An SSD-Based Storage System for an Interactive Media
// Server Using Video Frame Grouping", ETRI Journal 2013; FG below), §IV
// Figs. 12-14: users uploading titles and playing them at play levels 1-5
// on SSD and HDD models, with each title's frames grouped by type in
// fixed-size blocks or stored in play order.
package framesim

import (
	"fmt"
	"sync"
	"time"

	"github.com/strata-media/strata/internal/lab/sim/des"
	"github.com/strata-media/strata/internal/progress"
	"github.com/strata-media/strata/internal/storage/model"
)

// Scale sizes the experiment. Both scales run every configuration; small
// measures a shorter window for CI.
type Scale struct {
	Name string
	// Titles is the stored catalog (FG does not give one; 48 titles of 5
	// to 20 minutes are about 9 GB, a quarter of the 32 GB span).
	Titles int
	// Warmup and Measure time each run. FG gives no duration; paper scale
	// measures three service times (3 x 5 minutes).
	Warmup, Measure time.Duration
}

// scales are the predefined sizes.
var scales = map[string]Scale{
	"small": {Name: "small", Titles: 48, Warmup: 10 * time.Second, Measure: time.Minute},
	"paper": {Name: "paper", Titles: 48, Warmup: time.Minute, Measure: 15 * time.Minute},
}

// ParseScale returns the named scale.
func ParseScale(name string) (Scale, error) {
	s, ok := scales[name]
	if !ok {
		return Scale{}, fmt.Errorf("%w: unknown scale %q (want small or paper)", errConfig, name)
	}
	return s, nil
}

// The experiment's axes (FG §IV).
var (
	// userCounts are FG §IV's numbers of simultaneous users.
	userCounts = []int{20, 50, 80}
	// sweepBlocks are Fig. 12's buffer sizes, 8 KB to 4 MB.
	sweepBlocks = []int64{8 << 10, 16 << 10, 32 << 10, 64 << 10, 128 << 10, 256 << 10, 512 << 10, 1 << 20, 2 << 20, 4 << 20}
	// sweepUsers is the user count of the Fig. 12 sweep, which FG does
	// not state; the middle of its three.
	sweepUsers = 50
)

// Options control a whole experiment.
type Options struct {
	Scale Scale
	Seed  uint64
	// Parallel is how many runs execute at once. Default 2.
	Parallel int
	// Progress receives progress lines; nil discards them.
	Progress progress.Func
}

// A pair is one configuration run with both layouts.
type pair struct {
	Device       string  `json:"device"`
	Mix          string  `json:"mix"`
	Users        int     `json:"users"`
	BlockKiB     int64   `json:"block_kib"`
	QueueDepth   int     `json:"queue_depth"`
	Grouped      Result  `json:"grouped"`
	Conventional Result  `json:"conventional"`
	Gain         float64 `json:"gain"` // grouped total over conventional total, minus 1
}

// Report is everything strata-lab sim framegroup measures.
type Report struct {
	Scale   string  `json:"scale"`
	Seed    uint64  `json:"seed"`
	Titles  int     `json:"titles"`
	Catalog float64 `json:"catalog_gb"`
	// Fig14 is the two mixes, Fig13 each operation alone, Fig12 the
	// block-size sweep.
	Fig14 []pair `json:"fig14"`
	Fig13 []pair `json:"fig13"`
	Fig12 []pair `json:"fig12"`
	// QueueDepth repeats the mixes with a 32-command queue on the SSDs;
	// LogBlocks repeats uploads with an FTL of 128 log units.
	QueueDepth []pair `json:"queue_depth"`
	LogBlocks  []pair `json:"log_blocks"`
	// HDDWrites repeats the HDD mixes with conventional writes of S, not
	// 5S (FG gives no conventional buffer for the HDD).
	HDDWrites  []pair        `json:"hdd_writes"`
	Arithmetic []LevelBlocks `json:"arithmetic"`
	// Claims sets FG §IV's statements against the runs.
	Claims  []claim `json:"claims"`
	Seconds float64 `json:"wall_seconds"`
}

// spec is one pair to run and where its result goes.
type spec struct {
	RunOptions
	out *pair
}

// RunAll runs the experiment.
func RunAll(o Options) (*Report, error) {
	if o.Parallel <= 0 {
		o.Parallel = 2
	}
	if o.Progress == nil {
		o.Progress = progress.Discard
	}
	start := time.Now()
	cat := newCatalog(videoOptions{}, o.Scale.Titles, o.Seed)
	rep := &Report{Scale: o.Scale.Name, Seed: o.Seed, Titles: len(cat.Titles), Catalog: catalogGB(cat)}
	specs := rep.plan(o, cat)
	if err := runSpecs(specs, o.Parallel, o.Progress); err != nil {
		return nil, err
	}
	rep.Arithmetic = Arithmetic(cat)
	rep.Claims = rep.claims()
	rep.Seconds = time.Since(start).Seconds()
	return rep, nil
}

func catalogGB(c *catalog) float64 {
	var n int64
	for _, t := range c.Titles {
		n += t.Bytes()
	}
	return float64(n) / 1e9
}

// plan lays out every pair of the report.
func (r *Report) plan(o Options, cat *catalog) []spec {
	base := RunOptions{Catalog: cat, Seed: o.Seed, Warmup: o.Scale.Warmup, Measure: o.Scale.Measure}
	var specs []spec
	add := func(dst *[]pair, n int, fill func(i int, ro *RunOptions)) {
		*dst = make([]pair, n)
		for i := range n {
			ro := base
			fill(i, &ro)
			specs = append(specs, spec{RunOptions: ro, out: &(*dst)[i]})
		}
	}
	devs, mixes := devices(), []Mix{mix1, mix2}
	add(&r.Fig14, len(devs)*len(mixes)*len(userCounts), func(i int, ro *RunOptions) {
		ro.Device, ro.Mix, ro.Users = devs[i/6], mixes[i/3%2], userCounts[i%3]
	})
	add(&r.Fig13, len(devs)*numOps*len(userCounts), func(i int, ro *RunOptions) {
		ro.Device, ro.Mix, ro.Users = devs[i/18], only(Op(i/3%numOps)), userCounts[i%3]
	})
	nb := len(sweepBlocks)
	add(&r.Fig12, len(devs)*len(mixes)*nb, func(i int, ro *RunOptions) {
		ro.Device, ro.Mix, ro.Block, ro.Users = devs[i/(2*nb)], mixes[i/nb%2], sweepBlocks[i%nb], sweepUsers
	})
	add(&r.QueueDepth, 4, func(i int, ro *RunOptions) {
		ro.Device, ro.Mix, ro.Users, ro.QueueDepth = devs[i/2], mixes[i%2], sweepUsers, 32
	})
	logMixes := []Mix{only(opWrite), only(opWrite), only(opWrite), mix2}
	logUsers := []int{20, 50, 80, 80}
	add(&r.LogBlocks, 8, func(i int, ro *RunOptions) {
		ro.Device, ro.Mix, ro.Users = withLogBlocks(devs[i/4], 128), logMixes[i%4], logUsers[i%4]
	})
	add(&r.HDDWrites, 2, func(i int, ro *RunOptions) {
		ro.Device, ro.Mix, ro.Users, ro.WriteBlocks = hdd, mixes[i], sweepUsers, 1
	})
	return specs
}

// withLogBlocks is d with an FTL of n log units instead of the preset's.
func withLogBlocks(d Device, n int) Device {
	params := map[string]func() model.SSDParams{ssD1.Name: model.MtronMSDSATA3025, ssD2.Name: model.SamsungMCBQE32}[d.Name]
	d.Name = fmt.Sprintf("%s, %d logs", d.Name, n)
	d.New = func() (model.Model, error) {
		p := params()
		p.LogBlocks = n
		return model.NewSSD(p)
	}
	return d
}

// runSpecs runs every spec, parallel at a time; each writes its own slot.
func runSpecs(specs []spec, parallel int, progress func(string, ...any)) error {
	var mu sync.Mutex // protects done
	done := 0
	jobs := make([]func() error, len(specs))
	for i, s := range specs {
		jobs[i] = func() error {
			if err := runPair(s); err != nil {
				return err
			}
			mu.Lock()
			defer mu.Unlock()
			if done++; done%20 == 0 || done == len(specs) {
				progress("%d/%d configurations", done, len(specs))
			}
			return nil
		}
	}
	return des.RunJobs(jobs, parallel)
}

// runPair runs s with both layouts.
func runPair(s spec) error {
	g, c := s.RunOptions, s.RunOptions
	g.Layout, c.Layout = Grouped, conventional
	rg, err := run(g)
	if err != nil {
		return err
	}
	rc, err := run(c)
	if err != nil {
		return err
	}
	*s.out = pair{Device: s.Device.Name, Mix: s.Mix.Name, Users: s.Users, BlockKiB: rg.BlockKiB,
		QueueDepth: rg.QueueDepth, Grouped: rg, Conventional: rc, Gain: gain(rg.Total, rc.Total)}
	return nil
}

func gain(a, b float64) float64 {
	if b <= 0 {
		return 0
	}
	return a/b - 1
}
