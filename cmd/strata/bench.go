package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/strata-media/strata/internal/tools/loadgen"
)

// benchSynopsis is bench's usage line.
const benchSynopsis = "URL [--rate R] [--duration D] [--theta T | --zipf-s S] [--json] [--find-max] [--seed N] [--max-inflight N] [--warmup D]"

// benchOptions are bench's flags beyond loadgen.Config.
type benchOptions struct {
	json    bool
	findMax bool
	// reportToken is the admin token file of --report-token.
	reportToken string
}

func runBench(args []string, stdout, stderr io.Writer) error {
	cfg, opt, err := parseBench(args, stderr)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	context.AfterFunc(ctx, stop) // a second interrupt kills at once
	cfg.Progress = benchProgress(stderr)
	var rep0 *benchReporter
	if opt.reportToken != "" {
		if rep0, err = newBenchReporter(cfg.URL, opt.reportToken, stderr); err != nil {
			return err
		}
		cfg.Progress = rep0.progress(cfg.Progress)
	}
	if opt.findMax {
		return benchFindMax(ctx, cfg, opt, stdout, stderr)
	}
	rep, err := loadgen.Run(ctx, cfg)
	if err != nil && !rep.Interrupted {
		return benchError(err)
	}
	if rep0 != nil {
		rep0.post(rep.Requests, rep.Misses)
	}
	if perr := output(stdout, opt.json, rep, func() { printReport(stdout, rep) }); perr != nil {
		return perr
	}
	return err
}

// benchFindMax runs a --find-max search.
func benchFindMax(ctx context.Context, cfg loadgen.Config, opt benchOptions, stdout, stderr io.Writer) error {
	n := 0
	res, err := loadgen.FindMax(ctx, cfg, loadgen.SearchOptions{OnTrial: func(t loadgen.Trial) {
		n++
		fmt.Fprintf(stderr, "find-max: trial %d at %.1f req/s: %s\n", n, t.RateRPS, trialResult(t))
	}})
	if err != nil && ctx.Err() == nil {
		return benchError(err)
	}
	if perr := output(stdout, opt.json, res, func() { printMax(stdout, cfg, res) }); perr != nil {
		return perr
	}
	return err
}

// benchError marks configuration errors as usage errors.
func benchError(err error) error {
	if errors.Is(err, loadgen.ErrConfig) {
		return fmt.Errorf("%w: %w", errUsage, err)
	}
	return err
}

// output writes v as indented JSON, or calls table.
func output(w io.Writer, asJSON bool, v any, table func()) error {
	if !asJSON {
		table()
		return nil
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// parseBench turns bench's arguments into a run configuration. The URL
// may come before or after the flags.
func parseBench(args []string, stderr io.Writer) (loadgen.Config, benchOptions, error) {
	fs := newFlags("bench", benchSynopsis, stderr)
	var cfg loadgen.Config
	var opt benchOptions
	fs.Float64Var(&cfg.Rate, "rate", loadgen.DefaultRate, "requests per second, sent open-loop on schedule whatever the responses do (with --find-max: the first trial's rate)")
	fs.DurationVar(&cfg.Duration, "duration", loadgen.DefaultDuration, "how long to measure (with --find-max: each trial; 30s or more suggested)")
	fs.DurationVar(&cfg.Warmup, "warmup", 0, "send at --rate for this long before measuring (before each trial with --find-max)")
	theta := fs.Float64("theta", loadgen.DefaultTheta, "title popularity p(i) ~ 1/i^(1-theta) over titles in catalog order: theta, not the exponent (FlashStream §5.1's 0.2 is s = 0.8)")
	s := fs.Float64("zipf-s", 0, "title popularity p(i) ~ 1/i^s over titles in catalog order: the exponent s itself (instead of --theta)")
	fs.Uint64Var(&cfg.Seed, "seed", loadgen.DefaultSeed, "seed of the title, rendition and segment sequence")
	fs.IntVar(&cfg.MaxInflight, "max-inflight", loadgen.DefaultMaxInflight, "most requests in flight; a request due beyond it is not sent and counts as an error and a miss")
	fs.BoolVar(&opt.json, "json", false, "print the report as one JSON object")
	fs.StringVar(&opt.reportToken, "report-token", "", "post the run's progress (requests, deadline misses) to the server's dashboard, authenticated with the admin token in this file (the server prints its path at start)")
	fs.BoolVar(&opt.findMax, "find-max", false, "search for the highest rate with 0% misses: double from --rate, then bisect to within 5%")
	target, err := parseWithURL(fs, args)
	if err != nil {
		return cfg, opt, err
	}
	cfg.URL = target
	cfg.Popularity, err = benchLaw(fs, *theta, *s)
	if err != nil {
		return cfg, opt, err
	}
	return cfg, opt, checkBench(cfg)
}

// parseWithURL parses fs from args holding one URL before or after the
// flags, and returns the URL.
func parseWithURL(fs *flag.FlagSet, args []string) (string, error) {
	var target string
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		target, args = args[0], args[1:]
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return "", err
		}
		return "", fmt.Errorf("%w: %w", errUsage, err)
	}
	rest := fs.Args()
	if target == "" && len(rest) > 0 {
		target, rest = rest[0], rest[1:]
	}
	if len(rest) > 0 {
		return "", fmt.Errorf("%w: unexpected argument %q", errUsage, rest[0])
	}
	if target == "" {
		return "", fmt.Errorf("%w: the server URL is required, e.g. strata bench http://127.0.0.1:8080", errUsage)
	}
	return target, nil
}

// benchLaw is the popularity law --theta or --zipf-s names.
func benchLaw(fs *flag.FlagSet, theta, s float64) (loadgen.Law, error) {
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	switch {
	case set["theta"] && set["zipf-s"]:
		return loadgen.Law{}, fmt.Errorf("%w: give --theta or --zipf-s, not both", errUsage)
	case set["zipf-s"]:
		return loadgen.Exponent(s), nil
	}
	return loadgen.Theta(theta), nil
}

// checkBench rejects flag values the library would default or refuse.
func checkBench(cfg loadgen.Config) error {
	switch {
	case !(cfg.Rate > 0):
		return fmt.Errorf("%w: --rate must be > 0", errUsage)
	case cfg.Duration <= 0:
		return fmt.Errorf("%w: --duration must be > 0", errUsage)
	case cfg.Warmup < 0:
		return fmt.Errorf("%w: --warmup must be >= 0", errUsage)
	case cfg.MaxInflight <= 0:
		return fmt.Errorf("%w: --max-inflight must be > 0", errUsage)
	case cfg.Seed == 0:
		return fmt.Errorf("%w: --seed must be > 0", errUsage)
	}
	return nil
}

// benchProgress prints a run's progress, about once a second.
func benchProgress(w io.Writer) func(loadgen.Progress) {
	return func(p loadgen.Progress) {
		phase := ""
		if p.Warmup {
			phase = " (warmup)"
		}
		fmt.Fprintf(w, "bench: %5.1fs%s  sent %d  done %d  in flight %d  misses %d\n",
			p.Elapsed.Seconds(), phase, p.Sent, p.Done, p.InFlight, p.Misses)
	}
}

// trialResult summarizes a find-max trial.
func trialResult(t loadgen.Trial) string {
	verdict := "clean"
	if !t.Clean {
		verdict = "MISSES"
	}
	return fmt.Sprintf("%s, %d of %d missed (%d errors), p99 %.1f ms, %.1f req/s done",
		verdict, t.Misses, t.Requests, t.Errors, t.P99Ms, t.ThroughputRPS)
}

// printReport prints a run's report as a table.
func printReport(w io.Writer, r loadgen.Report) {
	fmt.Fprintf(w, "bench %s: %g req/s open-loop for %s (warmup %s), titles by %s over %d titles, seed %d\n",
		r.URL, r.RateRPS, seconds(r.DurationS), seconds(r.WarmupS), r.Popularity, r.CatalogTitles, r.Seed)
	if r.Interrupted {
		fmt.Fprintln(w, "  interrupted: the report covers the run so far")
	}
	fmt.Fprintf(w, "  requests    %d due, %d completed, %d errors (%d dropped at --max-inflight)\n", r.Requests, r.Completed, r.Errors, r.Dropped)
	fmt.Fprintf(w, "  misses      %d (%.3f%%): %d late, %d errors\n", r.Misses, 100*r.MissRatio, r.Late, r.Errors)
	fmt.Fprintf(w, "  throughput  %.1f req/s, %.2f MB/s\n", r.ThroughputRPS, r.MBPerS)
	fmt.Fprintf(w, "  latency ms  p50 %.1f  p90 %.1f  p99 %.1f  p99.9 %.1f  max %.1f (exact, over completed requests)\n",
		r.P50Ms, r.P90Ms, r.P99Ms, r.P999Ms, r.MaxMs)
	printKinds(w, r.ErrorKinds)
	printTop(w, r)
	printServer(w, r.Server)
}

func seconds(s float64) string {
	return (time.Duration(s * float64(time.Second))).Round(time.Millisecond).String()
}

// printKinds prints error counts by kind.
func printKinds(w io.Writer, kinds map[string]int) {
	for _, k := range slices.Sorted(maps.Keys(kinds)) {
		fmt.Fprintf(w, "  error       %s: %d\n", k, kinds[k])
	}
}

// printTop prints the share of requests of the most popular titles.
func printTop(w io.Writer, r loadgen.Report) {
	if r.Requests == 0 {
		return
	}
	var parts []string
	for _, t := range r.Titles[:min(3, len(r.Titles))] {
		parts = append(parts, fmt.Sprintf("%s %.1f%%", t.ID, 100*float64(t.Requests)/float64(r.Requests)))
	}
	fmt.Fprintf(w, "  top titles  %s\n", strings.Join(parts, ", "))
}

// printServer prints the server's counters that changed over the run.
func printServer(w io.Writer, server map[string]float64) {
	if server == nil {
		fmt.Fprintln(w, "  server      no /stats")
		return
	}
	unchanged := 0
	for _, k := range slices.Sorted(maps.Keys(server)) {
		if server[k] == 0 {
			unchanged++
			continue
		}
		fmt.Fprintf(w, "  server      %-28s %+g\n", k, server[k])
	}
	fmt.Fprintf(w, "  server      %d other /stats values unchanged\n", unchanged)
}

// printMax prints a find-max search as a table.
func printMax(w io.Writer, cfg loadgen.Config, m loadgen.MaxResult) {
	state := "converged"
	if !m.Converged {
		state = "not converged"
	}
	fmt.Fprintf(w, "find-max %s: %s (%d trials of %s, %s)\n", cfg.URL, maxVerdict(m), len(m.Trials), cfg.Duration, state)
	fmt.Fprintf(w, "  %10s %9s %7s %7s %10s %8s  %s\n", "rate req/s", "requests", "errors", "misses", "miss ratio", "p99 ms", "result")
	for _, t := range m.Trials {
		verdict := "clean"
		if !t.Clean {
			verdict = "misses"
		}
		fmt.Fprintf(w, "  %10.1f %9d %7d %7d %10.4f %8.1f  %s\n", t.RateRPS, t.Requests, t.Errors, t.Misses, t.MissRatio, t.P99Ms, verdict)
	}
}

// maxVerdict states a search's answer.
func maxVerdict(m loadgen.MaxResult) string {
	switch {
	case m.MaxRPS == 0 && m.FailRPS == 0:
		return "no trial ran"
	case m.MaxRPS == 0:
		return fmt.Sprintf("every rate missed, down to %.1f req/s", m.FailRPS)
	case m.FailRPS == 0:
		return fmt.Sprintf("no misses up to %.1f req/s", m.MaxRPS)
	}
	return fmt.Sprintf("highest rate with 0%% misses %.1f req/s (lowest with misses %.1f)", m.MaxRPS, m.FailRPS)
}
