package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/strata-media/strata/internal/banner"
	"github.com/strata-media/strata/internal/ident"
	"github.com/strata-media/strata/internal/node/app"
	"github.com/strata-media/strata/internal/storage/device"
	"github.com/strata-media/strata/internal/storage/origin"
	"github.com/strata-media/strata/internal/tools/loadgen"
	"github.com/strata-media/strata/internal/wtrace"
)

// testLibrary is a small synthetic library: 12 titles of 5 renditions, one
// minute each (6 segments of 10 s), about 18 MB.
var testLibrary = app.SyntheticLibrary{Titles: 12, AllRenditions: true, MaxLengthS: 60, SegmentDurationS: 10, Seed: 9, Prefix: "t"}

// writeLibrary seeds a data directory with testLibrary.
func writeLibrary(t *testing.T, data string) *origin.Synthetic {
	t.Helper()
	b, _ := json.Marshal(testLibrary)
	if err := os.MkdirAll(data, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(data, "synthetic.json"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	syn, err := origin.NewSynthetic(testLibrary.Dataset(), origin.SyntheticOptions{Seed: testLibrary.Seed})
	if err != nil {
		t.Fatal(err)
	}
	return syn
}

func smallConfig(data string) app.Config {
	cfg := app.DefaultConfig()
	cfg.Data, cfg.Listen = data, "127.0.0.1:0"
	cfg.RAM, cfg.FlashSize, cfg.BlockSize = 3<<20, 24<<20, 1<<20
	cfg.MonitorPeriod.Duration = 20 * time.Millisecond
	cfg.Threshold = 1.01 // this machine's one disk is shared with everything else
	cfg.LogLevel = "warn"
	if err := cfg.Resolve(); err != nil {
		panic(err)
	}
	return cfg
}

// blockChecker fails writes that are not whole, aligned blocks.
type blockChecker struct {
	device.Device
	block int64
	bad   atomic.Int64
	ok    atomic.Int64
}

func (b *blockChecker) WriteAt(p []byte, off int64) (int, error) {
	if int64(len(p)) != b.block || off%b.block != 0 {
		b.bad.Add(1)
	} else {
		b.ok.Add(1)
	}
	return b.Device.WriteAt(p, off)
}

// startServe runs serve in-process and returns its URL, read from the
// start banner, and a stop function.
func startServe(t *testing.T, cfg app.Config, opts app.Options) (string, func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		err := serve(ctx, cfg, opts, nil, pw, io.Discard)
		pw.Close()
		done <- err
	}()
	stop := func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	}
	sc := bufio.NewScanner(pr)
	for sc.Scan() {
		if u, ok := banner.URL(sc.Text()); ok {
			go io.Copy(io.Discard, pr)
			var once sync.Once
			return u, func() { once.Do(stop) }
		}
	}
	err := <-done
	t.Fatalf("serve did not start: %v", err)
	return "", nil
}

func getStats(t *testing.T, url string) map[string]map[string]float64 {
	t.Helper()
	resp, err := http.Get(url + "/stats")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var raw map[string]json.RawMessage
	if err := json.NewDecoder(resp.Body).Decode(&raw); err != nil {
		t.Fatal(err)
	}
	out := map[string]map[string]float64{}
	for k, v := range raw {
		m := map[string]any{}
		if json.Unmarshal(v, &m) != nil {
			continue
		}
		out[k] = map[string]float64{}
		for kk, vv := range m {
			if f, ok := vv.(float64); ok {
				out[k][kk] = f
			}
		}
	}
	return out
}

// A Zipf workload against the real server: all three tiers serve, flash is
// written only in whole blocks, and concurrent misses read the capacity
// tier once.
func TestServeEndToEnd(t *testing.T) {
	data := t.TempDir()
	syn := writeLibrary(t, data)
	cfg := smallConfig(data)
	checker := &blockChecker{block: int64(cfg.BlockSize)}
	wrap := func(d device.Device) device.Device { checker.Device = d; return checker }
	cfg.TraceWrites = filepath.Join(t.TempDir(), "writes.trace")
	url, stop := startServe(t, cfg, app.Options{WrapFlash: wrap})
	defer func() { stop(); checkTrace(t, cfg.TraceWrites, int64(cfg.BlockSize)) }()

	rep, err := loadgen.Run(context.Background(), loadgen.Config{URL: url, Rate: 150, Duration: 4 * time.Second, Seed: 7})
	if err != nil {
		t.Fatal(err)
	}
	st := getStats(t, url)
	t.Logf("bench: %d requests, miss ratio %.3f, p99 %.1f ms; stats ram=%v ssd=%v origin=%v",
		rep.Requests, rep.MissRatio, rep.P99Ms, st["ram"], st["ssd"], st["origin"])
	if rep.Errors != 0 || rep.Requests < 300 {
		t.Fatalf("bench report %+v", rep)
	}
	if st["ram"]["hits"] == 0 || st["ssd"]["hits"] == 0 || st["origin"]["reads"] == 0 {
		t.Fatalf("not every tier served: %v", st)
	}
	if checker.bad.Load() != 0 || checker.ok.Load() == 0 {
		t.Fatalf("flash writes: %d whole blocks, %d others", checker.ok.Load(), checker.bad.Load())
	}
	if st["ssd"]["bytes_written"] != st["ssd"]["blocks_written"]*float64(cfg.BlockSize) {
		t.Fatalf("flash bytes %v in %v blocks", st["ssd"]["bytes_written"], st["ssd"]["blocks_written"])
	}
	checkCoalescing(t, url, syn)
}

// checkTrace reads the write trace: every write a whole block of the
// segment cache or the whole-file cache, with its lifetime class.
func checkTrace(t *testing.T, path string, block int64) {
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	n := 0
	err = wtrace.Read(f, func(r wtrace.Record) error {
		n++
		if r.Device != "segments" && r.Device != "files" || r.Length != block || r.Offset%block != 0 || r.Class == "" {
			return fmt.Errorf("trace record %+v", r)
		}
		return nil
	})
	if err != nil || n == 0 {
		t.Fatalf("trace: %d records, %v", n, err)
	}
}

// checkCoalescing asks for one never-requested segment 30 times at once:
// the capacity tier is read once.
func checkCoalescing(t *testing.T, url string, syn *origin.Synthetic) {
	o := ident.Object{Video: "t0011", Rendition: "2000k", Name: "6.m4s"}
	want, _ := syn.Expected(o)
	before := getStats(t, url)["origin"]["reads"]
	var wg sync.WaitGroup
	for range 30 {
		wg.Go(func() {
			resp, err := http.Get(url + "/videos/" + o.Path())
			if err != nil {
				t.Error(err)
				return
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if !bytes.Equal(body, want) {
				t.Errorf("wrong bytes for %s", o)
			}
		})
	}
	wg.Wait()
	if n := getStats(t, url)["origin"]["reads"] - before; n != 1 {
		t.Fatalf("%v capacity reads for 30 concurrent requests of one segment", n)
	}
}

// buildStrata builds the binary once per test run.
func buildStrata(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "strata")
	cmd := exec.Command("go", "build", "-o", bin, ".")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// startProcess runs strata serve and returns the process and its URL.
func startProcess(t *testing.T, bin, data string) (*exec.Cmd, string) {
	t.Helper()
	cmd := exec.Command(bin, "serve", "--data", data, "--listen", "127.0.0.1:0", "--ram", "3MiB",
		"--flash-size", "24MiB", "--block-size", "1MiB", "--monitor-period", "20ms", "--threshold", "1.01",
		"--log-level", "warn")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		if u, ok := banner.URL(sc.Text()); ok {
			go io.Copy(io.Discard, out)
			return cmd, u
		}
	}
	t.Fatalf("strata serve printed no URL: %v", sc.Err())
	return nil, ""
}

// A server killed with SIGKILL in the middle of the workload recovers its
// flash cache at the next start and never serves a wrong byte.
func TestServeKillRestart(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	bin := buildStrata(t)
	data := t.TempDir()
	syn := writeLibrary(t, data)
	cmd, url := startProcess(t, bin, data)
	ctx, cancel := context.WithCancel(context.Background())
	go loadgen.Run(ctx, loadgen.Config{URL: url, Rate: 150, Duration: time.Minute, Seed: 3})
	deadline := time.Now().Add(30 * time.Second)
	for getStats(t, url)["ssd"]["segments"] < 10 && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
	}
	if err := cmd.Process.Kill(); err != nil { // SIGKILL, mid-workload
		t.Fatal(err)
	}
	cmd.Wait()
	cancel()

	_, url = startProcess(t, bin, data)
	st := getStats(t, url)
	if st["ssd"]["recovered_segments"] == 0 {
		t.Fatalf("nothing recovered after SIGKILL: %v", st["ssd"])
	}
	t.Logf("recovered %v segments (%v corrupt, %v orphan records)", st["ssd"]["recovered_segments"],
		st["ssd"]["recovery_corrupt_records"], st["ssd"]["recovery_orphan_records"])
	checkEverySegment(t, url, syn)
	if st := getStats(t, url); st["ssd"]["hits"] == 0 {
		t.Fatalf("recovered segments were not served from flash: %v", st["ssd"])
	}
}

// checkEverySegment fetches every segment of the library and compares it
// with the capacity tier's content.
func checkEverySegment(t *testing.T, url string, syn *origin.Synthetic) {
	titles, _ := syn.Catalog(context.Background())
	for _, tt := range titles {
		for _, r := range tt.Renditions {
			for n := r.StartNumber; n < r.StartNumber+r.Segments; n++ {
				o := ident.Object{Video: tt.ID, Rendition: r.ID, Name: fmt.Sprintf("%d.m4s", n)}
				resp, err := http.Get(url + "/videos/" + o.Path())
				if err != nil {
					t.Fatal(err)
				}
				body, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if want, _ := syn.Expected(o); !bytes.Equal(body, want) {
					t.Fatalf("%s from %s: wrong bytes", o, resp.Header.Get("X-Strata-Tier"))
				}
			}
		}
	}
}
