package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/strata-media/strata/internal/lab/sim/streamsim"
	"github.com/strata-media/strata/internal/progress"
)

// traceList is a repeatable, comma-separated list of trace files.
type traceList []string

func (t *traceList) String() string { return strings.Join(*t, ",") }

// Set adds the comma-separated paths of v.
func (t *traceList) Set(v string) error {
	n := len(*t)
	for _, p := range strings.Split(v, ",") {
		if p = strings.TrimSpace(p); p != "" {
			*t = append(*t, p)
		}
	}
	if len(*t) == n {
		return errors.New("names no file")
	}
	return nil
}

// streamsFlags are strata-lab sim streams' flags: the common ones of
// parseSimFlags and the traces.
type streamsFlags struct {
	simFlags
	traces     traceList
	traceFill  float64
	benchmarks string
}

func parseStreamsFlags(args []string, stderr io.Writer) (streamsFlags, error) {
	var f streamsFlags
	fs := newFlags("sim streams", "[--scale small|paper] [--out DIR] [--json] [--trace FILE]...", stderr)
	fs.StringVar(&f.scale, "scale", "small", "small (CI, a 1/16 slice of the drive) or paper (the 256 GB drive)")
	fs.StringVar(&f.out, "out", "", "directory for report.md and its SVG figures (default sim-streams-<scale>)")
	fs.BoolVar(&f.asJSON, "json", false, "print the results as JSON on stdout")
	fs.Uint64Var(&f.seed, "seed", 1, "seed of the segment cache's library and requests and of the random-write cache")
	fs.IntVar(&f.parallel, "parallel", 2, "replays run at once")
	fs.Var(&f.traces, "trace", "write trace to replay (strata serve --trace-writes); repeatable or comma-separated")
	fs.Float64Var(&f.traceFill, "trace-fill", 0.9, "share of the model drive a trace's devices fill")
	fs.StringVar(&f.benchmarks, "benchmarks", "", "also write the BENCHMARKS.md section to this file")
	if err := parseFlags(fs, args); err != nil {
		return f, err
	}
	if !(f.traceFill >= 0.05 && f.traceFill <= 1) { // NaN fails too
		return f, fmt.Errorf("%w: --trace-fill %v must be in [0.05, 1]", errUsage, f.traceFill)
	}
	if f.parallel < 1 {
		return f, fmt.Errorf("%w: --parallel %d must be at least 1", errUsage, f.parallel)
	}
	if f.out == "" {
		f.out = "sim-streams-" + f.scale
	}
	return f, nil
}

// runSimStreams is strata-lab sim streams: the multi-streamed SSD's §4
// experiments on the FTL model.
func runSimStreams(args []string, stdout, stderr io.Writer) error {
	f, err := parseStreamsFlags(args, stderr)
	if err != nil {
		return err
	}
	sc, err := streamsim.ParseScale(f.scale)
	if err != nil {
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	rep, err := streamsim.Run(streamsim.Options{Scale: sc, Seed: f.seed, Traces: f.traces, TraceFill: f.traceFill,
		Parallel: f.parallel, Progress: progress.To(stderr)})
	if err != nil {
		return err
	}
	if err := finishSim("streams", args, f.simFlags, rep, stdout, stderr, func() { printStreamsSummary(rep, stdout) }); err != nil {
		return err
	}
	if f.benchmarks != "" {
		cmd := strings.TrimSpace("strata-lab sim streams " + strings.Join(args, " "))
		if err := os.WriteFile(f.benchmarks, []byte(rep.Benchmarks(cmd)), 0o644); err != nil {
			return fmt.Errorf("sim streams: writing the benchmarks section: %w", err)
		}
	}
	return nil
}

// printStreamsSummary prints one line per replay.
func printStreamsSummary(rep *streamsim.Report, w io.Writer) {
	for _, e := range rep.Experiments {
		for _, r := range e.Runs {
			trim := "no TRIM"
			if r.Trim {
				trim = "TRIM"
			}
			fmt.Fprintf(w, "%-22s %-12s %-7s WAF %6.3f  throughput %4.2f of fresh  p99.9 %7.1f ms\n",
				e.Name, r.Mapping, trim, r.Aged.WAF, r.Aged.Norm, r.Aged.P999ms)
		}
	}
}
