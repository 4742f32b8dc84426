package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/strata-media/strata/internal/cli"
	"github.com/strata-media/strata/internal/tools/loadgen"
)

// benchSynopsis is bench's usage line.
const benchSynopsis = "URL [--catalog URL] [--rate R] [--duration D] [--theta T | --zipf-s S] [--json] [--find-max [--confirm D]] [--seed N] [--max-inflight N] [--warmup D] [--release-every D] [--viewers N] [--fresh-seeds] [--files ID,ID,... [--bitrate B]]"

// benchOptions are bench's flags beyond loadgen.Config.
type benchOptions struct {
	json       bool
	findMax    bool
	freshSeeds bool
	confirm    time.Duration // --confirm
	// reportToken is the admin token file of --report-token.
	reportToken string
	// files are the whole files of --files; bitrate their viewers' rate.
	files   []string
	bitrate float64
	law     bool // --theta or --zipf-s was given
}

func runBench(args []string, stdout, stderr io.Writer) error {
	cfg, opt, err := parseBench(args, stderr)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	context.AfterFunc(ctx, stop) // a second interrupt kills at once
	if opt.files != nil {
		return benchFiles(ctx, cfg, opt, stdout, stderr)
	}
	cfg.Progress = benchProgress(stderr)
	var dash *loadgen.DashboardReporter
	if opt.reportToken != "" {
		if dash, err = loadgen.NewDashboardReporter(cfg.URL, opt.reportToken, stderr); err != nil {
			return fmt.Errorf("%w: %w", errUsage, err)
		}
		cfg.Progress = dash.Progress(cfg.Progress)
	}
	if opt.findMax {
		return benchFindMax(ctx, cfg, opt, stdout, stderr)
	}
	rep, err := loadgen.Run(ctx, cfg)
	if err != nil && !rep.Interrupted {
		return benchError(cfg, err)
	}
	if dash != nil {
		dash.Post(rep.Requests, rep.Misses)
	}
	if perr := cli.Output(stdout, opt.json, rep, func() { rep.WriteText(stdout) }); perr != nil {
		return perr
	}
	return err
}

// benchFindMax runs a --find-max search.
func benchFindMax(ctx context.Context, cfg loadgen.Config, opt benchOptions, stdout, stderr io.Writer) error {
	n := 0
	res, err := loadgen.FindMax(ctx, cfg, loadgen.SearchOptions{FreshSeeds: opt.freshSeeds, Confirm: opt.confirm, OnTrial: func(t loadgen.Trial) {
		n++
		kind := "trial"
		if t.Confirm {
			kind = "confirming run"
		}
		fmt.Fprintf(stderr, "find-max: %s %d at %.1f req/s: %s\n", kind, n, t.RateRPS, t.Summary())
	}})
	if err != nil && ctx.Err() == nil {
		return benchError(cfg, err)
	}
	if perr := cli.Output(stdout, opt.json, res, func() { res.WriteText(stdout, cfg) }); perr != nil {
		return perr
	}
	return err
}

// benchFiles runs whole-file sessions (--files): viewers arriving at
// --rate per second, each playing one file from start to end at --bitrate.
func benchFiles(ctx context.Context, cfg loadgen.Config, opt benchOptions, stdout, stderr io.Writer) error {
	fc := loadgen.FilesConfig{URL: cfg.URL, Files: opt.files, Rate: cfg.Rate, Bitrate: opt.bitrate,
		Duration: cfg.Duration, Warmup: cfg.Warmup, Seed: cfg.Seed, MaxViewers: cfg.MaxInflight,
		Progress: func(p loadgen.FilesProgress) {
			phase := ""
			if p.Warmup {
				phase = " (warmup)"
			}
			fmt.Fprintf(stderr, "bench: %5.1fs%s  arrived %d  playing %d  rejected %d  done %d  stalled %d  errors %d\n",
				p.Elapsed.Seconds(), phase, p.Arrived, p.Playing, p.Rejected, p.Completed, p.Stalled, p.ErrorsIn)
		}}
	if opt.law {
		fc.Popularity = cfg.Popularity
	}
	rep, err := loadgen.RunFiles(ctx, fc)
	if err != nil && !rep.Interrupted {
		return benchError(cfg, err)
	}
	if perr := cli.Output(stdout, opt.json, rep, func() { rep.WriteText(stdout) }); perr != nil {
		return perr
	}
	return err
}

// benchError marks configuration errors as usage errors, and says where
// the titles of an edge are when its catalog is empty.
func benchError(cfg loadgen.Config, err error) error {
	switch {
	case errors.Is(err, loadgen.ErrConfig):
		return fmt.Errorf("%w: %w", errUsage, err)
	case errors.Is(err, loadgen.ErrEmptyCatalog) && cfg.Catalog == "":
		return fmt.Errorf("%w\n(an edge on / lists only its own titles at /videos, none of its upstream's: "+
			"give their catalog with --catalog http://UPSTREAM/videos)", err)
	}
	return err
}

// parseBench turns bench's arguments into a run configuration. The URL
// may come before or after the flags.
func parseBench(args []string, stderr io.Writer) (loadgen.Config, benchOptions, error) {
	fs := newFlags("bench", benchSynopsis, stderr)
	var cfg loadgen.Config
	var opt benchOptions
	fs.StringVar(&cfg.Catalog, "catalog", "", "read the titles from this catalog (a GET /videos document) instead of URL/videos: for an edge on /, which answers /videos itself, its upstream's (http://ORIGIN/videos)")
	fs.Float64Var(&cfg.Rate, "rate", loadgen.DefaultRate, "requests per second, sent open-loop on schedule whatever the responses do (with --find-max: the first trial's rate)")
	fs.DurationVar(&cfg.Duration, "duration", loadgen.DefaultDuration, "how long to measure (with --find-max: each trial; 30s or more suggested)")
	fs.DurationVar(&cfg.Warmup, "warmup", 0, "send at --rate for this long before measuring (before each trial with --find-max)")
	theta := fs.Float64("theta", loadgen.DefaultTheta, "title popularity p(i) ~ 1/i^(1-theta) over titles in catalog order: theta, not the exponent (FlashStream §5.1's 0.2 is s = 0.8)")
	s := fs.Float64("zipf-s", 0, "title popularity p(i) ~ 1/i^s over titles in catalog order: the exponent s itself (instead of --theta)")
	fs.Uint64Var(&cfg.Seed, "seed", loadgen.DefaultSeed, "seed of the title, rendition and segment sequence")
	fs.IntVar(&cfg.MaxInflight, "max-inflight", loadgen.DefaultMaxInflight, "most requests in flight; a request due beyond it is not sent and counts as an error and a miss")
	fs.DurationVar(&cfg.ReleaseEvery, "release-every", 0, "shift popularity: every this long a new title (the catalog's last not yet released) becomes the most popular (0: fixed popularity)")
	fs.IntVar(&cfg.Viewers, "viewers", 0, "whole-title sessions of segments: this many viewers at once, each watching a title (by the popularity law) from its first segment to its last in one rendition, each request the next segment of a viewer at random (0: each request a title, rendition and segment drawn on its own)")
	fs.BoolVar(&opt.json, "json", false, "print the report as one JSON object")
	fs.StringVar(&opt.reportToken, "report-token", "", "post the run's progress (requests, deadline misses) to the server's dashboard, authenticated with the admin token in this file (the server prints its path at start)")
	fs.DurationVar(&opt.confirm, "confirm", 0, "with --find-max: run the rate found once more for this long, stepping down 5% until such a run is clean (the rate a long run at it needs; 0: no confirmation)")
	fs.BoolVar(&opt.freshSeeds, "fresh-seeds", false, "with --find-max: trial i runs seed --seed+i, so a cache does not see earlier trials' requests again")
	fs.BoolVar(&opt.findMax, "find-max", false, "search for the highest rate with 0% misses: double from --rate, then bisect to within 5%")
	filesList := fs.String("files", "", "whole-file sessions instead of segments: these file ids (comma-separated, most popular first), each viewer arriving at --rate per second (Poisson) and playing one file from start to end at --bitrate (popularity default s=0.271, the VoD paper's)")
	fs.Float64Var(&opt.bitrate, "bitrate", loadgen.DefaultFilesBitrate, "with --files: each viewer's play-out rate, bytes/s")
	target, err := cli.ParseWithArg(fs, args, "the server URL is required, e.g. strata bench http://127.0.0.1:8080")
	if err != nil {
		return cfg, opt, err
	}
	cfg.URL = target
	fs.Visit(func(f *flag.Flag) { opt.law = opt.law || f.Name == "theta" || f.Name == "zipf-s" })
	if *filesList != "" {
		opt.files = strings.Split(*filesList, ",")
		if opt.findMax || !(opt.bitrate > 0) || cfg.Viewers != 0 {
			return cfg, opt, fmt.Errorf("%w: --files takes a --bitrate > 0 and no --find-max or --viewers", errUsage)
		}
	}
	if opt.confirm < 0 || opt.confirm > 0 && !opt.findMax {
		return cfg, opt, fmt.Errorf("%w: --confirm takes a duration >= 0, with --find-max", errUsage)
	}
	cfg.Popularity, err = benchLaw(fs, *theta, *s)
	if err != nil {
		return cfg, opt, err
	}
	return cfg, opt, checkBench(cfg)
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
	case cfg.Viewers < 0:
		return fmt.Errorf("%w: --viewers must be >= 0", errUsage)
	case cfg.Seed == 0:
		return fmt.Errorf("%w: --seed must be > 0", errUsage)
	}
	if u, err := url.Parse(cfg.Catalog); cfg.Catalog != "" && (err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "") {
		return fmt.Errorf("%w: --catalog %q: want an http:// or https:// URL", errUsage, cfg.Catalog)
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
