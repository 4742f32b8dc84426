package policysim

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"time"

	"github.com/strata-media/strata/internal/core/tier"
	"github.com/strata-media/strata/internal/lab/sim/des"
	"github.com/strata-media/strata/internal/lab/sim/flashstream"
	"github.com/strata-media/strata/internal/progress"
)

// Trace replay (strata-lab sim policies --trace): an operator's own
// traffic, read from a file (trace.go), replayed through the same block
// policies, our Belady and libCacheSim at one total cache size or a sweep
// of them.

// TraceOptions configure RunTrace.
type TraceOptions struct {
	// Sizes are the total cache sizes (RAM + flash data blocks), bytes;
	// none: DefaultSizeShares of the trace's footprint.
	Sizes []int64
	// RAMShare is the share of each size given to RAM, the rest to flash
	// (default DefaultRAMShare).
	RAMShare float64
	// Block is the flash block size; 0 picks one per size (traceScale).
	Block int64
	// Rate, if positive, replays the requests at this many per second
	// instead of at the trace's own times.
	Rate float64
	// WarmShare is the share of the requests that warm the caches
	// uncounted (default 0: every request counts, as libCacheSim's own
	// simulator counts them).
	WarmShare float64
	// Parallel is the number of runs simulated at once (default 2).
	Parallel int
	// Python runs Script on the trace when it imports libcachesim
	// ("" looks for one: FindPython); NoLibCacheSim leaves it out.
	Python        string
	NoLibCacheSim bool
	// Dir receives the exported oracleGeneral trace, its manifest and
	// libCacheSim's JSON ("" a temporary directory, removed after).
	Dir      string
	Progress progress.Func
}

// Defaults of TraceOptions.
const (
	// DefaultRAMShare is the paper scale's RAM share of the total cache
	// (2 GiB of RAM beside 75 GB of flash).
	DefaultRAMShare = 0.027
	// maxTraceBlock is the largest flash block traceScale picks: the
	// scales' 16 MiB.
	maxTraceBlock = 16 << 20
	// minDataBlocks is the fewest flash data blocks traceScale accepts.
	minDataBlocks = 8
	// minRAMObjects is how many of the trace's largest objects RAM holds
	// at least, whatever RAMShare (up to half the total).
	minRAMObjects = 4
)

// DefaultSizeShares are the shares of a trace's footprint (the bytes of
// its distinct objects) swept when no size is given.
var DefaultSizeShares = []float64{0.02, 0.05, 0.1, 0.2, 0.5}

// TraceReport is a trace's replay: the trace and one run per size.
type TraceReport struct {
	Trace *ReadTrace `json:"trace"`
	// Requests is the requests counted (after the warm-up); Warm those
	// not counted.
	Requests int `json:"requests"`
	Warm     int `json:"warm"`
	// Rate is the replay's rate when the trace's own times were not used
	// (--rate, or a trace whose times are all equal); 0 otherwise.
	Rate float64 `json:"rate,omitempty"`
	// Spread is the number of requests that shared a timestamp with the
	// one before and were spread evenly over it (a log of whole seconds).
	Spread int         `json:"spread,omitempty"`
	Sizes  []*TraceRun `json:"sizes"`
	// LibCacheSim is why libCacheSim's figures are missing, if they are.
	LibCacheSim string `json:"libcachesim_missing,omitempty"`
}

// TraceRun is every policy at one total cache size.
type TraceRun struct {
	Capacity int64 `json:"capacity"`
	RAM      int64 `json:"ram"`
	Flash    int64 `json:"flash"` // flash data bytes
	Block    int64 `json:"block"`
	// Results are the block policies, in policies' order.
	Results []Result `json:"results"`
	// ObjectLRU is the tier core with the whole size as its RAM pool and
	// no flash: an object-level LRU, libCacheSim's LRU's counterpart.
	ObjectLRU Result  `json:"object_lru"`
	Belady    float64 `json:"belady"`
	// Yardstick is libCacheSim's policies at the same size, when run.
	Yardstick *Yardstick `json:"yardstick,omitempty"`
}

// traceScale sizes a replay of total bytes: RAM gets ramShare of it and
// flash the rest in whole blocks, of block bytes or else the largest power
// of two up to 16 MiB that gives flash 64 data blocks (4 KiB at least),
// RAM taking what does not fill a block, so that RAM and the flash data
// blocks add up to total exactly.
//
// RAM gets at least minRAM, up to half of total: an object larger than the
// RAM pool is never cached, in RAM or on flash (flash is filled from RAM).
func traceScale(total int64, ramShare float64, block, minRAM int64) (Scale, error) {
	ram := max(int64(float64(total)*ramShare), min(minRAM, total/2))
	flash := total - ram
	if block == 0 {
		block = maxTraceBlock
		for block > 4096 && flash/block < 64 {
			block /= 2
		}
	}
	if block < 4096 || block%4096 != 0 {
		return Scale{}, fmt.Errorf("policysim: flash block %d bytes: want a multiple of 4 KiB", block)
	}
	n := flash / block
	if n < minDataBlocks {
		return Scale{}, fmt.Errorf("policysim: a cache of %d bytes leaves flash %d blocks of %d bytes, fewer than %d: give a larger size",
			total, n, block, minDataBlocks)
	}
	return Scale{Name: "trace", RAM: total - n*block, SSD: (n + tier.MetaBlocks) * block, Block: block}, nil
}

// RunTrace replays rt at each size through the block policies, the
// object-level LRU and our Belady, and through libCacheSim's policies
// when python imports libcachesim.
func RunTrace(rt *ReadTrace, o TraceOptions) (*TraceReport, error) {
	say := o.Progress
	if say == nil {
		say = progress.Discard
	}
	if o.RAMShare == 0 {
		o.RAMShare = DefaultRAMShare
	}
	if o.Parallel <= 0 {
		o.Parallel = 2
	}
	if o.RAMShare < 0 || o.RAMShare >= 1 || o.WarmShare < 0 || o.WarmShare >= 1 {
		return nil, fmt.Errorf("policysim: RAM share %g and warm-up share %g must be in [0, 1)", o.RAMShare, o.WarmShare)
	}
	sizes := o.Sizes
	if len(sizes) == 0 {
		fp := rt.Footprint()
		for _, s := range DefaultSizeShares {
			sizes = append(sizes, int64(float64(fp)*s)/4096*4096)
		}
	}
	// RAM holds at least minRAMObjects of the largest objects.
	minRAM := minRAMObjects * slices.Max(rt.Cat.Sizes)
	t, rep := replayTimes(rt, o.Rate)
	rep.Warm = int(float64(len(t.Reqs)) * o.WarmShare)
	rep.Requests = len(t.Reqs) - rep.Warm
	var jobs []func() error
	for _, total := range sizes {
		sc, err := traceScale(total, o.RAMShare, o.Block, minRAM)
		if err != nil {
			return nil, err
		}
		sc.Rate, sc.WarmRequests = max(rep.Rate, 1), rep.Warm
		if rep.Warm == 0 {
			sc.WarmShare = 0
		}
		run := &TraceRun{Capacity: total, RAM: sc.RAM, Flash: total - sc.RAM, Block: sc.Block, Results: make([]Result, len(policies))}
		rep.Sizes = append(rep.Sizes, run)
		label := bytesLabel(total)
		tick := func(name string) func(int) {
			return func(n int) { say("%s %s: %d of %d requests", label, name, n, len(t.Reqs)) }
		}
		jobs = append(jobs, func() error {
			run.Belady = flashstream.BeladyHitRatio(t.Reqs, t.Cat.Sizes, total, rep.Warm)
			say("%s: our Belady %.3f", label, run.Belady)
			return nil
		}, func() error {
			r, err := replayTicking(t, sc, tier.Options{RAMBytes: total}, nil, tick("object LRU"))
			r.Policy = objectLRU
			run.ObjectLRU = r
			say("%s %s: hit ratio %.3f", label, objectLRU, r.HitRatio)
			return err
		})
		for i, p := range policies {
			jobs = append(jobs, func() error {
				r, err := replayTicking(t, sc, tier.Options{RAMBytes: sc.RAM, BlockSize: sc.Block, DeviceSize: sc.SSD,
					BlockPolicy: p, Admission: tier.Threshold{Max: 2}}, nil, tick(p.String()))
				run.Results[i] = r
				say("%s %s: hit ratio %.3f", label, p, r.HitRatio)
				return err
			})
		}
	}
	say("trace %s: %d requests (%d counted), %d objects, %d sizes, %d runs", rt.File, len(t.Reqs), rep.Requests,
		len(t.Cat.Sizes), len(sizes), len(jobs))
	if err := des.RunJobs(jobs, o.Parallel); err != nil {
		return nil, err
	}
	if o.NoLibCacheSim {
		rep.LibCacheSim = "left out (--no-libcachesim)"
		return rep, nil
	}
	return rep, traceYardstick(rep, t, o, say)
}

// objectLRU names TraceRun.ObjectLRU in reports.
const objectLRU = "object LRU (RAM pool only)"

// replayTimes returns the trace to replay and a report to fill: at rate
// when given or when the trace's times are all equal, else at the
// trace's times with requests that share a timestamp spread evenly up to
// the next one (a log in whole seconds would otherwise send a second's
// requests at one instant, with no monitor pass or flash write between
// them).
func replayTimes(rt *ReadTrace, rate float64) (*Trace, *TraceReport) {
	rep := &TraceReport{Trace: rt}
	t := &Trace{Workload: rt.Workload, Cat: rt.Cat, Reqs: rt.Reqs}
	ts := rt.Times
	if rate <= 0 && (len(ts) < 2 || ts[len(ts)-1] == ts[0]) {
		rate = 20
	}
	if rate > 0 {
		rep.Rate = rate
		return t, rep
	}
	t.Times = make([]time.Duration, len(ts))
	for i := 0; i < len(ts); {
		j := i + 1
		for j < len(ts) && ts[j] == ts[i] {
			j++
		}
		end := ts[i] + time.Second
		if j < len(ts) {
			end = ts[j]
		}
		for k := i; k < j; k++ {
			t.Times[k] = ts[i] + (end-ts[i])*time.Duration(k-i)/time.Duration(j-i)
		}
		rep.Spread += j - i - 1
		i = j
	}
	return t, rep
}

// traceYardstick exports t and runs Script on it at every size.
func traceYardstick(rep *TraceReport, t *Trace, o TraceOptions, say progress.Func) error {
	python := FindPython(o.Python)
	if python == "" || !scriptHere() {
		rep.LibCacheSim = "no python with libcachesim (pip install libcachesim==0.3.5 into .cache/lcs-venv), or " + Script + " not found: run from the repository's root"
		say("libCacheSim's figures left out: %s", rep.LibCacheSim)
		return nil
	}
	dir := o.Dir
	if dir == "" {
		tmp, err := os.MkdirTemp("", "strata-trace-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(tmp)
		dir = tmp
	}
	manifest, err := exportTrace(dir, t, rep)
	if err != nil {
		return err
	}
	out := filepath.Join(dir, "libcachesim.json")
	say("running %s with %s on %s", Script, python, manifest)
	if err := runScript(python, manifest, out, say); err != nil {
		return err
	}
	ys, err := readYardstick(out)
	if err != nil {
		return err
	}
	for _, run := range rep.Sizes {
		y, ok := ys[sizeName(run.Capacity)]
		if !ok {
			continue
		}
		if y.CacheSize != run.Capacity || y.Requests != int64(rep.Requests) {
			return fmt.Errorf("sim policies: %s: %s ran at %d bytes over %d requests, not %d over %d", out,
				sizeName(run.Capacity), y.CacheSize, y.Requests, run.Capacity, rep.Requests)
		}
		run.Yardstick = y
	}
	return nil
}

func scriptHere() bool {
	_, err := os.Stat(Script)
	return err == nil
}

// sizeName names a size's entry in the exported manifest.
func sizeName(capacity int64) string { return fmt.Sprintf("size-%d", capacity) }

// exportTrace writes t as trace.oracleGeneral into dir with a manifest
// of one entry per size (Script's input), and returns the manifest's path.
func exportTrace(dir string, t *Trace, rep *TraceReport) (string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	const name = "trace.oracleGeneral"
	if err := writeFile(filepath.Join(dir, name), func(w io.Writer) error { return writeOracleGeneral(w, t, max(rep.Rate, 1)) }); err != nil {
		return "", err
	}
	m := Manifest{Scale: "trace"}
	for _, run := range rep.Sizes {
		m.Workloads = append(m.Workloads, manifestEntry{Name: sizeName(run.Capacity), Trace: name, CacheSize: run.Capacity,
			Warm: rep.Warm, Requests: len(t.Reqs)})
	}
	path := filepath.Join(dir, "manifest.json")
	return path, writeFile(path, func(w io.Writer) error {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(m)
	})
}

// runScript runs Script on manifest, its output as progress.
func runScript(python, manifest, out string, say progress.Func) error {
	cmd := exec.Command(python, Script, manifest, "--json", out)
	var errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = progress.Writer(say), &errb
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("sim policies: %s: %v\n%s", Script, err, errb.Bytes())
	}
	return nil
}

// readYardstick reads Script's JSON: libCacheSim's figures by entry.
func readYardstick(path string) (map[string]*Yardstick, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var y yardstickFile
	if err := json.Unmarshal(b, &y); err != nil {
		return nil, fmt.Errorf("sim policies: %s: %w", path, err)
	}
	return y.Workloads, nil
}

// policyNames are the block policies' names, in order.
func policyNames() []string {
	var out []string
	for _, p := range policies {
		out = append(out, p.String())
	}
	return slices.Clip(out)
}
