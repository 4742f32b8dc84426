package policysim

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"github.com/strata-media/strata/internal/bytesize"
	"github.com/strata-media/strata/internal/core/tier"
	"github.com/strata-media/strata/internal/lab/report"
	"github.com/strata-media/strata/internal/progress"
)

// Script is the libCacheSim replay, relative to the module's root.
const Script = "scripts/policies-libcachesim.py"

// errUsage reports bad command-line arguments.
var errUsage = errors.New("policysim: usage")

// commandFlags are strata-lab sim policies' flags.
type commandFlags struct {
	scale, out, yardstick, export, python string
	policies                              string
	seed                                  uint64
	asJSON                                bool
	parallel                              int

	// Trace replay (--trace).
	trace, format, cacheSize, sizes, block string
	ramShare, rate, warm                   float64
	noLCS                                  bool
}

func parseFlags(args []string, stderr io.Writer) (commandFlags, error) {
	var f commandFlags
	fs := flag.NewFlagSet("strata-lab sim policies", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&f.scale, "scale", "small", "small (CI, under a minute) or paper (FlashStream §5's cache)")
	fs.StringVar(&f.out, "out", "", "directory for report.md and its SVG figures (default sim-policies-<scale>)")
	fs.BoolVar(&f.asJSON, "json", false, "print the results as JSON on stdout")
	fs.Uint64Var(&f.seed, "seed", 1, "seed of the datasets and the traces")
	fs.IntVar(&f.parallel, "parallel", 2, "runs simulated at once")
	fs.StringVar(&f.policies, "policies", "", "comma-separated block policies to run (default all; lru and the default, reinsert, always): shorter paper-scale runs")
	fs.StringVar(&f.yardstick, "yardstick", "", "libCacheSim results (JSON of "+Script+" --json) to set beside ours")
	fs.StringVar(&f.export, "export", "", "also write the traces in libCacheSim's oracleGeneral format, with manifest.json, into this directory")
	fs.StringVar(&f.python, "python", "", "python with libcachesim to run "+Script+" when no --yardstick is given "+
		"(default: .cache/lcs-venv/bin/python, then python3, if they import libcachesim)")
	fs.StringVar(&f.trace, "trace", "", "replay this trace file instead of the generated workloads (see --format)")
	fs.StringVar(&f.format, "format", "", "the trace's format: "+strings.Join(TraceFormats, ", ")+
		" (default: detected from its content; a .gz file is decompressed)")
	fs.StringVar(&f.cacheSize, "cache-size", "", "with --trace: the total cache size (RAM + flash), e.g. 10GiB")
	fs.StringVar(&f.sizes, "sizes", "", "with --trace: a sweep of total cache sizes, comma-separated "+
		"(default: 2, 5, 10, 20 and 50% of the trace's footprint)")
	fs.Float64Var(&f.ramShare, "ram-share", DefaultRAMShare, "with --trace: the share of each size given to RAM, the rest to flash")
	fs.StringVar(&f.block, "block", "", "with --trace: the flash block size (default: up to 16 MiB, 64 blocks of flash at least)")
	fs.Float64Var(&f.rate, "rate", 0, "with --trace: replay at this many requests per second instead of the trace's times")
	fs.Float64Var(&f.warm, "warm", 0, "with --trace: the share of requests that warm the caches uncounted")
	fs.BoolVar(&f.noLCS, "no-libcachesim", false, "with --trace: leave libCacheSim out")
	if err := fs.Parse(args); err != nil {
		return f, fmt.Errorf("%w: %v", errUsage, err)
	}
	if fs.NArg() > 0 {
		return f, fmt.Errorf("%w: unexpected argument %q", errUsage, fs.Arg(0))
	}
	if f.out == "" {
		f.out = "sim-policies-" + f.scale
		if f.trace != "" {
			f.out = "sim-policies-trace"
		}
	}
	return f, nil
}

// traceOptions reads the trace flags.
func (f commandFlags) traceOptions() (TraceOptions, error) {
	o := TraceOptions{RAMShare: f.ramShare, Rate: f.rate, WarmShare: f.warm, Parallel: f.parallel, Python: f.python,
		NoLibCacheSim: f.noLCS, Dir: f.export}
	if f.cacheSize != "" && f.sizes != "" {
		return o, fmt.Errorf("%w: --cache-size and --sizes: give one", errUsage)
	}
	list := f.sizes
	if f.cacheSize != "" {
		list = f.cacheSize
	}
	for _, s := range strings.Split(list, ",") {
		if s = strings.TrimSpace(s); s == "" {
			continue
		}
		n, err := bytesize.Parse(s)
		if err != nil || n <= 0 {
			return o, fmt.Errorf("%w: cache size %q: want bytes such as 512MiB or 10GB", errUsage, s)
		}
		o.Sizes = append(o.Sizes, n)
	}
	if f.block != "" {
		n, err := bytesize.Parse(f.block)
		if err != nil {
			return o, fmt.Errorf("%w: --block %q: %v", errUsage, f.block, err)
		}
		o.Block = n
	}
	if f.ramShare < 0 || f.ramShare >= 1 || f.warm < 0 || f.warm >= 1 || f.rate < 0 {
		return o, fmt.Errorf("%w: --ram-share and --warm must be in [0, 1), --rate not negative", errUsage)
	}
	if f.format != "" && !slices.Contains(TraceFormats, f.format) {
		return o, fmt.Errorf("%w: --format %q: want %s", errUsage, f.format, strings.Join(TraceFormats, ", "))
	}
	return o, nil
}

// traceCommand is strata-lab sim policies --trace: it reads the whole
// trace first (a bad record stops it before any run), replays it, and
// writes the report only when every run is done.
func traceCommand(f commandFlags, args []string, stdout, stderr io.Writer) error {
	o, err := f.traceOptions()
	if err != nil {
		return err
	}
	if f.yardstick != "" {
		return fmt.Errorf("%w: --yardstick is for the generated workloads; with --trace libCacheSim runs on the trace", errUsage)
	}
	say := progress.To(stderr)
	o.Progress = say
	rt, err := OpenTrace(f.trace, f.format, say)
	if err != nil {
		return err
	}
	say("trace %s: %s format, %d requests of %d objects, footprint %s", f.trace, rt.Format, len(rt.Reqs),
		len(rt.Cat.Sizes), bytesize.Format(rt.Footprint()))
	rep, err := RunTrace(rt, o)
	if err != nil {
		return err
	}
	md, figs := rep.Markdown(strings.TrimSpace("strata-lab sim policies " + strings.Join(args, " ")))
	if done, err := writeReport(f, md, figs, rep, stdout, stderr); done {
		return err
	}
	for _, s := range rep.Sizes {
		b := s.best()
		fmt.Fprintf(stdout, "%-10s best %-10s hit ratio %.3f, %s %.3f (Belady %.3f)", bytesLabel(s.Capacity), b.Policy,
			b.HitRatio, objectLRU, s.ObjectLRU.HitRatio, s.Belady)
		if y := s.Yardstick; y != nil {
			n, hr := y.bestOnline()
			fmt.Fprintf(stdout, ", libCacheSim LRU %.3f, best online %s %.3f", y.Policies["LRU"].HitRatio, n, hr)
		}
		fmt.Fprintln(stdout)
	}
	return nil
}

// writeReport writes the report (md and figs) under f.out and, with
// --json, rep on stdout: done is true when nothing more is to be printed
// (the JSON went out, or an error).
func writeReport(f commandFlags, md string, figs []report.Figure, rep any, stdout, stderr io.Writer) (done bool, err error) {
	if err := report.Write(f.out, md, figs); err != nil {
		return true, fmt.Errorf("sim policies: %w", err)
	}
	fmt.Fprintf(stderr, "report: %s/report.md\n", f.out)
	if !f.asJSON {
		return false, nil
	}
	enc := json.NewEncoder(stdout)
	enc.SetIndent("", "  ")
	return true, enc.Encode(rep)
}

// Command is strata-lab sim policies: it runs the experiment, writes the
// report, and puts libCacheSim's figures beside ours, from --yardstick or
// by running the script when python and libcachesim are at hand.
func Command(args []string, stdout, stderr io.Writer) error {
	f, err := parseFlags(args, stderr)
	if err != nil {
		return err
	}
	if f.trace != "" {
		return traceCommand(f, args, stdout, stderr)
	}
	sc, err := parseScale(f.scale)
	if err != nil {
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	var ps []tier.BlockPolicy
	for _, n := range strings.Split(f.policies, ",") {
		if n = strings.TrimSpace(n); n == "" {
			continue
		}
		p, err := tier.ParseBlockPolicy(n)
		if err != nil {
			return fmt.Errorf("%w: --policies: %v", errUsage, err)
		}
		ps = append(ps, p)
	}
	say := progress.To(stderr)
	rep, err := Run(sc, f.seed, options{Parallel: f.parallel, Progress: say, Policies: ps})
	if err != nil {
		return err
	}
	if err := yardstick(rep, f, say); err != nil {
		return err
	}
	md, figs := rep.Markdown(strings.TrimSpace("strata-lab sim policies " + strings.Join(args, " ")))
	if done, err := writeReport(f, md, figs, rep, stdout, stderr); done {
		return err
	}
	for _, w := range rep.Workloads {
		b := w.best()
		fmt.Fprintf(stdout, "%-12s best %-10s hit ratio %.3f (Belady %.3f)", w.Name, b.Policy, b.HitRatio, w.Belady)
		if y := w.Yardstick; y != nil {
			n, hr := y.bestOnline()
			fmt.Fprintf(stdout, ", libCacheSim best online %s %.3f", n, hr)
		}
		fmt.Fprintln(stdout)
	}
	return nil
}

// yardstick attaches libCacheSim's results: read from --yardstick, or
// computed by the script on exported traces when python can import
// libcachesim. Without either the report says so.
func yardstick(rep *Report, f commandFlags, progress func(string, ...any)) error {
	dir := f.export
	python := ""
	if f.yardstick == "" {
		python = findPython(f.python)
		if python == "" && dir == "" {
			progress("no --yardstick and no python with libcachesim: libCacheSim's figures left out")
			return nil
		}
	}
	if dir == "" && f.yardstick == "" {
		tmp, err := os.MkdirTemp("", "strata-policies-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(tmp)
		dir = tmp
	}
	if dir != "" {
		traces, err := Traces(rep.Scale, rep.Seed, nil)
		if err != nil {
			return err
		}
		manifest, err := ExportTraces(dir, rep.Scale, rep.Seed, traces)
		if err != nil {
			return err
		}
		progress("traces exported: %s", manifest)
		if python != "" {
			f.yardstick = filepath.Join(dir, "libcachesim.json")
			progress("running %s with %s", Script, python)
			cmd := exec.Command(python, Script, manifest, "--json", f.yardstick)
			if out, err := cmd.CombinedOutput(); err != nil {
				return fmt.Errorf("sim policies: %s: %v\n%s", Script, err, out)
			}
		}
	}
	if f.yardstick == "" {
		return nil
	}
	return attachYardstick(rep, f.yardstick)
}

// findPython returns a python that imports libcachesim and can reach the
// script, or "".
func findPython(explicit string) string {
	if _, err := os.Stat(Script); err != nil {
		return ""
	}
	return FindPython(explicit)
}

// FindPython returns explicit if it imports libcachesim, or without one
// the first of the repository's venv (.cache/lcs-venv, see Script) and
// python3 that does; "" when none.
func FindPython(explicit string) string {
	cands := []string{explicit}
	if explicit == "" {
		cands = []string{filepath.Join(".cache", "lcs-venv", "bin", "python"), "python3"}
	}
	for _, p := range cands {
		if exec.Command(p, "-c", "import libcachesim").Run() == nil {
			return p
		}
	}
	return ""
}

// yardstickFile is the JSON the script writes.
type yardstickFile struct {
	Scale     string                `json:"scale"`
	Seed      *uint64               `json:"seed"`
	Workloads map[string]*Yardstick `json:"workloads"`
}

// attachYardstick reads the script's JSON at path into rep's workloads.
// Figures of another scale or seed (other traces), or a workload whose
// cache size or request count differs from the report's, are an error:
// they would not be comparable.
func attachYardstick(rep *Report, path string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var y yardstickFile
	if err := json.Unmarshal(b, &y); err != nil {
		return fmt.Errorf("sim policies: %s: %w", path, err)
	}
	if y.Seed == nil || *y.Seed != rep.Seed || y.Scale != rep.Scale.Name {
		return fmt.Errorf("sim policies: %s is not of this run's traces (scale %q seed %v; this run: %q seed %d)",
			path, y.Scale, y.Seed, rep.Scale.Name, rep.Seed)
	}
	for _, w := range rep.Workloads {
		ys, ok := y.Workloads[w.Name]
		if !ok {
			continue
		}
		if ys.CacheSize != w.Capacity || ys.Requests != int64(w.Results[0].Requests) {
			return fmt.Errorf("sim policies: %s: %s was run at %d bytes over %d requests, this run is %d bytes over %d",
				path, w.Name, ys.CacheSize, ys.Requests, w.Capacity, w.Results[0].Requests)
		}
		w.Yardstick = ys
	}
	return nil
}
