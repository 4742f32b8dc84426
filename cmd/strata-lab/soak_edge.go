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
	"path/filepath"
	"syscall"
	"time"

	"github.com/strata-media/strata/internal/banner"
	"github.com/strata-media/strata/internal/bytesize"
	"github.com/strata-media/strata/internal/lab/soak"
	"github.com/strata-media/strata/internal/lab/torture/versions"
)

// edgeSoakFlags are strata-lab soak --edge's own flags.
type edgeSoakFlags struct {
	objects             int
	outageEvery, outage time.Duration
	publish             time.Duration
	memory, flashSize   string
	concurrency         int
	findDuration        time.Duration
}

// runEdgeSoak is strata-lab soak --edge: an in-process origin publishing
// new versions (internal/lab/torture/versions), strata serve --upstream
// in front of it with a memory budget, the edge's maximum found with the
// cache warm (unless --rate), then fraction of it held for the duration
// while the origin is stopped and restarted on a schedule; every answer is
// checked whole, errors are classified by cause, VmRSS is sampled.
func runEdgeSoak(ctx context.Context, f soakFlags, e edgeSoakFlags, stdout, stderr io.Writer) error {
	o := versions.New(versions.Options{Objects: e.objects, Seed: f.seed})
	if err := o.Start("127.0.0.1:0"); err != nil {
		return err
	}
	defer o.Stop()
	cmd := exec.Command(f.strata, "serve", "--data", f.dir, "--listen", "127.0.0.1:0", "--upstream", "/="+o.URL()+"/",
		"--memory", e.memory, "--flash-size", e.flashSize, "--log-level", "warn")
	cmd.Stderr = stderr
	url, exited, err := banner.Start(cmd, 2*time.Minute)
	if err != nil {
		return err
	}
	defer func() { cmd.Process.Signal(syscall.SIGTERM); <-exited }()
	bound, err := memoryBudget(url)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "soak: edge %s (pid %d) in front of origin %s (%d objects, max-age %s, a new version every %s); "+
		"memory bound %s (its --memory budget)\n", url, cmd.Process.Pid, o.URL(), len(o.Paths()), o.MaxAge(), e.publish,
		bytesize.Format(bound))
	rate := f.rate
	if rate == 0 {
		max, err := soak.FindEdgeMax(ctx, url, o, e.concurrency, e.findDuration, f.seed)
		if err != nil {
			return err
		}
		rate = f.fraction * max
		fmt.Fprintf(stdout, "soak: maximum %.1f answers/s (%d clients, cache warm, origin up, every answer checked), holding %.0f%%\n",
			max, e.concurrency, 100*f.fraction)
	}
	fmt.Fprintf(stdout, "soak: %.1f req/s for %s; the origin stopped for %s every %s\n", rate, f.duration, e.outage, e.outageEvery)
	res, err := soak.RunEdge(ctx, soak.EdgeOptions{URL: url, PID: cmd.Process.Pid, Bound: bound, Origin: o, Rate: rate,
		Duration: f.duration, OutageEvery: e.outageEvery, Outage: e.outage, Publish: e.publish, Seed: f.seed, Log: stdout})
	if err != nil && !errors.Is(err, soak.ErrFailed) {
		return err
	}
	title := fmt.Sprintf("edge resident memory at %.0f req/s, origin stopped %s of every %s", res.Rate, e.outage, e.outageEvery)
	if werr := writeEdgeSoak(f.out, title, res); werr != nil {
		return werr
	}
	printEdgeSoak(stdout, res, err)
	if err != nil {
		return errFound
	}
	return nil
}

// memoryBudget is the node's memory budget from /stats.
func memoryBudget(url string) (int64, error) {
	var st struct {
		Memory struct {
			Budget int64 `json:"budget_bytes"`
		} `json:"memory"`
	}
	resp, err := http.Get(url + "/stats")
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(&st); err != nil {
		return 0, err
	}
	if st.Memory.Budget <= 0 {
		return 0, errors.New("soak: the edge reports no memory budget (give --memory a size)")
	}
	return st.Memory.Budget, nil
}

func writeEdgeSoak(dir, title string, res soak.EdgeResult) error {
	if dir == "" {
		return nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	rep, _ := json.MarshalIndent(res, "", "  ")
	m := res.Memory()
	return errors.Join(
		os.WriteFile(filepath.Join(dir, "rss.csv"), m.CSV(), 0o644),
		os.WriteFile(filepath.Join(dir, "rss.svg"), m.SVG(title), 0o644),
		os.WriteFile(filepath.Join(dir, "soak.json"), append(rep, '\n'), 0o644))
}

func printEdgeSoak(w io.Writer, r soak.EdgeResult, err error) {
	fmt.Fprintf(w, "soak: %.0f s at %.1f req/s: %d requests, %d answers checked whole, %d wrong, %d overruns, p50 %.1f ms, p99 %.1f ms\n",
		r.DurationS, r.Rate, r.Requests, r.Answers, r.Wrong, r.Overruns, r.P50Ms, r.P99Ms)
	fmt.Fprintf(w, "soak: %d outages; %d answers while the origin was down, %d marked STALE; %d versions published\n",
		r.Outages, r.DownAnswers, r.Stale, r.Versions)
	fmt.Fprintf(w, "soak: cache %v; tiers %v\n", r.ByCache, r.ByTier)
	if len(r.Errors) == 0 {
		fmt.Fprintln(w, "soak: errors: none")
	}
	for _, c := range r.SortedCauses() {
		fmt.Fprintf(w, "soak: errors, %s: %v\n", c, r.Errors[c])
		for _, ex := range r.ErrorExamples[c] {
			fmt.Fprintf(w, "soak:   e.g. %s\n", ex)
		}
	}
	if e := r.Edge; e != nil {
		fmt.Fprintf(w, "soak: edge /stats: dropped %d from RAM unsaved, %d flash admission rejects, %d flash segments evicted; "+
			"flash reads %d timed out, %d skipped; %d answered from flash anyway (upstream failing), %d stale, %d errors\n",
			e.RAMEvictedUnsaved, e.AdmissionRejects, e.FlashEvicted, e.FlashReadTimeouts, e.SkippedReads, e.LastResort,
			e.StaleServed, e.Errors)
	}
	fmt.Fprintf(w, "soak: resident memory max %s over %d samples, bound %s\n",
		bytesize.Format(r.MaxRSS), len(r.Samples), bytesize.Format(r.Bound))
	if err != nil {
		fmt.Fprintf(w, "soak: FAILED: %v\n", err)
	} else {
		fmt.Fprintln(w, "soak: clean")
	}
}
