package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/strata-media/strata/internal/banner"
	"github.com/strata-media/strata/internal/bytesize"
	"github.com/strata-media/strata/internal/lab/soak"
	"github.com/strata-media/strata/internal/media/images"
	"github.com/strata-media/strata/internal/node/app"
	"github.com/strata-media/strata/internal/tools/loadgen"
)

// soakFlags are strata-lab soak's flags.
type soakFlags struct {
	duration    time.Duration
	rate        float64
	fraction    float64
	dir, out    string
	overhead    bytesize.Value
	allowMisses bool
	seed        uint64
	strata      string // the server binary
}

// runSoak is strata-lab soak: it starts strata serve on the demo library with
// the default budgets, finds the highest rate without deadline misses
// (unless --rate), holds 80% of it for --duration while sampling the
// server's resident memory every second, and checks: no error, no
// deadline miss, memory under the bound.
func runSoak(args []string, stdout, stderr io.Writer) error {
	f := soakFlags{overhead: 128 << 20}
	fs := newFlags("soak", "[--edge] [--strata BIN] [--duration D] [--rate R | --fraction F] [--dir DIR] [--out DIR] [--overhead SIZE]", stderr)
	fs.DurationVar(&f.duration, "duration", 10*time.Minute, "how long to hold the rate")
	fs.Float64Var(&f.rate, "rate", 0, "requests/s (default: --fraction of the highest rate without misses, found first)")
	fs.Float64Var(&f.fraction, "fraction", 0.8, "fraction of the found maximum rate to hold")
	fs.StringVar(&f.dir, "dir", "", "data directory (default: a new temporary directory, removed after)")
	fs.StringVar(&f.out, "out", "", "write rss.csv, rss.svg and soak.json here")
	fs.Var(&f.overhead, "overhead", "resident memory allowed beyond the configured budgets (runtime, code, buffers)")
	fs.BoolVar(&f.allowMisses, "allow-misses", false, "accept deadline misses (short runs on a shared machine)")
	fs.Uint64Var(&f.seed, "seed", 1, "seed of the request sequence")
	edge := fs.Bool("edge", false, "soak an edge (strata serve --upstream) in front of an origin that publishes new versions and is stopped on a schedule")
	var e edgeSoakFlags
	fs.IntVar(&e.objects, "objects", 600, "with --edge: objects at the origin")
	fs.DurationVar(&e.outageEvery, "outage-every", time.Minute, "with --edge: stop the origin this often")
	fs.DurationVar(&e.outage, "outage", 20*time.Second, "with --edge: for this long")
	fs.DurationVar(&e.publish, "publish", time.Second, "with --edge: a new version of a random object this often")
	fs.StringVar(&e.memory, "memory", "512MiB", "with --edge: the edge's --memory budget, the resident memory bound")
	fs.StringVar(&e.flashSize, "flash-size", "1GiB", "with --edge: the edge's --flash-size")
	fs.IntVar(&e.concurrency, "clients", 32, "with --edge: concurrent clients finding the maximum")
	fs.DurationVar(&e.findDuration, "find-duration", 20*time.Second, "with --edge: how long to find the maximum")
	strata := strataFlag(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	var err error
	if f.strata, err = strataBinary(*strata); err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if f.dir == "" {
		dir, err := os.MkdirTemp("", "strata-soak-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		f.dir = dir
	}
	if *edge {
		return runEdgeSoak(ctx, f, e, stdout, stderr)
	}
	res, err := soakRun(ctx, f, stdout, stderr)
	if err != nil && !errors.Is(err, soak.ErrFailed) {
		return err
	}
	if werr := writeSoak(f.out, res); werr != nil {
		return werr
	}
	printSoak(stdout, res, err)
	if err != nil {
		return errFound
	}
	return nil
}

// soakRun starts the server and runs the soak.
func soakRun(ctx context.Context, f soakFlags, stdout, stderr io.Writer) (soak.Result, error) {
	cmd, url, exited, err := startSoakServer(f.strata, f.dir, stderr)
	if err != nil {
		return soak.Result{}, err
	}
	defer func() { cmd.Process.Signal(syscall.SIGTERM); <-exited }()
	bound, desc, err := soakBound(url, int64(f.overhead))
	if err != nil {
		return soak.Result{}, err
	}
	fmt.Fprintf(stdout, "soak: server %s (pid %d); memory bound %s = %s\n", url, cmd.Process.Pid, bytesize.Format(bound), desc)
	load := loadgen.Config{URL: url, Rate: f.rate, Duration: f.duration, Seed: f.seed}
	if f.rate == 0 {
		if load.Rate, err = soakFindMax(ctx, url, f.fraction, stdout); err != nil {
			return soak.Result{}, err
		}
	}
	fmt.Fprintf(stdout, "soak: %.1f req/s for %s\n", load.Rate, f.duration)
	return soak.Run(ctx, soak.Options{Load: load, PID: cmd.Process.Pid, Bound: bound, AllowMisses: f.allowMisses, Log: stdout})
}

// startSoakServer runs strata serve on dir with the default budgets and
// the demo library (described in synthetic.json; --demo's ffmpeg titles
// are not generated, so that nothing but the load runs).
func startSoakServer(bin, dir string, stderr io.Writer) (*exec.Cmd, string, <-chan struct{}, error) {
	b, _ := json.Marshal(app.DemoLibrary)
	if err := os.WriteFile(filepath.Join(dir, "synthetic.json"), b, 0o644); err != nil {
		return nil, "", nil, err
	}
	cmd := exec.Command(bin, "serve", "--data", dir, "--listen", "127.0.0.1:0", "--log-level", "warn")
	cmd.Stderr = stderr
	u, exited, err := banner.Start(cmd, 2*time.Minute)
	if err != nil {
		return nil, "", nil, err
	}
	return cmd, u, exited, nil
}

// soakBound is the resident memory the server may use: its RAM pool and
// ring (as /stats reports their budgets), the image store's LSM memtable
// and block cache, the flash index at 4 KiB per flash block (a block's
// header and the index entries of the segments it holds), and overhead.
func soakBound(url string, overhead int64) (int64, string, error) {
	var st struct {
		RAM struct {
			Budget int64 `json:"budget_bytes"`
		} `json:"ram"`
		Ring struct {
			Capacity int64 `json:"capacity_bytes"`
		} `json:"ring"`
		SSD struct {
			Blocks int64 `json:"blocks"`
		} `json:"ssd"`
	}
	resp, err := http.Get(url + "/stats")
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(&st); err != nil {
		return 0, "", err
	}
	lsm := int64(images.DefaultMemTableSize + images.DefaultBlockCacheSize)
	index := st.SSD.Blocks * app.FlashIndexPerBlock
	desc := fmt.Sprintf("RAM pool %s + ring %s + image LSM %s + flash index %s (%d blocks x 4 KiB) + overhead %s",
		bytesize.Format(st.RAM.Budget), bytesize.Format(st.Ring.Capacity), bytesize.Format(lsm),
		bytesize.Format(index), st.SSD.Blocks, bytesize.Format(overhead))
	return st.RAM.Budget + st.Ring.Capacity + lsm + index + overhead, desc, nil
}

// soakFindMax finds the highest rate without deadline misses (20 s
// trials after a 5 s warmup) and returns fraction of it.
func soakFindMax(ctx context.Context, url string, fraction float64, w io.Writer) (float64, error) {
	n := 0
	res, err := loadgen.FindMax(ctx, loadgen.Config{URL: url, Rate: 20, Duration: 20 * time.Second, Warmup: 5 * time.Second},
		loadgen.SearchOptions{OnTrial: func(t loadgen.Trial) {
			n++
			fmt.Fprintf(w, "soak: find-max trial %d at %.1f req/s: %s\n", n, t.RateRPS, t.Summary())
		}})
	if err != nil {
		return 0, err
	}
	if res.MaxRPS == 0 {
		return 0, errors.New("soak: no rate ran without deadline misses")
	}
	fmt.Fprintf(w, "soak: maximum %.1f req/s at 0%% misses (first failing %.1f)\n", res.MaxRPS, res.FailRPS)
	return fraction * res.MaxRPS, nil
}

// writeSoak writes the samples, their plot and the report into dir.
func writeSoak(dir string, res soak.Result) error {
	if dir == "" {
		return nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	title := fmt.Sprintf("strata serve resident memory at %.0f req/s", res.Report.RateRPS)
	rep, _ := json.MarshalIndent(struct {
		Report loadgen.Report `json:"report"`
		MaxRSS int64          `json:"max_rss_bytes"`
		Bound  int64          `json:"bound_bytes"`
	}{res.Report, res.MaxRSS, res.Bound}, "", "  ")
	return errors.Join(
		os.WriteFile(filepath.Join(dir, "rss.csv"), res.CSV(), 0o644),
		os.WriteFile(filepath.Join(dir, "rss.svg"), res.SVG(title), 0o644),
		os.WriteFile(filepath.Join(dir, "soak.json"), append(rep, '\n'), 0o644))
}

func printSoak(w io.Writer, res soak.Result, err error) {
	r := res.Report
	fmt.Fprintf(w, "soak: %.0f s at %.1f req/s: %d requests, %d completed, %d errors, %d deadline misses, p50 %.1f ms, p99 %.1f ms\n",
		r.DurationS, r.RateRPS, r.Requests, r.Completed, r.Errors, r.Misses, r.P50Ms, r.P99Ms)
	fmt.Fprintf(w, "soak: resident memory max %s over %d samples, bound %s\n",
		bytesize.Format(res.MaxRSS), len(res.Samples), bytesize.Format(res.Bound))
	if err != nil {
		fmt.Fprintf(w, "soak: FAILED: %v\n", err)
	} else {
		fmt.Fprintln(w, "soak: clean")
	}
}
