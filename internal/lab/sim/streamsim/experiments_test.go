package streamsim

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/strata-media/strata/internal/core/tier"
	"github.com/strata-media/strata/internal/lab/golden"
)

func TestSegCacheWholeUnits(t *testing.T) {
	for _, c := range []struct {
		policy  tier.BlockPolicy
		mapping MappingName
	}{{tier.BlockFIFO, Normal}, {tier.BlockLRU, MultiData}} {
		sc, err := segCacheScenario(testScale, segCacheOptions{Policy: c.policy, Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		r, err := replay(sc, c.mapping, false, false)
		if err != nil {
			t.Fatal(err)
		}
		if r.Aged.WAF > 1.01 || r.Notes["free_blocks"] != 0 {
			t.Errorf("%s %s: WAF %.3f (want 1), notes %v", c.policy, c.mapping, r.Aged.WAF, r.Notes)
		}
	}
}

// TestRun runs every experiment at the test scale with a live trace and
// checks the report's shape.
func TestRun(t *testing.T) {
	if testing.Short() {
		t.Skip("runs every experiment")
	}
	path := filepath.Join(t.TempDir(), "live.trace")
	if err := os.WriteFile(path, syntheticTrace(t), 0o644); err != nil {
		t.Fatal(err)
	}
	rep, err := Run(Options{Scale: testScale, Seed: 1, Traces: []string{path}, Parallel: 2})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range rep.Experiments {
		if e.Ideal == nil || e.Ideal.Aged.GCCopies != 0 {
			t.Errorf("%s: the ideal drive copied pages: %+v", e.Name, e.Ideal)
		}
		for _, r := range e.Runs {
			if r == nil || r.Aged.HostPages == 0 || r.Aged.WAF < 1 || r.Aged.Norm <= 0 {
				t.Errorf("%s: bad run %+v", e.Name, r)
			}
		}
	}
	md, figs := rep.Markdown("strata-lab sim streams --scale test")
	// The tables of this run: the test scale, not --scale small, whose
	// three minutes of simulation this package's tests cannot afford.
	golden.Check(t, "testdata/test-seed1.tables", golden.Tables(md))
	for _, want := range []string{"## Cassandra-like LSM", "reproduced", "live write trace live.trace", "CacheLib", "## Notes"} {
		if !strings.Contains(md, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	if len(figs) < 3*len(rep.Experiments)-4 {
		t.Errorf("%d figures for %d experiments", len(figs), len(rep.Experiments))
	}
	if b := rep.Benchmarks("cmd"); !strings.Contains(b, "Multi-Data") || !strings.Contains(b, "`cmd`") {
		t.Errorf("benchmarks section:\n%s", b)
	}
}
