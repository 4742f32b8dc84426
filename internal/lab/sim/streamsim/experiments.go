package streamsim

import (
	"cmp"
	"fmt"
	"sync"
	"time"

	"github.com/strata-media/strata/internal/bytesize"
	"github.com/strata-media/strata/internal/core/tier"
	"github.com/strata-media/strata/internal/lab/sim/des"
	"github.com/strata-media/strata/internal/progress"
	"github.com/strata-media/strata/internal/storage/model"
)

// Options configure Run.
type Options struct {
	Scale Scale
	Seed  uint64
	// Traces are live write traces to replay (wtrace files).
	Traces []string
	// TraceFill is the share of the drive a trace's devices take.
	// Default 0.9.
	TraceFill float64
	// Parallel is how many replays run at once. Default 1.
	Parallel int
	// Progress, if set, receives a line per finished replay.
	Progress progress.Func
}

// experiment is one scenario under several mappings.
type experiment struct {
	Name     string       `json:"name"`
	Title    string       `json:"title"`
	WorkUnit string       `json:"work_unit"`
	Drive    DriveInfo    `json:"drive"`
	Runs     []*RunResult `json:"runs"`
	// Ideal is the same workload on the reference drive (enough spare
	// flash never to copy): the fresh throughput the runs are normalized
	// to.
	Ideal    *RunResult `json:"ideal"`
	scenario *Scenario
}

// DriveInfo describes the drive an experiment ran on.
type DriveInfo struct {
	Name          string  `json:"name"`
	CapacityGB    float64 `json:"capacity_gb"`
	Dies          int     `json:"dies"`
	OverProvision float64 `json:"over_provision"`
	UnitMiB       float64 `json:"unit_mib"`
}

func driveInfo(p model.SSDParams) DriveInfo {
	return DriveInfo{Name: p.Name, CapacityGB: float64(p.Capacity) / 1e9, Dies: p.Channels * p.WaysPerChannel,
		OverProvision: p.OverProvision, UnitMiB: float64(p.UnitSize()) / (1 << 20)}
}

// runSpec is one replay of an experiment.
type runSpec struct {
	mapping MappingName
	trim    bool
}

var (
	tableOne  = []MappingName{Normal, single, multiLog, MultiData}
	lsmRuns   = append(withTrim(tableOne, true), runSpec{Auto, true}, runSpec{Normal, false}, runSpec{single, false}, runSpec{multiLog, false}, runSpec{MultiData, false})
	cacheRuns = []runSpec{{Normal, false}, {MultiData, false}}
)

func withTrim(ms []MappingName, trim bool) []runSpec {
	var out []runSpec
	for _, m := range ms {
		out = append(out, runSpec{m, trim})
	}
	return out
}

// planned is an experiment and the replays it needs.
type planned struct {
	exp  *experiment
	runs []runSpec
}

// planner collects the experiments of Options.
type planner struct {
	o   Options
	out []planned
}

// plan builds the experiments of o.
func plan(o Options) ([]planned, error) {
	p := &planner{o: o}
	for _, steps := range [][]func() error{p.lsms(), p.caches(), p.traces(), p.sensitivity()} {
		for _, step := range steps {
			if err := step(); err != nil {
				return nil, err
			}
		}
	}
	return p.out, nil
}

// add plans sc's runs under title.
func (p *planner) add(sc *Scenario, err error, title string, runs []runSpec) error {
	if err != nil {
		return err
	}
	e := &experiment{Name: sc.Name, Title: title, WorkUnit: sc.WorkUnit, Drive: driveInfo(sc.Drive), scenario: sc}
	p.out = append(p.out, planned{e, runs})
	return nil
}

// lsms are the Cassandra-like store (MS §4) and the image store.
func (p *planner) lsms() []func() error {
	return []func() error{
		func() error {
			s, err := cassandraScenario(p.o.Scale, cassandraOptions{})
			return p.add(s, err, "Cassandra-like LSM (size-tiered), YCSB updates", lsmRuns)
		},
		func() error {
			s, err := imageStoreScenario(p.o.Scale, imageStoreOptions{})
			return p.add(s, err, "Image store LSM (Badger-like, leveled), uploads with retention", lsmRuns)
		},
	}
}

// caches are the segment cache, whose block is the drive's write unit
// (strata probe's answer, FlashStream §3.1) or 1/32 of it (the tier's
// 4 MiB default on the 256 GB drive), and the random-write cache.
func (p *planner) caches() []func() error {
	var out []func() error
	for _, c := range []struct {
		policy tier.BlockPolicy
		div    int64
	}{{tier.BlockLRU, 1}, {tier.BlockFIFO, 1}, {tier.BlockLRU, 32}} {
		out = append(out, func() error {
			d, err := drive(p.o.Scale.Dies)
			if err != nil {
				return err
			}
			co := segCacheOptions{Policy: c.policy, Block: d.UnitSize() / c.div, Seed: p.o.Seed}
			s, err := segCacheScenario(p.o.Scale, co)
			return p.add(s, err, fmt.Sprintf("FlashStream segment cache, %s blocks of %s, 90%% of the drive", co.Policy, bytesize.Compact(co.Block)), cacheRuns)
		})
	}
	return append(out, func() error {
		s, err := randCacheScenario(p.o.Scale, 0.9, p.o.Seed)
		return p.add(s, err, "flashcache-like cache, 4 KiB random writes, 90% of the drive", []runSpec{{Normal, false}})
	})
}

// traces are the live write traces.
func (p *planner) traces() []func() error {
	var out []func() error
	seen := map[string]string{}
	for _, path := range p.o.Traces {
		out = append(out, func() error {
			t, err := openTrace(path)
			if err != nil {
				return err
			}
			if other, ok := seen[t.Name]; ok {
				return fmt.Errorf("streamsim: traces %s and %s have the same name %q; the report names experiments by it", other, path, t.Name)
			}
			seen[t.Name] = path
			s, err := traceScenario(p.o.Scale, t, cmp.Or(p.o.TraceFill, 0.9))
			runs := append(withTrim(tableOne, false), runSpec{Auto, false}, runSpec{traced, false})
			return p.add(s, err, "live write trace "+t.Name, runs)
		})
	}
	return out
}

// sensitivity is the Cassandra workload at smaller data sets.
func (p *planner) sensitivity() []func() error {
	var out []func() error
	for _, fill := range []float64{0.2, 0.3} {
		out = append(out, func() error {
			s, err := cassandraScenario(p.o.Scale, cassandraOptions{Fill: fill})
			if s != nil {
				s.Name = fmt.Sprintf("cassandra-fill%.0f", 100*fill)
			}
			return p.add(s, err, fmt.Sprintf("Cassandra-like LSM, data set %.0f%% of the file system", 100*fill),
				[]runSpec{{Normal, true}, {MultiData, true}})
		})
	}
	// The same drive without paced collection: writes that find a die out
	// of free blocks wait for whole victims, so GC shows in the tail.
	out = append(out, func() error {
		s, err := cassandraScenario(p.o.Scale, cassandraOptions{})
		if s != nil {
			s.Name = "cassandra-unpaced"
			s.Drive.UnpacedGC = true
			s.Drive.Name += "-unpaced"
		}
		return p.add(s, err, "Cassandra-like LSM on the drive with unpaced garbage collection",
			[]runSpec{{Normal, true}, {MultiData, true}, {Normal, false}, {MultiData, false}})
	})
	return out
}

// job is one replay to run.
type job struct {
	exp   *experiment
	spec  runSpec
	ideal bool
	slot  int
}

// Run plans and runs every experiment and returns the report.
func Run(o Options) (*Report, error) {
	start := time.Now()
	if o.TraceFill != 0 && !(o.TraceFill >= 0.05 && o.TraceFill <= 1) {
		return nil, fmt.Errorf("streamsim: trace fill %v: want a share in [0.05, 1]", o.TraceFill)
	}
	plans, err := plan(o)
	if err != nil {
		return nil, err
	}
	var jobs []job
	for _, p := range plans {
		p.exp.Runs = make([]*RunResult, len(p.runs))
		jobs = append(jobs, job{exp: p.exp, spec: runSpec{Normal, true}, ideal: true})
		for i, r := range p.runs {
			jobs = append(jobs, job{exp: p.exp, spec: r, slot: i})
		}
	}
	if err := runJobs(jobs, o.Parallel, o.Progress); err != nil {
		return nil, err
	}
	rep := &Report{Scale: o.Scale.Name, Seed: o.Seed}
	for _, p := range plans {
		if id := p.exp.Ideal; id != nil && id.Aged.GCCopies > 0 {
			// Every throughput is normalized to this drive's.
			return nil, fmt.Errorf("streamsim: %s: the reference drive copied %d pages; its spare flash is too small",
				p.exp.Name, id.Aged.GCCopies)
		}
		p.exp.finish()
		rep.Experiments = append(rep.Experiments, p.exp)
	}
	rep.Seconds = time.Since(start).Seconds()
	return rep, nil
}

// runJobs runs jobs on parallel workers; results land in their slots, so
// the outcome does not depend on the order they finish in.
func runJobs(jobs []job, parallel int, progress func(string, ...any)) error {
	var mu sync.Mutex // serializes progress output
	fns := make([]func() error, len(jobs))
	for i, j := range jobs {
		fns[i] = func() error {
			r, err := replay(j.exp.scenario, j.spec.mapping, j.spec.trim, j.ideal)
			if err != nil {
				return err
			}
			if j.ideal {
				j.exp.Ideal = r
			} else {
				j.exp.Runs[j.slot] = r
			}
			if progress != nil {
				mu.Lock()
				progress("%s %s trim=%v%s: WAF %.3f", j.exp.Name, j.spec.mapping, j.spec.trim, idealTag(j.ideal), r.Aged.WAF)
				mu.Unlock()
			}
			return nil
		}
	}
	return des.RunJobs(fns, parallel)
}

func idealTag(ideal bool) string {
	if ideal {
		return " (ideal drive)"
	}
	return ""
}

// finish normalizes the runs to the ideal drive and projects lifetimes at
// one host rate for all: the Normal mapping's (with TRIM if it ran).
func (e *experiment) finish() {
	if e.Ideal == nil {
		return
	}
	fresh := e.Ideal.Aged.Throughput
	e.Ideal.normalize(fresh)
	ref := e.reference()
	for _, r := range e.Runs {
		if r == nil {
			continue
		}
		r.normalize(fresh)
		r.setLifetime(int64(e.Drive.CapacityGB*1e9), ref)
	}
}

// reference is the host write rate lifetimes are projected at, bytes/s.
func (e *experiment) reference() float64 {
	for _, r := range e.Runs {
		if r != nil && r.Mapping == Normal {
			return r.Aged.HostMBps * 1e6
		}
	}
	return e.Ideal.Aged.HostMBps * 1e6
}
