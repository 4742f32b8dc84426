// Package policysim is the flash policy experiment (strata-lab sim policies):
// it replays four workloads through the tier core under each SSD block
// policy at one RAM and flash budget, and sets the hit ratios and flash
// writes beside our offline Belady and, when given, libCacheSim's
// object-level policies on the same trace.
package policysim

import (
	"fmt"
	"slices"
	"time"

	"github.com/strata-media/strata/internal/core/tier"
	"github.com/strata-media/strata/internal/lab/sim/des"
	"github.com/strata-media/strata/internal/lab/sim/flashstream"
	"github.com/strata-media/strata/internal/progress"
)

// Scale sizes the experiment. "paper" is FlashStream §5's cache (2 GiB of
// RAM, 75 GB of flash in 16 MiB blocks, 2000 titles); "small" divides the
// library, RAM and flash by ten, as strata-lab sim flashstream's small scale
// does.
type Scale struct {
	Name   string
	Titles int
	RAM    int64 // bytes of RAM pool
	SSD    int64 // bytes of flash
	Block  int64 // flash block size
	// Rate is requests per second of virtual time; Duration the length of
	// every trace. The first WarmShare of each trace warms the caches and
	// is not counted.
	Rate      float64
	Duration  time.Duration
	WarmShare float64
	// WarmRequests, when positive, is the number of requests that warm
	// the caches, instead of WarmShare of them.
	WarmRequests int
	// Sessions is the number of concurrent whole-title viewers of the vod
	// workload (a quarter of them in binge).
	Sessions int
}

// scales are the predefined sizes.
var scales = map[string]Scale{
	"small": {Name: "small", Titles: 200, RAM: 200 << 20, SSD: 7.5e9, Block: 16 << 20,
		Rate: 20, Duration: 3 * time.Hour, WarmShare: 1.0 / 3, Sessions: 64},
	"paper": {Name: "paper", Titles: 2000, RAM: 2 << 30, SSD: 75e9, Block: 16 << 20,
		Rate: 20, Duration: 12 * time.Hour, WarmShare: 1.0 / 3, Sessions: 64},
}

// parseScale returns the named scale.
func parseScale(name string) (Scale, error) {
	s, ok := scales[name]
	if !ok {
		return Scale{}, fmt.Errorf("policysim: unknown scale %q (want small or paper)", name)
	}
	return s, nil
}

// policies are the block policies compared, the papers' first.
var policies = []tier.BlockPolicy{tier.BlockLRU, tier.BlockLFUMean, tier.BlockLFUMedian, tier.BlockFIFO, tier.BlockTinyLFU, tier.BlockReinsert}

// options configure Run.
type options struct {
	// Parallel is the number of runs simulated at once (default 2).
	Parallel int
	// Workloads restricts the run to these workloads (default all).
	Workloads []string
	// Policies restricts the run to these block policies, in this order
	// (default all); the report needs BlockLRU and the default among
	// them.
	Policies []tier.BlockPolicy
	// Progress, if set, receives progress lines.
	Progress progress.Func
}

// Result is one policy's run on one workload, counted after the warm-up.
type Result struct {
	Workload     string  `json:"workload"`
	Policy       string  `json:"policy"`
	Requests     int64   `json:"requests"`
	HitRatio     float64 `json:"hit_ratio"`      // RAM + flash
	ByteHitRatio float64 `json:"byte_hit_ratio"` // RAM + flash
	SSDHitRatio  float64 `json:"ssd_hit_ratio"`
	// FlashGBPerHour is flash bytes written (whole blocks) per hour of
	// virtual time, in 10^9 bytes.
	FlashGBPerHour float64 `json:"flash_gb_per_hour"`
	// Filtered is how often BlockTinyLFU's admission kept a segment off
	// flash (a monitor pass that skipped it).
	Filtered uint64 `json:"filtered"`
}

// Workload is one workload's trace, its offline bound and its results.
type Workload struct {
	Name     string  `json:"name"`
	Requests int     `json:"requests"`
	Objects  int     `json:"objects"`  // distinct segments requested
	Capacity int64   `json:"capacity"` // RAM + flash data bytes, the total cache size
	Belady   float64 `json:"belady"`   // our offline Belady hit ratio at Capacity
	// StaticOracle is the hit ratio of the segments of highest true
	// probability per byte, fixed, at Capacity (StaticOracle); 0 for the
	// workloads whose law is not fixed.
	StaticOracle float64 `json:"static_oracle,omitempty"`
	// OnlineOracle is the hit ratio of a cache that knows the true law
	// and holds the segments of highest probability per byte among those
	// requested so far (onlineOracle): what an online policy can reach
	// when requests are independent draws; 0 where the law is not fixed.
	OnlineOracle float64 `json:"online_oracle,omitempty"`
	// Results are the core's policies, in Policies order.
	Results []Result `json:"results"`
	// Yardstick is libCacheSim's run of the same trace, when given.
	Yardstick *Yardstick `json:"yardstick,omitempty"`
}

// Report is the experiment's outcome.
type Report struct {
	Scale     Scale       `json:"scale"`
	Seed      uint64      `json:"seed"`
	Workloads []*Workload `json:"workloads"`
}

// capacity is the total cache size: RAM plus the flash data blocks.
func (sc Scale) capacity() int64 {
	blocks := sc.SSD/sc.Block - tier.MetaBlocks
	return sc.RAM + blocks*sc.Block
}

// Traces draws the workloads' traces.
func Traces(sc Scale, seed uint64, names []string) ([]*Trace, error) {
	if len(names) == 0 {
		names = workloadNames
	}
	var out []*Trace
	for _, n := range names {
		t, err := makeTrace(n, sc, seed)
		if err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, nil
}

// Run draws every workload's trace and replays it through each policy and
// through our Belady.
func Run(sc Scale, seed uint64, opts options) (*Report, error) {
	if opts.Parallel <= 0 {
		opts.Parallel = 2
	}
	progress := opts.Progress
	if progress == nil {
		progress = func(string, ...any) {}
	}
	ps := opts.Policies
	if len(ps) == 0 {
		ps = policies
	}
	for _, p := range []tier.BlockPolicy{tier.BlockLRU, defaultPolicy()} {
		if !slices.Contains(ps, p) {
			return nil, fmt.Errorf("policysim: the policies must include %s, which the report compares with", p)
		}
	}
	traces, err := Traces(sc, seed, opts.Workloads)
	if err != nil {
		return nil, err
	}
	rep := &Report{Scale: sc, Seed: seed}
	var jobs []func() error
	for _, t := range traces {
		w := &Workload{Name: t.Workload, Requests: len(t.Reqs), Objects: distinct(t.Reqs),
			Capacity: sc.capacity(), Results: make([]Result, len(ps))}
		rep.Workloads = append(rep.Workloads, w)
		jobs = append(jobs, func() error {
			w.Belady = flashstream.BeladyHitRatio(t.Reqs, t.Cat.Sizes, w.Capacity, sc.warm(len(t.Reqs)))
			progress("%s: Belady %.3f", w.Name, w.Belady)
			if o, ok := staticOracle(t, sc, w.Capacity); ok {
				w.StaticOracle = o
				progress("%s: static oracle %.3f", w.Name, o)
			}
			if prob, ok := trueProbs(t, sc); ok {
				w.OnlineOracle = onlineOracle(t, sc, w.Capacity, prob)
				progress("%s: online oracle %.3f", w.Name, w.OnlineOracle)
			}
			return nil
		})
		for i, p := range ps {
			jobs = append(jobs, func() error {
				r, err := replay(t, sc, p)
				w.Results[i] = r
				progress("%s %s: hit ratio %.3f", w.Name, p, r.HitRatio)
				return err
			})
		}
	}
	return rep, des.RunJobs(jobs, opts.Parallel)
}

// warm is the number of requests of a trace of n that warm the caches.
func (sc Scale) warm(n int) int {
	if sc.WarmRequests > 0 {
		return min(sc.WarmRequests, n)
	}
	return int(float64(n) * sc.WarmShare)
}

// Capacity is the total cache size of the scale: RAM plus the flash data
// blocks, the size libCacheSim's policies get.
func (sc Scale) Capacity() int64 { return sc.capacity() }

func distinct(reqs []int32) int {
	seen := make(map[int32]struct{})
	for _, r := range reqs {
		seen[r] = struct{}{}
	}
	return len(seen)
}
