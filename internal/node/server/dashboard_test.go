package server

import (
	"bytes"
	"log/slog"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/strata-media/strata/internal/core/tier"
	"github.com/strata-media/strata/internal/httpapi/httpapitest"
	"github.com/strata-media/strata/internal/node/engine"
	"github.com/strata-media/strata/internal/storage/device"
	"github.com/strata-media/strata/internal/storage/origin"
	"github.com/strata-media/strata/internal/workload"
)

// A packaged title is listed before a synthetic library of 30 titles
// (which the first 20 used to fill, the playable one among "and 11
// more"), with its watch link; no synthetic title has one.
func TestDashboardListsPlayableTitlesFirst(t *testing.T) {
	dir, err := origin.NewDir(packagedDir(t), origin.DirOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ds := workload.NewDataset(workload.DatasetOptions{Titles: 30, MaxLength: time.Minute, Efficiency: 0.1, Seed: 5})
	syn, err := origin.NewSynthetic(ds, origin.SyntheticOptions{Seed: 5})
	if err != nil {
		t.Fatal(err)
	}
	org := origin.NewMulti(dir, syn)
	log := slog.New(slog.DiscardHandler)
	eng, err := engine.New(engine.Options{Tier: tier.Options{RAMBytes: 1 << 20, BlockSize: 256 << 10}, Logger: log},
		device.NewMem(16<<20, 4096), org)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(newAPI(t, eng, org, log))
	t.Cleanup(func() { ts.Close(); eng.Close() })
	resp, body := httpapitest.Do(t, "GET", ts.URL+"/", nil)
	page := string(body)
	film, synthetic := strings.Index(page, "<code>film</code>"), strings.Index(page, "<code>title-0000</code>")
	if resp.StatusCode != 200 || film < 0 || synthetic < 0 || film > synthetic {
		t.Fatalf("dashboard %d: film at %d, the first synthetic title at %d", resp.StatusCode, film, synthetic)
	}
	if n := strings.Count(page, `href="/watch?v=`); n != 1 || !strings.Contains(page, `href="/watch?v=film"`) {
		t.Errorf("%d watch links, want film's alone", n)
	}
	if !strings.Contains(page, "and 11 more") {
		t.Errorf("the page does not say how many titles it leaves out")
	}
}

// GET /favicon.ico answers an icon, not a 404 in every browser console.
func TestFavicon(t *testing.T) {
	ts, _, _ := testServer(t)
	resp, body := httpapitest.Do(t, "GET", ts.URL+"/favicon.ico", nil)
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "image/x-icon" ||
		!bytes.HasPrefix(body, []byte{0, 0, 1, 0}) || resp.Header.Get("Cache-Control") == "" {
		t.Fatalf("favicon: %d %q %q, %d bytes", resp.StatusCode, resp.Header.Get("Content-Type"), resp.Header.Get("Cache-Control"), len(body))
	}
}

// The charts' axes (the dashboard's "axis" script, run under node): an
// empty chart is 0 to 1, not 0 to 1.00e-9; every chart has at least
// three y ticks of 1, 2 or 5 times a power of ten, labelled in plain
// decimals (k, M, G for thousands and up), reaching at least the
// maximum; the x-axis has ticks of whole minutes.
func TestDashboardAxes(t *testing.T) {
	nodejs, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed: the dashboard's axis script is not run")
	}
	src, _, ok := strings.Cut(dashboardHTML[strings.Index(dashboardHTML, "// axis: begin")+1:], "// axis: end")
	if !ok {
		t.Fatal("no axis script in dashboard.html")
	}
	script := "/" + src + `
const assert = require("node:assert");
const labels = (max) => { const t = yTicks(max); return t.map(v => tickLabel(v, t[1])).join(" "); };
assert.strictEqual(labels(0), "0 0.5 1");
assert.strictEqual(labels(4), "0 1 2 3 4");
assert.strictEqual(labels(4.1), "0 2 4 6");
assert.strictEqual(labels(0.3), "0 0.1 0.2 0.3");
assert.strictEqual(labels(37), "0 10 20 30 40");
assert.strictEqual(labels(0.0004), "0 0.0001 0.0002 0.0003 0.0004");
assert.strictEqual(labels(23000), "0 10k 20k 30k");
assert.strictEqual(labels(1800), "0 500 1000 1500 2000");
assert.strictEqual(labels(5.8e8), "0 200M 400M 600M");
for (let max = 1e-6; max < 1e12; max *= 1.37) {
  const t = yTicks(max);
  assert.ok(t.length >= 3 && t.length <= 6 && t[t.length - 1] >= max, "max " + max + ": " + t);
  for (const v of t) assert.ok(!/e/.test(tickLabel(v, t[1])), "max " + max + ": " + tickLabel(v, t[1]));
}
const h = 3600e3, t1 = Date.UTC(2026, 0, 1, 12, 34, 56);
assert.deepStrictEqual(timeTicks(t1 - h, t1).map(t => new Date(t).toISOString().slice(11, 16)),
  ["11:40", "11:50", "12:00", "12:10", "12:20", "12:30"]);
assert.strictEqual(timeTicks(t1 - 60e3, t1).length, 1);
`
	cmd := exec.Command(nodejs, "-e", script)
	cmd.Env = append(os.Environ(), "TZ=UTC")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("the axis script: %v\n%s", err, out)
	}
}
