package policysim

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/strata-media/strata/internal/core/tier"
	"github.com/strata-media/strata/internal/lab/golden"
)

// TestSmallTables runs the small scale and compares its tables with
// testdata/small-seed1.tables (regenerate with -rewrite), and checks what
// must hold whatever the numbers: Belady above every online policy, ratios
// in range, flash written in whole blocks.
func TestSmallTables(t *testing.T) {
	sc := scales["small"]
	rep, err := Run(sc, 1, options{})
	if err != nil {
		t.Fatal(err)
	}
	md, figs := rep.Markdown("strata-lab sim policies --scale small")
	golden.Check(t, "testdata/small-seed1.tables", golden.Tables(md))
	if len(figs) != 3 {
		t.Errorf("%d figures without a yardstick, want 3", len(figs))
	}
	hours := sc.Duration.Hours() * (1 - sc.WarmShare)
	for _, w := range rep.Workloads {
		for _, r := range w.Results {
			if r.HitRatio > w.Belady || r.ByteHitRatio > 1 || r.SSDHitRatio > r.HitRatio {
				t.Errorf("%s %s: hit ratio %.3f (flash %.3f, bytes %.3f), Belady %.3f", w.Name, r.Policy,
					r.HitRatio, r.SSDHitRatio, r.ByteHitRatio, w.Belady)
			}
			blocks := r.FlashGBPerHour * 1e9 * hours / float64(sc.Block)
			if d := blocks - float64(int64(blocks+0.5)); d > 1e-3 || d < -1e-3 {
				t.Errorf("%s %s: %.4f blocks written, not whole blocks", w.Name, r.Policy, blocks)
			}
		}
	}
}

// TestTracesDeterministic draws every workload twice with one seed and
// once with another.
func TestTracesDeterministic(t *testing.T) {
	sc := scales["small"]
	sc.Duration = 20 * time.Minute
	a, err := Traces(sc, 3, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := Traces(sc, 3, nil)
	c, _ := Traces(sc, 4, nil)
	for i := range a {
		if !slicesEqual(a[i].Reqs, b[i].Reqs) {
			t.Errorf("%s: two traces of seed 3 differ", a[i].Workload)
		}
		if slicesEqual(a[i].Reqs, c[i].Reqs) {
			t.Errorf("%s: seeds 3 and 4 draw the same trace", a[i].Workload)
		}
	}
}

func slicesEqual(a, b []int32) bool { return bytes.Equal(int32Bytes(a), int32Bytes(b)) }

func int32Bytes(s []int32) []byte {
	var b bytes.Buffer
	for _, v := range s {
		b.Write([]byte{byte(v), byte(v >> 8), byte(v >> 16), byte(v >> 24)})
	}
	return b.Bytes()
}

// TestOracleGeneral checks the export's records against the trace.
func TestOracleGeneral(t *testing.T) {
	sc := scales["small"]
	sc.Duration = time.Minute
	tr, err := makeTrace("binge", sc, 1)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := writeOracleGeneral(&buf, tr, sc.Rate); err != nil {
		t.Fatal(err)
	}
	b := buf.Bytes()
	if len(b) != 24*len(tr.Reqs) {
		t.Fatalf("%d bytes for %d requests", len(b), len(tr.Reqs))
	}
	le := func(p []byte) uint64 {
		var v uint64
		for i := len(p) - 1; i >= 0; i-- {
			v = v<<8 | uint64(p[i])
		}
		return v
	}
	for i, seg := range tr.Reqs {
		r := b[24*i:]
		id, size, next := le(r[4:12]), le(r[12:16]), int64(le(r[16:24]))
		if id != uint64(seg)+1 || size != uint64(tr.Cat.Sizes[seg]) {
			t.Fatalf("request %d: id %d size %d, want %d %d", i, id, size, seg+1, tr.Cat.Sizes[seg])
		}
		if next >= 0 && (next <= int64(i) || tr.Reqs[next] != seg) || next < -1 {
			t.Fatalf("request %d: next access %d", i, next)
		}
	}
}

// TestLibCacheSim runs scripts/policies-libcachesim.py on an exported
// trace when python imports libcachesim, and checks that its figures attach
// to the report and are sane: libCacheSim's BeladySize at or above its
// online policies.
func TestLibCacheSim(t *testing.T) {
	root, _ := filepath.Abs("../../../..")
	python := ""
	for _, p := range []string{os.Getenv("STRATA_PYTHON"), filepath.Join(root, ".cache/lcs-venv/bin/python"), "python3"} {
		if p != "" && exec.Command(p, "-c", "import libcachesim").Run() == nil {
			python = p
			break
		}
	}
	if python == "" {
		t.Skip("libcachesim is not importable (pip install libcachesim==0.3.5 into .cache/lcs-venv): skipped")
	}
	sc := scales["small"]
	sc.Duration = 40 * time.Minute
	rep, err := Run(sc, 1, options{Workloads: []string{"flashstream"}})
	if err != nil {
		t.Fatal(err)
	}
	traces, _ := Traces(sc, 1, []string{"flashstream"})
	dir := t.TempDir()
	manifest, err := ExportTraces(dir, sc, 1, traces)
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "y.json")
	cmd := exec.Command(python, filepath.Join(root, Script), manifest, "--json", out)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, b)
	}
	if err := attachYardstick(rep, out); err != nil {
		t.Fatal(err)
	}
	y := rep.Workloads[0].Yardstick
	if y == nil || len(y.Policies) < 6 {
		raw, _ := json.Marshal(y)
		t.Fatalf("yardstick %s", raw)
	}
	bs := y.Policies["BeladySize"].HitRatio
	for n, p := range y.Policies {
		if p.HitRatio < 0 || p.HitRatio > 1 || (!beladyNames[n] && p.HitRatio > bs) {
			t.Errorf("%s hit ratio %.3f, BeladySize %.3f", n, p.HitRatio, bs)
		}
	}
	md, figs := rep.Markdown("test")
	if !strings.Contains(md, "libCacheSim on the same traces") || len(figs) != 4 {
		t.Errorf("report lacks libCacheSim's table or figure (%d figures)", len(figs))
	}
	if _, ok := y.Policies["LRU"]; !ok {
		t.Error("no LRU in libCacheSim's results")
	}
}

// TestYardstickMismatch refuses libCacheSim figures of other traces.
func TestYardstickMismatch(t *testing.T) {
	rep := &Report{Scale: scales["small"], Seed: 2, Workloads: []*Workload{{Name: "flashstream",
		Capacity: scales["small"].capacity(), Results: []Result{{Requests: 10}}}}}
	dir := t.TempDir()
	for name, body := range map[string]string{
		"no seed":    `{"scale": "small", "workloads": {}}`,
		"other seed": `{"scale": "small", "seed": 1, "workloads": {}}`,
		"other size": `{"scale": "small", "seed": 2, "workloads": {"flashstream": {"cache_size": 1, "requests": 10}}}`,
	} {
		path := filepath.Join(dir, strings.ReplaceAll(name, " ", "-"))
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := attachYardstick(rep, path); err == nil {
			t.Errorf("%s: attached", name)
		}
	}
	path := filepath.Join(dir, "ok")
	body := `{"scale": "small", "seed": 2, "workloads": {"flashstream": {"cache_size": ` +
		fmt.Sprint(rep.Workloads[0].Capacity) + `, "requests": 10, "policies": {"LRU": {"hit_ratio": 0.5}}}}}`
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := attachYardstick(rep, path); err != nil || rep.Workloads[0].Yardstick == nil {
		t.Errorf("matching figures not attached: %v", err)
	}
}

// TestPoliciesSubset runs two policies only (--policies): the results
// are theirs in the order given, the report is written from them, and a
// subset without LRU or the default policy, or with an unknown name, is
// refused.
func TestPoliciesSubset(t *testing.T) {
	sc := scales["small"]
	sc.Duration = 20 * time.Minute
	rep, err := Run(sc, 1, options{Workloads: []string{"flashstream"}, Policies: []tier.BlockPolicy{tier.BlockReinsert, tier.BlockLRU}})
	if err != nil {
		t.Fatal(err)
	}
	rs := rep.Workloads[0].Results
	if len(rs) != 2 || rs[0].Policy != "reinsert" || rs[1].Policy != "lru" || rs[0].Requests == 0 {
		t.Fatalf("results %+v, want reinsert then lru", rs)
	}
	if md, _ := rep.Markdown("x"); !strings.Contains(md, "| flashstream | reinsert |") || strings.Contains(md, "tinylfu") {
		t.Errorf("report of the subset:\n%s", md)
	}
	if _, err := Run(sc, 1, options{Workloads: []string{"flashstream"}, Policies: []tier.BlockPolicy{tier.BlockReinsert}}); err == nil {
		t.Error("a subset without lru ran")
	}
	var out, errb bytes.Buffer
	if err := Command([]string{"--policies", "lru,bogus", "--out", t.TempDir()}, &out, &errb); !errors.Is(err, errUsage) {
		t.Errorf("--policies lru,bogus: %v, want a usage error", err)
	}
}
