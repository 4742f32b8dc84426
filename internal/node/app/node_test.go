package app

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/strata-media/strata/internal/httpapi"
	"github.com/strata-media/strata/internal/httpapi/httpapitest"
	"github.com/strata-media/strata/internal/storage/device"
)

// testConfig is a small node in a fresh data directory, on a free port.
func testConfig(t *testing.T) Config {
	t.Helper()
	cfg := DefaultConfig()
	cfg.Data, cfg.Listen = t.TempDir(), "127.0.0.1:0"
	cfg.RAM, cfg.FlashSize, cfg.BlockSize = 4<<20, 16<<20, 1<<20
	cfg.Files.FlashSize = 8 << 20
	cfg.TraceWrites = cfg.Data + "/writes.trace"
	if err := cfg.Resolve(); err != nil {
		t.Fatal(err)
	}
	return cfg
}

// closedLog records the parts a node closes, from its debug messages.
type closedLog struct{ buf bytes.Buffer }

func (c *closedLog) logger() *slog.Logger {
	return slog.New(slog.NewJSONHandler(&c.buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

func (c *closedLog) closed(t *testing.T) []string {
	t.Helper()
	var out []string
	dec := json.NewDecoder(&c.buf)
	for {
		var rec struct{ Msg, Part string }
		if err := dec.Decode(&rec); err == io.EOF {
			return out
		} else if err != nil {
			t.Fatal(err)
		}
		if rec.Msg == "closed" {
			out = append(out, rec.Part)
		}
	}
}

// allParts are a full node's parts in opening order.
var allParts = []string{"data directory lock", "capacity tier", "flash device", "write trace", "segment engine", "image store",
	"whole-file flash device", "whole-file tier", "capacity-tier reads", "listener"}

func reversed(s []string) []string {
	r := slices.Clone(s)
	slices.Reverse(r)
	return r
}

// TestNodeOpensServesAndClosesInReverse: every part opens in order, the
// API serves every module, and shutdown closes the parts last first;
// the data directory can then be opened again (the image store's lock
// is released).
func TestNodeOpensServesAndClosesInReverse(t *testing.T) {
	cfg := testConfig(t)
	var log closedLog
	n, err := Open(context.Background(), cfg, Options{Logger: log.logger()})
	if err != nil {
		t.Fatal(err)
	}
	if got := n.Parts(); !slices.Equal(got, allParts) {
		t.Fatalf("parts %q, want %q", got, allParts)
	}
	d := n.Description()
	if !strings.HasPrefix(d.URL, "http://127.0.0.1:") || d.Images == nil || d.Files.Flash == "" || !d.Engine.SSD.Enabled ||
		d.AdminTokenFile == "" || d.Flash.Size != 16<<20 {
		t.Fatalf("description %+v", d)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- n.Serve(ctx) }()
	checkModules(t, d.URL)
	cancel()
	if err := <-served; err != nil {
		t.Fatalf("Serve: %v", err)
	}
	if err := n.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if got := log.closed(t); !slices.Equal(got, reversed(allParts)) {
		t.Fatalf("closed %q, want %q", got, reversed(allParts))
	}
	n, err = Open(context.Background(), cfg, Options{Logger: quiet})
	if err != nil {
		t.Fatalf("reopening the data directory: %v", err)
	}
	if err := n.Close(); err != nil {
		t.Fatal(err)
	}
}

// checkModules asks each module for something and for an error: the
// engine's stats at the top of /stats beside the files section, the
// metrics, and problems from videos, files, images and admin.
func checkModules(t *testing.T, url string) {
	t.Helper()
	resp, body := get(t, url+"/stats")
	var st map[string]json.RawMessage
	if err := json.Unmarshal(body, &st); err != nil || resp.StatusCode != 200 || st["ram"] == nil || st["files"] == nil {
		t.Fatalf("/stats: %d %v: %.300s", resp.StatusCode, err, body)
	}
	if resp, body := get(t, url+"/metrics"); resp.StatusCode != 200 || !bytes.Contains(body, []byte("strata_tier_hits_total")) {
		t.Fatalf("/metrics: %d", resp.StatusCode)
	}
	for path, code := range map[string]int{"/videos/none/x.m4s": 404, "/files/none": 404, "/images/none": 404,
		"/nothing": 404, "/watch?v=x": 200} {
		resp, body := get(t, url+path)
		if resp.StatusCode != code {
			t.Errorf("GET %s: %d, want %d", path, resp.StatusCode, code)
		}
		if _, err := httpapi.ReadProblem(resp, body); code >= 400 && err != nil {
			t.Errorf("GET %s: %v", path, err)
		}
	}
	if resp, _ := httpapitest.Do(t, "POST", url+"/admin/invalidate/x", nil); resp.StatusCode != 401 {
		t.Errorf("admin without the token: %d", resp.StatusCode)
	}
}

// runNode serves n until stop is called or the test ends, then checks
// that Serve and Close succeed. stop may be called more than once.
func runNode(t *testing.T, n *Node) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- n.Serve(ctx) }()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			if err := <-served; err != nil {
				t.Errorf("Serve: %v", err)
			}
			if err := n.Close(); err != nil {
				t.Errorf("Close: %v", err)
			}
		})
	}
	t.Cleanup(stop)
	return stop
}

func get(t *testing.T, url string) (*http.Response, []byte) {
	t.Helper()
	return httpapitest.Do(t, "GET", url, nil)
}

// TestOpenFailureClosesWhatWasOpened: a flash device that fails every
// operation makes the engine's open fail, and the three parts opened
// before it (and the lock) are closed in reverse order.
func TestOpenFailureClosesWhatWasOpened(t *testing.T) {
	cfg := testConfig(t)
	var log closedLog
	wrap := func(d device.Device) device.Device {
		f := device.NewFault(d)
		f.FailAll(device.OpAll)
		return f
	}
	n, err := Open(context.Background(), cfg, Options{Logger: log.logger(), WrapFlash: wrap})
	if err == nil || n != nil {
		n.Close()
		t.Fatalf("Open over a failing flash device: %v", err)
	}
	if got, want := log.closed(t), []string{"write trace", "flash device", "capacity tier", "data directory lock"}; !slices.Equal(got, want) {
		t.Fatalf("closed %q, want %q", got, want)
	}
}

// TestOpenFailureAtTheEnd: a listen address in use fails the last part;
// everything before it, the image store included, is closed in reverse
// order, so that the next start on the data directory succeeds.
func TestOpenFailureAtTheEnd(t *testing.T) {
	cfg := testConfig(t)
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	cfg.Listen = busy.Addr().String()
	var log closedLog
	if n, err := Open(context.Background(), cfg, Options{Logger: log.logger()}); err == nil {
		n.Close()
		t.Fatal("Open on a busy address succeeded")
	}
	want := reversed(allParts[:len(allParts)-1])
	if got := log.closed(t); !slices.Equal(got, want) {
		t.Fatalf("closed %q, want %q", got, want)
	}
	cfg.Listen = "127.0.0.1:0"
	n, err := Open(context.Background(), cfg, Options{Logger: quiet})
	if err != nil {
		t.Fatalf("opening after the failed start: %v", err)
	}
	if err := n.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestDefaultConfigTakesThePackagesDefaults(t *testing.T) {
	cfg := DefaultConfig()
	if cfg.MonitorPeriod.Duration == 0 || cfg.Epoch.Duration == 0 || cfg.Endurance == 0 || cfg.Files.DiskBandwidth == 0 ||
		cfg.Images.MaxAge.Duration == 0 || cfg.Images.Quality == 0 {
		t.Fatalf("a default is missing: %+v", cfg)
	}
	bad := DefaultConfig()
	bad.Policy = "random"
	if err := bad.Resolve(); err == nil {
		t.Fatal("an unknown policy resolves")
	}
}
