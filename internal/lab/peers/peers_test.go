package peers

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// result builds a server's result: n requests of size bytes each at 80%,
// fetched objects and bytes from the origin, written bytes, CPU time.
func result(server string, maxRPS float64, n int, size, fetched, written, cpuNs int64) Result {
	r := Result{Server: server, Budget: "test"}
	r.Max.MaxRPS = maxRPS
	r.At80 = Run{Requests: n, Completed: n, Bytes: int64(n) * size, P50Ms: 10, P99Ms: 100}
	r.Before.Origin = origin{SegmentFetches: 1000, SegmentBytes: 1 << 30}
	r.After.Origin = origin{SegmentFetches: 1000 + fetched, SegmentBytes: 1<<30 + fetched*size}
	r.Before.WriteBytes, r.After.WriteBytes = 5000, 5000+written
	r.Before.CPUNs, r.After.CPUNs = 7, 7+cpuNs
	return r
}

func TestComputeUsesTheMeasuredWindow(t *testing.T) {
	m := Compute(result("nginx", 90, 1000, 1e6, 250, 5e8, 2e9))
	for name, got := range map[string][2]float64{
		"hit ratio":      {m.HitRatio, 0.75},
		"byte hit ratio": {m.ByteHitRatio, 0.75},
		"flash/served":   {m.FlashPerServed, 0.5},
		"cpu us/req":     {m.CPUUsPerReq, 2000},
		"origin MB":      {m.OriginMB, 250},
		"max":            {m.MaxRPS, 90},
	} {
		if math.Abs(got[0]-got[1]) > 1e-9 {
			t.Errorf("%s = %v, want %v", name, got[0], got[1])
		}
	}
	if !math.IsNaN(m.ReleaseHitRatio) {
		t.Errorf("no release run should be NaN: %+v", m)
	}
}

func TestTableRatiosAgainstBestPeer(t *testing.T) {
	ms := []Metrics{
		Compute(result("strata", 130, 1000, 1e6, 200, 1e8, 1e9)),
		Compute(result("nginx", 100, 1000, 1e6, 300, 4e8, 3e9)),
		Compute(result("varnish", 80, 1000, 1e6, 250, 2e8, 2e9)),
	}
	head, rows := table(ms)
	if len(head) != 6 || head[1] != "strata" || head[5] != "strata / best peer" {
		t.Fatalf("head %v", head)
	}
	want := map[string][2]string{ // metric -> best peer, ratio
		"max req/s at 0% misses":            {"nginx", "1.30x"},
		"hit ratio":                         {"varnish", "1.07x"}, // 0.80 / 0.75
		"flash bytes written / byte served": {"varnish", "0.50x"},
		"CPU µs / request":                  {"varnish", "0.50x"},
	}
	for _, r := range rows {
		if w, ok := want[r[0]]; ok {
			if r[4] != w[0] || r[5] != w[1] {
				t.Errorf("%s: best %s ratio %s, want %s %s", r[0], r[4], r[5], w[0], w[1])
			}
			delete(want, r[0])
		}
	}
	if len(want) > 0 {
		t.Errorf("rows missing: %v", want)
	}
}

func TestCheck(t *testing.T) {
	good := result("strata", 0, 80, 1e5, 40, 0, 1)
	if err := Check([]Result{good}); err != nil {
		t.Errorf("good run: %v", err)
	}
	failed := good
	failed.Server, failed.At80.Completed, failed.At80.Errors = "nginx", 70, 10
	uncached := result("varnish", 0, 80, 1e5, 80, 0, 1)
	err := Check([]Result{good, failed, uncached})
	if err == nil || !strings.Contains(err.Error(), "nginx: 70 of 80") || !strings.Contains(err.Error(), "varnish: the origin served 80") {
		t.Errorf("Check = %v", err)
	}
}

func TestLoadAndFigures(t *testing.T) {
	dir := t.TempDir()
	for _, r := range []Result{result("varnish", 50, 10, 1e6, 5, 1e6, 1e6), result("strata", 60, 10, 1e6, 4, 1e6, 1e6)} {
		b, _ := json.Marshal(r)
		if err := os.WriteFile(filepath.Join(dir, r.Server+".json"), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	rs, err := Load(dir)
	if err != nil || len(rs) != 2 || rs[0].Server != "strata" {
		t.Fatalf("Load: %v, %+v", err, rs)
	}
	ms := []Metrics{Compute(rs[0]), Compute(rs[1])}
	figs := Figures(ms)
	if len(figs) < 4 {
		t.Fatalf("%d figures", len(figs))
	}
	md := Markdown(rs, ms, figs)
	for _, f := range figs {
		if !strings.Contains(string(f.SVG), "<svg") || !strings.Contains(md, f.File) {
			t.Errorf("figure %s not an SVG or not linked", f.File)
		}
	}
	if _, err := Load(t.TempDir()); err == nil {
		t.Error("Load of an empty directory succeeded")
	}
}

// The flash device's counters give the bytes that reached the device per
// byte served and the mean write size; without them (no loop device) the
// table says "not measured" and the ratio is left out.
func TestDeviceWrites(t *testing.T) {
	strata := result("strata", 130, 1000, 1e6, 200, 1e8, 1e9)
	strata.Before.FlashDevice = &device{WriteIOs: 10, WriteSectors: 1000}
	strata.After.FlashDevice = &device{WriteIOs: 10 + 100, WriteSectors: 1000 + 400<<20/512} // 400 MiB in 100 writes
	nginx := result("nginx", 100, 1000, 1e6, 300, 4e8, 3e9)
	nginx.Before.FlashDevice = &device{}
	nginx.After.FlashDevice = &device{WriteIOs: 3200, WriteSectors: 800 << 20 / 512} // 800 MiB in 3200 writes
	varnish := result("varnish", 80, 1000, 1e6, 250, 2e8, 2e9)
	m := Compute(strata)
	if got, want := m.DevicePerServed, float64(400<<20)/1e9; math.Abs(got-want) > 1e-9 {
		t.Errorf("device bytes per byte served %v, want %v", got, want)
	}
	if m.MeanWriteKiB != 4096 {
		t.Errorf("mean write %v KiB, want 4096", m.MeanWriteKiB)
	}
	if v := Compute(varnish); !math.IsNaN(v.DevicePerServed) || !math.IsNaN(v.MeanWriteKiB) {
		t.Errorf("no device counters: %v, %v, want NaN", v.DevicePerServed, v.MeanWriteKiB)
	}
	_, rows := table([]Metrics{m, Compute(nginx), Compute(varnish)})
	want := map[string][]string{
		"flash device bytes written / byte served": {"0.419", "0.839", "not measured", "nginx", "0.50x"},
		"mean flash device write KiB":              {"4096", "256", "not measured", "nginx", "16.00x"},
	}
	for _, r := range rows {
		if w, ok := want[r[0]]; ok {
			if strings.Join(r[1:], " ") != strings.Join(w, " ") {
				t.Errorf("%s: %v, want %v", r[0], r[1:], w)
			}
			delete(want, r[0])
		}
	}
	if len(want) > 0 {
		t.Errorf("rows missing: %v", want)
	}
}

// The report names the scenario and its workload, leads with the rate,
// the CPU time per request and the p99 at 80%, and tabulates the device
// scenario's throttle check per server.
func TestMarkdownScenario(t *testing.T) {
	strata := result("strata", 130, 1000, 1e6, 200, 1e8, 1e9)
	nginx := result("nginx", 100, 1000, 1e6, 300, 4e8, 3e9)
	for i, r := range []*Result{&strata, &nginx} {
		r.Scenario, r.Workload = "device", "library: 6 titles, 3.24 GiB"
		r.DeviceCheck = &DeviceCheck{MiB: 128, DirectWriteMBps: 201 + float64(i), BufferedWriteMBps: 199, DirectReadMBps: 398, BufferedReadMBps: 402}
	}
	rs := []Result{strata, nginx}
	ms := []Metrics{Compute(strata), Compute(nginx)}
	_, rows := table(ms)
	for i, want := range []string{"max req/s at 0% misses", "CPU µs / request", "p99 ms at 80%"} {
		if rows[i][0] != want {
			t.Errorf("row %d is %q, want %q", i, rows[i][0], want)
		}
	}
	md := Markdown(rs, ms, nil)
	for _, want := range []string{"Scenario `device`", "library: 6 titles, 3.24 GiB", "| nginx | 128 | 202 | 199 | 398 | 402 |"} {
		if !strings.Contains(md, want) {
			t.Errorf("report lacks %q:\n%s", want, md)
		}
	}
	strata.DeviceCheck, nginx.DeviceCheck = nil, nil
	if md := Markdown([]Result{strata, nginx}, ms, nil); strings.Contains(md, "O_DIRECT write") {
		t.Errorf("a run without a throttle check has its table:\n%s", md)
	}
}
