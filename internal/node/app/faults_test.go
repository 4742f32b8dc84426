package app

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/strata-media/strata/internal/httpapi/httpapitest"
	"github.com/strata-media/strata/internal/ident"
	"github.com/strata-media/strata/internal/node/server"
	"github.com/strata-media/strata/internal/storage/device"
	"github.com/strata-media/strata/internal/storage/origin"
)

// faultLibrary is the synthetic library of the fault matrix: about 40 MiB
// of segments, ten times the test node's RAM and more than its flash.
var faultLibrary = SyntheticLibrary{Titles: 4, MaxLengthS: 120, SegmentDurationS: 4, Seed: 7, Prefix: "f-"}

// faultNode serves a node over the synthetic library whose segment flash
// device is wrapped in a Fault (Options.WrapFlash, the test hook: nil in
// production), and returns its URL, the fault and the library.
func faultNode(t *testing.T) (string, *device.Fault, *origin.Synthetic) {
	t.Helper()
	cfg := testConfig(t)
	cfg.Threshold = 2 // no utilization gate: the shared disk's load must not decide the test
	cfg.Epoch.Duration = 100 * time.Millisecond
	cfg.MonitorPeriod.Duration = 20 * time.Millisecond
	cfg.Policy = "lru" // every new segment reaches flash, so write faults meet writes (tinylfu may refuse them all)
	cfg.Images.Disabled = true
	cfg.Files.FlashSize = 0
	b, _ := json.Marshal(faultLibrary)
	if err := os.WriteFile(syntheticPath(cfg.Data), b, 0o644); err != nil {
		t.Fatal(err)
	}
	syn, err := origin.NewSynthetic(faultLibrary.Dataset(), origin.SyntheticOptions{Seed: faultLibrary.Seed})
	if err != nil {
		t.Fatal(err)
	}
	var fault *device.Fault
	n, err := Open(context.Background(), cfg, Options{Logger: quiet, WrapFlash: func(d device.Device) device.Device {
		fault = device.NewFault(d)
		return fault
	}})
	if err != nil {
		t.Fatal(err)
	}
	runNode(t, n)
	return n.Description().URL, fault, syn
}

// faultRun requests objects and checks every answer against the library.
type faultRun struct {
	t    *testing.T
	url  string
	syn  *origin.Synthetic
	objs []ident.Object
	// tiers counts the answers by X-Strata-Tier; ok and failed count them.
	tiers      map[string]int
	ok, failed int
	slowest    time.Duration // the longest answer
}

// pass requests every object once.
func (r *faultRun) pass() {
	for _, o := range r.objs {
		start := time.Now()
		resp, body := httpapitest.Do(r.t, "GET", r.url+"/videos/"+o.String(), nil)
		r.slowest = max(r.slowest, time.Since(start))
		want, _ := r.syn.Expected(o)
		if resp.StatusCode != 200 || !bytes.Equal(body, want) {
			r.failed++
			r.t.Errorf("GET %s: %d, %d bytes (want 200, %d bytes, the library's)", o, resp.StatusCode, len(body), len(want))
			continue
		}
		r.ok++
		r.tiers[resp.Header.Get("X-Strata-Tier")]++
	}
}

// reset starts counting afresh.
func (r *faultRun) reset() { r.tiers, r.ok, r.failed, r.slowest = map[string]int{}, 0, 0, 0 }

// readiness is /readyz's answer; it must be 200 (a degraded device leaves
// the node ready).
func readiness(t *testing.T, url string) server.Readiness {
	t.Helper()
	resp, body := httpapitest.Do(t, "GET", url+"/readyz", nil)
	var rd server.Readiness
	if err := json.Unmarshal(body, &rd); err != nil || resp.StatusCode != 200 || len(rd.Devices) == 0 || rd.Devices[0].Device != "segments" {
		t.Fatalf("/readyz: %d %s (%v)", resp.StatusCode, body, err)
	}
	return rd
}

// metric reads one sample of /metrics.
func metric(t *testing.T, url, series string) float64 {
	t.Helper()
	_, body := httpapitest.Do(t, "GET", url+"/metrics", nil)
	m := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(series) + ` (\S+)$`).FindSubmatch(body)
	if m == nil {
		t.Fatalf("/metrics has no %s", series)
	}
	v, _ := strconv.ParseFloat(string(m[1]), 64)
	return v
}

// TestNodeFaultMatrix runs the real node over a fault-injecting flash
// device, one fault at a time: EIO on reads, EIO on writes,
// ENOSPC, torn writes, a device that stalls for seconds. Under each, every
// request is answered with the library's bytes (from RAM or the capacity
// tier), /readyz marks the device degraded and stays 200, the metrics
// show the degraded gauge and the errors; once the fault clears, a probe
// finds the device healthy and flash serves again. It logs one line of
// the matrix per fault (BENCHMARKS.md).
func TestNodeFaultMatrix(t *testing.T) {
	if testing.Short() {
		t.Skip("about a minute of a real node under faults")
	}
	for _, c := range []struct {
		name   string
		inject func(*device.Fault)
		op     string // the operation degraded
		kind   string // the error kind counted
	}{
		{"EIO on reads", func(f *device.Fault) { f.FailAllWith(device.OpRead, syscall.EIO) }, "read", "io"},
		{"EIO on writes", func(f *device.Fault) { f.FailAllWith(device.OpWrite, syscall.EIO) }, "write", "io"},
		{"ENOSPC", func(f *device.Fault) { f.FailAllWith(device.OpWrite|device.OpTrim, syscall.ENOSPC) }, "write", "nospace"},
		{"torn writes", func(f *device.Fault) { f.TearWrites() }, "write", "io"},
		{"stall 2 s", func(f *device.Fault) { f.SetLatency(device.OpAll, 2*time.Second) }, "read", "timeout"},
	} {
		t.Run(c.name, func(t *testing.T) { faultCase(t, c.name, c.inject, c.op, c.kind) })
	}
}

func faultCase(t *testing.T, name string, inject func(*device.Fault), op, kind string) {
	url, fault, syn := faultNode(t)
	objs := objects(t, syn)
	half := len(objs) / 2
	r := &faultRun{t: t, url: url, syn: syn, objs: objs[:half]}
	r.reset()
	for i := 0; r.tiers["ssd"] == 0; i++ { // warm: the first half reaches flash
		if i == 50 {
			t.Fatalf("no flash hit before the fault: %v", r.tiers)
		}
		r.pass()
		time.Sleep(50 * time.Millisecond)
	}

	inject(fault)
	r.reset()
	degraded := false
	for i := 0; !degraded; i++ { // the second half makes new writes; the first, reads
		if i == 30 {
			_, st := httpapitest.Do(t, "GET", url+"/stats", nil)
			t.Fatalf("%s never marked degraded: %+v\n%s", op, readiness(t, url).Devices[0], st)
		}
		r.objs = objs[(i%2)*half : (i%2+1)*half]
		r.pass()
		rd := readiness(t, url)
		dev := rd.Devices[0]
		degraded = rd.Status == "degraded" && (op == "read" && dev.Read.Degraded || op == "write" && dev.Write.Degraded)
	}
	during := fmt.Sprintf("%d/%d ok | %s | slowest %.0f ms", r.ok, r.ok+r.failed, strings.Trim(fmt.Sprint(r.tiers), "map[]"),
		float64(r.slowest.Microseconds())/1000)
	if resp, _ := httpapitest.Do(t, "GET", url+"/healthz", nil); resp.StatusCode != 200 {
		t.Errorf("/healthz %d while degraded", resp.StatusCode)
	}
	if got := metric(t, url, `strata_device_degraded{device="segments",op="`+op+`"}`); got != 1 {
		t.Errorf("degraded gauge %v while degraded", got)
	}
	if got := metric(t, url, `strata_device_errors_total{device="segments",kind="`+kind+`",op="`+op+`"}`); got == 0 {
		t.Errorf("no %s error counted", kind)
	}

	fault.Reset()
	cleared := time.Now()
	r.reset()
	for i := 0; ; i++ { // until a probe has found the device healthy and flash serves
		if i == 600 {
			t.Fatalf("not recovered: %+v, tiers %v", readiness(t, url).Devices[0], r.tiers)
		}
		r.objs = objs[(i%2)*half : (i%2+1)*half]
		r.pass()
		if rd := readiness(t, url); rd.Status == "ready" && r.tiers["ssd"] > 0 {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	recovered := time.Since(cleared)
	if got := metric(t, url, `strata_device_degraded{device="segments",op="`+op+`"}`); got != 0 {
		t.Errorf("degraded gauge %v after recovery", got)
	}
	if r.failed > 0 {
		t.Errorf("%d requests failed after the fault cleared", r.failed)
	}
	t.Logf("matrix | %s | %s | %s degraded | flash serves again %.1f s after the fault cleared",
		name, during, op, recovered.Seconds())
}

// objects lists every media segment of a library.
func objects(t *testing.T, org origin.Origin) []ident.Object {
	t.Helper()
	titles, err := org.Catalog(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var out []ident.Object
	for _, tt := range titles {
		for _, r := range tt.Renditions {
			for n := r.StartNumber; n < r.StartNumber+r.Segments; n++ {
				out = append(out, ident.Object{Video: tt.ID, Rendition: r.ID, Name: ident.SegmentName(uint32(n))})
			}
		}
	}
	return out
}
