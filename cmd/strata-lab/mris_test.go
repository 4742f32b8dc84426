package main

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/strata-media/strata/internal/lab/sim/mrissim"
)

// strata-lab sim mris --scale small writes its report well within two
// minutes.
func TestSimMRISSmall(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the small-scale MRIS benchmark")
	}
	out := t.TempDir()
	start := time.Now()
	var stderr bytes.Buffer
	if err := runSimMRIS([]string{"--scale", "small", "--out", out, "--real-dir", t.TempDir()}, io.Discard, &stderr); err != nil {
		t.Fatal(err)
	}
	t.Logf("%s in %v", stderr.String(), time.Since(start))
	for _, f := range []string{"report.md", "report.json", "reads-ops.svg", "reads-mb.svg", "model-ops.svg", "model-mb.svg", "speedup.svg", "writes.svg"} {
		if fi, err := os.Stat(filepath.Join(out, f)); err != nil || fi.Size() == 0 {
			t.Errorf("%s: %v", f, err)
		}
	}
	var rep mrissim.Report
	b, _ := os.ReadFile(filepath.Join(out, "report.json"))
	if err := json.Unmarshal(b, &rep); err != nil || len(rep.Reads) != 21 || rep.Real == nil {
		t.Fatalf("report.json: %v", err)
	}
}
