package mrissim

import (
	"encoding/xml"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/strata-media/strata/internal/lab/golden"
)

// A reduced run: every setup and ratio produces sane throughput, and the
// device models order the setups as MRIS measured them.
func TestRunShape(t *testing.T) {
	rep, err := Run(Config{Scale: "small", Groups: 300, DBGroups: 3000, RealDBGroups: 200, Reads: 400, Ratios: []int{1, 4, 16, 64},
		Real: true, RealDir: t.TempDir()}, testWriter(t))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range append(rep.Reads, rep.Real.Reads...) {
		if r.OpsPerS <= 0 || r.MBPerS <= 0 {
			t.Fatalf("%+v", r)
		}
	}
	for _, ratio := range []int{1, 4, 16, 64} {
		ssd, _ := rep.read("SSD", ratio)
		hyb, _ := rep.read("Hybrid", ratio)
		hdd, _ := rep.read("HDD", ratio)
		if !(ssd.OpsPerS > hyb.OpsPerS && hyb.OpsPerS > hdd.OpsPerS*0.3) {
			t.Errorf("ratio %d: SSD %.0f, Hybrid %.0f, HDD %.0f ops/s", ratio, ssd.OpsPerS, hyb.OpsPerS, hdd.OpsPerS)
		}
	}
	if f := rep.FlashFraction; f < 0.05 || f > 0.07 {
		t.Errorf("flash fraction %.3f, MRIS has 5.9%%", f)
	}
	checkFiles(t, rep)
}

// checkFiles writes the report and checks that the figures are XML and
// the Markdown has every section.
func checkFiles(t *testing.T, rep *Report) {
	dir := t.TempDir()
	if err := rep.WriteFiles(dir, "strata-lab sim mris --test"); err != nil {
		t.Fatal(err)
	}
	for name := range rep.figures() {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil || xml.Unmarshal(b, new(struct{ XMLName xml.Name })) != nil {
			t.Errorf("%s: not an SVG document: %v", name, err)
		}
	}
	md, _ := os.ReadFile(filepath.Join(dir, "report.md"))
	for _, h := range []string{"## Setups", "## Writes", "## Reads", "## Speedups", "## Model", "## The same workload", "## Notes"} {
		if !strings.Contains(string(md), h) {
			t.Errorf("report.md lacks %q", h)
		}
	}
}

func TestLeastSquares(t *testing.T) {
	a, b, r2 := leastSquares([]float64{1, 2, 4, 8}, []float64{5, 7, 11, 19})
	if math.Abs(a-2) > 1e-9 || math.Abs(b-3) > 1e-9 || math.Abs(r2-1) > 1e-9 {
		t.Fatalf("a=%v b=%v r2=%v", a, b, r2)
	}
}

type logWriter struct{ t *testing.T }

func (w logWriter) Write(p []byte) (int, error) { w.t.Log(string(p)); return len(p), nil }

func testWriter(t *testing.T) logWriter { return logWriter{t} }

// TestSmallScaleTables runs the simulated part of `strata-lab sim mris --scale
// small --seed 1` (the run on real directories measures this machine's
// wall time and is left out) and compares its report's tables with
// testdata (go test -rewrite updates it).
func TestSmallScaleTables(t *testing.T) {
	if testing.Short() {
		t.Skip("a few seconds of simulation")
	}
	rep, err := Run(Config{Scale: "small", Seed: 1}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "testdata/small-seed1.tables", golden.Tables(rep.Markdown("strata-lab sim mris --scale small --seed 1")))
}
