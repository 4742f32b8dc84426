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
	"strings"

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
	seed                                  uint64
	asJSON                                bool
	parallel                              int
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
	fs.StringVar(&f.yardstick, "yardstick", "", "libCacheSim results (JSON of "+Script+" --json) to set beside ours")
	fs.StringVar(&f.export, "export", "", "also write the traces in libCacheSim's oracleGeneral format, with manifest.json, into this directory")
	fs.StringVar(&f.python, "python", "", "python with libcachesim to run "+Script+" when no --yardstick is given "+
		"(default: .cache/lcs-venv/bin/python, then python3, if they import libcachesim)")
	if err := fs.Parse(args); err != nil {
		return f, fmt.Errorf("%w: %v", errUsage, err)
	}
	if f.out == "" {
		f.out = "sim-policies-" + f.scale
	}
	return f, nil
}

// Command is strata-lab sim policies: it runs the experiment, writes the
// report, and puts libCacheSim's figures beside ours, from --yardstick or
// by running the script when python and libcachesim are at hand.
func Command(args []string, stdout, stderr io.Writer) error {
	f, err := parseFlags(args, stderr)
	if err != nil {
		return err
	}
	sc, err := parseScale(f.scale)
	if err != nil {
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	say := progress.To(stderr)
	rep, err := Run(sc, f.seed, options{Parallel: f.parallel, Progress: say})
	if err != nil {
		return err
	}
	if err := yardstick(rep, f, say); err != nil {
		return err
	}
	md, figs := rep.Markdown(strings.TrimSpace("strata-lab sim policies " + strings.Join(args, " ")))
	if err := report.Write(f.out, md, figs); err != nil {
		return fmt.Errorf("sim policies: %w", err)
	}
	fmt.Fprintf(stderr, "report: %s/report.md\n", f.out)
	if f.asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(rep)
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
