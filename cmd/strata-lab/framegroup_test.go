package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/strata-media/strata/internal/lab/sim/framesim"
)

// TestSimFramegroup runs the whole experiment at a tiny scale and checks
// the report, its figures and the JSON.
func TestSimFramegroup(t *testing.T) {
	parseFramegroupScale = func(string) (framesim.Scale, error) {
		return framesim.Scale{Name: "tiny", Titles: 6, Warmup: time.Second, Measure: 3 * time.Second}, nil
	}
	t.Cleanup(func() { parseFramegroupScale = framesim.ParseScale })
	dir := t.TempDir()
	var out, errb bytes.Buffer
	if err := runSimFramegroup([]string{"--out", dir, "--json"}, &out, &errb); err != nil {
		t.Fatalf("%v: %s", err, errb.String())
	}
	var rep framesim.Report
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatalf("%v in %s", err, out.String())
	}
	if len(rep.Fig14) != 18 || rep.Fig14[0].Grouped.Total <= 0 {
		t.Errorf("Fig. 14: %d pairs, first %+v", len(rep.Fig14), rep.Fig14[0])
	}
	for _, name := range []string{"report.md", "fig14-ssd2.svg", "fig13-l5.svg", "fig12-hdd.svg"} {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			t.Error(err)
		}
	}
}

func TestSimFramegroupBadScale(t *testing.T) {
	var out, errb bytes.Buffer
	err := runSimFramegroup([]string{"--scale", "huge", "--out", t.TempDir()}, &out, &errb)
	if !errors.Is(err, errUsage) {
		t.Errorf("--scale huge: %v, want a usage error", err)
	}
}
