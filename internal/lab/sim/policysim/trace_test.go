package policysim

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/strata-media/strata/internal/httpapi"
	"github.com/strata-media/strata/internal/lab/golden"
)

// The trace fixtures under testdata/traces: one trace drawn by our
// workload generator (flashstream's law over 4 titles, 1000 requests, two
// a second) written in each input format by fixtureFiles, and one drawn
// by libCacheSim's own generator (scripts/trace-fixture-libcachesim.py).
// TestTraceFixtures checks that the committed files are what the
// generator writes; -rewrite regenerates them.
const (
	fixtureDir      = "testdata/traces"
	fixtureRequests = 1000
	fixtureRate     = 2.0
	lcsFixture      = "libcachesim-zipf.oracleGeneral"
	// lruFigures are libCacheSim's LRU and BeladySize hit ratios on each
	// fixture at fixtureSizes, by Script (TestTraceLRUMatchesLibCacheSim
	// -rewrite, with python importing libcachesim, writes them).
	lruFigures = "libcachesim-lru.json"
)

// ourFixtures are the fixture files our tools write, by format.
var ourFixtures = map[string]string{
	FormatOracle:   "ours.oracleGeneral",
	FormatCSV:      "ours.csv",
	FormatStrata:   "ours-access.json",
	FormatCombined: "ours-access.log",
}

var fixtureEpoch = time.Date(2026, 11, 24, 0, 0, 0, 0, time.UTC)

func fixtureTrace(t testing.TB) *Trace {
	t.Helper()
	sc := Scale{Titles: 4, Rate: fixtureRate, Duration: time.Duration(fixtureRequests/fixtureRate) * time.Second, Sessions: 8}
	tr, err := makeTrace("flashstream", sc, 1)
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

// fixtureFiles writes tr in every format. The access logs carry, beside
// the requests, lines the replay must skip (HEAD, 304, 404) and fields it
// must ignore (the edge's cache, upstream_status, upstream_bytes; query
// strings, which it strips).
func fixtureFiles(t testing.TB, tr *Trace) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	var ob bytes.Buffer
	if err := writeOracleGeneral(&ob, tr, fixtureRate); err != nil {
		t.Fatal(err)
	}
	out[FormatOracle] = ob.Bytes()
	var csvb, js, comb bytes.Buffer
	csvb.WriteString("time,key,size\n")
	for i, seg := range tr.Reqs {
		at := tr.at(i, fixtureRate)
		path, size := "/"+tr.Cat.Keys[seg], tr.Cat.Sizes[seg]
		fmt.Fprintf(&csvb, "%.1f,%s,%d\n", at.Seconds(), path, size)
		tier := []string{"ram", "ssd", "origin"}[i%3]
		e := httpapi.AccessEntry{Time: fixtureEpoch.Add(at), RemoteAddr: "192.0.2.7:40000", Method: "GET", Path: path,
			Proto: "HTTP/1.1", Status: 200, Bytes: size, DurationMS: 0.5, Tier: tier}
		jsonLine(t, &js, e, i%7 == 0)
		target := path
		if i%5 == 0 {
			target += "?token=x" + fmt.Sprint(i)
		}
		fmt.Fprintf(&comb, "192.0.2.7 - - [%s] \"GET %s HTTP/1.1\" 200 %d \"-\" \"strata-bench\" rt=0.001 cache=MISS tier=%s\n",
			e.Time.Format("02/Jan/2006:15:04:05 -0700"), target, size, tier)
		if i%50 == 0 {
			for _, x := range []struct {
				method string
				status int
				n      int64
			}{{"HEAD", 200, 0}, {"GET", 304, 0}, {"GET", 404, 153}} {
				e2 := e
				e2.Method, e2.Status, e2.Bytes = x.method, x.status, x.n
				jsonLine(t, &js, e2, false)
				fmt.Fprintf(&comb, "192.0.2.7 - - [%s] \"%s %s HTTP/1.1\" %d %d \"-\" \"strata-bench\"\n",
					e.Time.Format("02/Jan/2006:15:04:05 -0700"), x.method, path, x.status, x.n)
			}
		}
	}
	out[FormatCSV], out[FormatStrata], out[FormatCombined] = csvb.Bytes(), js.Bytes(), comb.Bytes()
	return out
}

// jsonLine writes e as Strata's access log does, with the edge's newer
// fields when edge is set.
func jsonLine(t testing.TB, w *bytes.Buffer, e httpapi.AccessEntry, edge bool) {
	b, err := json.Marshal(e)
	if err != nil {
		t.Fatal(err)
	}
	if edge {
		b = append(b[:len(b)-1], fmt.Sprintf(`,"cache":"MISS","upstream_status":200,"upstream_bytes":%d}`, e.Bytes)...)
	}
	w.Write(b)
	w.WriteByte('\n')
}

// TestTraceFixtures: the committed fixtures are what our tools write.
func TestTraceFixtures(t *testing.T) {
	files := fixtureFiles(t, fixtureTrace(t))
	for format, name := range ourFixtures {
		golden.Check(t, filepath.Join(fixtureDir, name), string(files[format]))
	}
}

// canonical renames objects by first appearance, so that traces of the
// same requests under other keys compare equal.
func canonical(rt *ReadTrace) (reqs []int32, sizes []int64) {
	ids := map[int32]int32{}
	for _, r := range rt.Reqs {
		id, ok := ids[r]
		if !ok {
			id = int32(len(ids))
			ids[r] = id
			sizes = append(sizes, rt.Cat.Sizes[r])
		}
		reqs = append(reqs, id)
	}
	return reqs, sizes
}

// TestTraceFormatsParse reads every fixture with its format detected:
// our four files give the same requests, sizes and (to the second) times
// as the trace they were written from, the skipped lines counted.
func TestTraceFormatsParse(t *testing.T) {
	tr := fixtureTrace(t)
	want := &ReadTrace{Trace: tr}
	wantReqs, wantSizes := canonical(want)
	for format, name := range ourFixtures {
		rt, err := OpenTrace(filepath.Join(fixtureDir, name), "", nil)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if rt.Format != format {
			t.Errorf("%s: detected %s, want %s", name, rt.Format, format)
		}
		reqs, sizes := canonical(rt)
		if !slices.Equal(reqs, wantReqs) || !slices.Equal(sizes, wantSizes) {
			t.Errorf("%s: %d requests of %d objects, not the %d of %d written", name, len(reqs), len(sizes), len(wantReqs), len(wantSizes))
		}
		for i := range rt.Times {
			d := rt.Times[i] - tr.at(i, fixtureRate)
			if d > 0 || d <= -time.Second {
				t.Fatalf("%s: request %d at %v, written at %v", name, i, rt.Times[i], tr.at(i, fixtureRate))
			}
		}
		skipped := map[string]int{}
		if format == FormatStrata || format == FormatCombined {
			n := (fixtureRequests + 49) / 50
			skipped = map[string]int{"method HEAD": n, "status 304": n, "status 404": n}
		}
		if !(len(rt.Skipped) == 0 && len(skipped) == 0) && !mapsEqual(rt.Skipped, skipped) {
			t.Errorf("%s: skipped %v, want %v", name, rt.Skipped, skipped)
		}
		if format == FormatCombined && slices.ContainsFunc(rt.Cat.Keys, func(k string) bool { return strings.Contains(k, "?") }) {
			t.Errorf("%s: a key kept its query string", name)
		}
	}
	rt, err := OpenTrace(filepath.Join(fixtureDir, lcsFixture), "", nil)
	if err != nil {
		t.Fatal(err)
	}
	if rt.Format != FormatOracle || len(rt.Reqs) != 2000 || len(rt.Cat.Sizes) != 350 || rt.Cat.Sizes[0] != 65536 {
		t.Errorf("%s: %s, %d requests of %d objects", lcsFixture, rt.Format, len(rt.Reqs), len(rt.Cat.Sizes))
	}
}

func mapsEqual(a, b map[string]int) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// TestTraceErrors: bad and truncated input is refused with the line or
// byte offset of the fault, and nothing read.
func TestTraceErrors(t *testing.T) {
	oracle, err := os.ReadFile(filepath.Join(fixtureDir, ourFixtures[FormatOracle]))
	if err != nil {
		t.Fatal(err)
	}
	csv := "time,key,size\n0,/a,10\n1,/b,20\n2,/c,x\n"
	for _, c := range []struct {
		name, format, body string
		want               string
		line               int
		offset             int64
	}{
		{"truncated oracle", "", string(oracle[:len(oracle)-5]), "truncated record: 19 of 24 bytes", 0, int64(len(oracle) - 24)},
		{"oracle with a bad next access", FormatOracle, string(append(bytes.Repeat([]byte{1}, 16), bytes.Repeat([]byte{0xfe}, 8)...)),
			"not an oracleGeneral file", 0, 0},
		{"bad size", "", csv, `size "x"`, 4, 0},
		{"bad time", "", "0,/a,10\n1,/b,20\n-3,/c,5\n", `time "-3"`, 3, 0},
		{"missing field", FormatCSV, "0,/a,10\n1,/b\n", "wrong number of fields", 2, 0},
		{"bad JSON line", "", `{"time":"2026-11-24T00:00:00Z","method":"GET","path":"/a","status":200,"bytes":5}` + "\n{\"time\":\n", "not a JSON access log line", 2, 0},
		{"JSON line without a path", "", `{"time":"2026-11-24T00:00:00Z","method":"GET","status":200,"bytes":5}` + "\n", `no "path"`, 1, 0},
		{"bad combined line", "", `1.2.3.4 - - [24/Nov/2026:00:00:00 +0000] "GET /a HTTP/1.1" 200 5 "-" "-"` + "\n" +
			`1.2.3.4 - - [24/Nov/2026:00:00:01 +0000] "GET /b HTTP/1.1" 200 5 "-" "-"` + "\nwhat is this\n", "not a combined log line", 3, 0},
		{"bad combined time", FormatCombined, `1.2.3.4 - - [2026-11-24 00:00:00] "GET /a HTTP/1.1" 200 5 "-" "-"` + "\n", "time", 1, 0},
		{"nothing to replay", "", `1.2.3.4 - - [24/Nov/2026:00:00:00 +0000] "POST /a HTTP/1.1" 200 5 "-" "-"` + "\n", "no request to replay", 1, 0},
		{"unknown text", "", "hello world\n", "pass --format", 1, 0},
		{"empty", "", "", "empty", 0, 0},
	} {
		rt, err := ParseTrace(strings.NewReader(c.body), "f", c.format, nil)
		var te *TraceError
		if !errors.As(err, &te) || rt != nil {
			t.Errorf("%s: %v, %v", c.name, rt, err)
			continue
		}
		t.Logf("%s: %v", c.name, err)
		if !strings.Contains(err.Error(), c.want) || te.Line != c.line || te.Offset != c.offset {
			t.Errorf("%s: %q (line %d, offset %d), want %q at line %d, offset %d", c.name, err, te.Line, te.Offset, c.want, c.line, c.offset)
		}
		if c.line > 0 && !strings.Contains(err.Error(), fmt.Sprintf("line %d:", c.line)) ||
			c.line == 0 && c.want != "empty" && !strings.Contains(err.Error(), fmt.Sprintf("byte offset %d:", c.offset)) {
			t.Errorf("%s: %q names neither line %d nor offset %d", c.name, err, c.line, c.offset)
		}
	}
}

// fixtureSizes are the total cache sizes of the LRU check: 5, 10 and 25%
// of the trace's footprint.
func fixtureSizes(rt *ReadTrace) []int64 {
	var out []int64
	for _, s := range []float64{0.05, 0.1, 0.25} {
		out = append(out, int64(float64(rt.Footprint())*s)/4096*4096)
	}
	return out
}

var lcsRewrite = flag.Bool("rewrite-libcachesim", false, "rewrite testdata/traces/"+lruFigures+" by running "+Script+" (needs python with libcachesim)")

// TestTraceLRUMatchesLibCacheSim replays every fixture through RunTrace
// and checks our object LRU against libCacheSim's LRU at the same sizes:
// within half a point of the committed figures, which Script made, and,
// when python imports libcachesim, of a run of it now (which must also
// still give the committed figures). -rewrite-libcachesim writes them.
func TestTraceLRUMatchesLibCacheSim(t *testing.T) {
	root, _ := filepath.Abs("../../../..")
	python := ""
	for _, p := range []string{os.Getenv("STRATA_PYTHON"), filepath.Join(root, ".cache/lcs-venv/bin/python"), "python3"} {
		if p != "" && exec.Command(p, "-c", "import libcachesim").Run() == nil {
			python = p
			break
		}
	}
	if *lcsRewrite && python == "" {
		t.Fatal("-rewrite-libcachesim needs python with libcachesim")
	}
	committed := map[string]map[string]*Yardstick{}
	if !*lcsRewrite {
		b, err := os.ReadFile(filepath.Join(fixtureDir, lruFigures))
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, &committed); err != nil {
			t.Fatal(err)
		}
	}
	fresh := map[string]map[string]*Yardstick{}
	names := []string{lcsFixture}
	for _, n := range ourFixtures {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, name := range names {
		rt, err := OpenTrace(filepath.Join(fixtureDir, name), "", nil)
		if err != nil {
			t.Fatal(err)
		}
		rep, err := RunTrace(rt, TraceOptions{Sizes: fixtureSizes(rt), NoLibCacheSim: true})
		if err != nil {
			t.Fatal(err)
		}
		if python != "" {
			fresh[name] = lcsFigures(t, python, root, rep)
		}
		for _, run := range rep.Sizes {
			key := sizeName(run.Capacity)
			var figs []*Yardstick
			if c := committed[name][key]; c != nil {
				figs = append(figs, c)
			} else if !*lcsRewrite {
				t.Errorf("%s %s: no committed libCacheSim figures (run with -rewrite-libcachesim)", name, key)
			}
			if f := fresh[name][key]; f != nil {
				figs = append(figs, f)
				if c := committed[name][key]; c != nil && c.Policies["LRU"] != f.Policies["LRU"] {
					t.Errorf("%s %s: libCacheSim's LRU now gives %v, committed %v", name, key, f.Policies["LRU"], c.Policies["LRU"])
				}
			}
			for _, y := range figs {
				lru := y.Policies["LRU"].HitRatio
				t.Logf("%s at %d bytes: our object LRU %.4f, libCacheSim's LRU %.4f", name, run.Capacity, run.ObjectLRU.HitRatio, lru)
				if d := run.ObjectLRU.HitRatio - lru; d > 0.005 || d < -0.005 {
					t.Errorf("%s at %d bytes: our LRU %.4f, libCacheSim's %.4f", name, run.Capacity, run.ObjectLRU.HitRatio, lru)
				}
			}
			if run.ObjectLRU.HitRatio <= 0 || run.Belady < run.ObjectLRU.HitRatio {
				t.Errorf("%s at %d bytes: LRU %.3f, Belady %.3f", name, run.Capacity, run.ObjectLRU.HitRatio, run.Belady)
			}
		}
		md, figs := rep.Markdown("test")
		if len(figs) != 1 || !strings.Contains(md, "| total cache | policy |") || !strings.Contains(string(figs[0].SVG), "<svg") {
			t.Errorf("%s: report without its table or curve", name)
		}
	}
	if *lcsRewrite {
		b, _ := json.MarshalIndent(fresh, "", "  ")
		if err := os.WriteFile(filepath.Join(fixtureDir, lruFigures), append(b, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// lcsFigures runs Script's LRU and BeladySize on rep's trace at its sizes.
func lcsFigures(t *testing.T, python, root string, rep *TraceReport) map[string]*Yardstick {
	dir := t.TempDir()
	tr, _ := replayTimes(rep.Trace, rep.Rate)
	manifest, err := exportTrace(dir, tr, rep)
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "y.json")
	cmd := exec.Command(python, filepath.Join(root, Script), manifest, "--json", out, "--policies", "LRU,BeladySize")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, b)
	}
	ys, err := readYardstick(out)
	if err != nil {
		t.Fatal(err)
	}
	return ys
}

// TestTraceCommand runs strata-lab sim policies --trace on a fixture, and
// on a truncated copy, which must fail naming the offset and write no
// report.
func TestTraceCommand(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "report")
	var stdout, stderr bytes.Buffer
	args := []string{"--trace", filepath.Join(fixtureDir, lcsFixture), "--sizes", "2MiB,4MiB", "--out", out, "--no-libcachesim"}
	if err := Command(args, &stdout, &stderr); err != nil {
		t.Fatalf("%v\n%s", err, stderr.Bytes())
	}
	md, err := os.ReadFile(filepath.Join(out, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(out, "miss-ratio-curve.svg")); err != nil {
		t.Error(err)
	}
	if !strings.Contains(string(md), "| 4 MiB | reinsert |") || strings.Count(stdout.String(), "\n") != 2 {
		t.Errorf("report or summary lacks a size:\n%s\n%s", md, stdout.Bytes())
	}
	b, err := os.ReadFile(filepath.Join(fixtureDir, lcsFixture))
	if err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(dir, "cut.oracleGeneral")
	if err := os.WriteFile(bad, b[:1000], 0o644); err != nil {
		t.Fatal(err)
	}
	out2 := filepath.Join(dir, "report2")
	err = Command([]string{"--trace", bad, "--cache-size", "4MiB", "--out", out2, "--no-libcachesim"}, &stdout, &stderr)
	if err == nil || !strings.Contains(err.Error(), "byte offset 984") {
		t.Errorf("truncated trace: %v", err)
	}
	if _, err := os.Stat(out2); !os.IsNotExist(err) {
		t.Errorf("a report was written for a bad trace: %v", err)
	}
	for _, a := range [][]string{{"--cache-size", "1MiB", "--sizes", "2MiB"}, {"--cache-size", "lots"}, {"--format", "xml"}} {
		if err := Command(append([]string{"--trace", bad}, a...), &stdout, &stderr); !errors.Is(err, errUsage) {
			t.Errorf("%v: %v", a, err)
		}
	}
}

// TestTraceScale: RAM and the flash data blocks add up to the size, RAM
// holds the largest objects, and a size too small for flash is refused.
func TestTraceScale(t *testing.T) {
	for _, c := range []struct{ total, minRAM int64 }{{20 << 20, 0}, {20 << 20, 6 << 20}, {100 << 30, 8 << 20}, {1 << 20, 1 << 30}} {
		sc, err := traceScale(c.total, DefaultRAMShare, 0, c.minRAM)
		if err != nil {
			t.Fatal(err)
		}
		if sc.Capacity() != c.total || sc.RAM < min(c.minRAM, c.total/2) || sc.Block > maxTraceBlock || sc.SSD%sc.Block != 0 {
			t.Errorf("%d bytes, min RAM %d: %+v (capacity %d)", c.total, c.minRAM, sc, sc.Capacity())
		}
	}
	if _, err := traceScale(16<<10, DefaultRAMShare, 0, 0); err == nil {
		t.Error("16 KiB: flash of fewer than 8 blocks accepted")
	}
}
