package sim

import (
	"os"
	"testing"
)

// TestSmallScaleReport runs the full small-scale experiment set when
// STRATA_SIM_FULL is set (strata sim flashstream --scale small runs it too).
func TestSmallScaleReport(t *testing.T) {
	if os.Getenv("STRATA_SIM_FULL") == "" {
		t.Skip("set STRATA_SIM_FULL=1")
	}
	s, err := NewSetup(Scales["small"], 1)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := RunFlashStream(s, Options{Progress: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	md, _ := rep.Markdown("go test")
	t.Log(md)
}
