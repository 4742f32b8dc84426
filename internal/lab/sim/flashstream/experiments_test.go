package flashstream

import (
	"testing"
	"time"
)

// A shortened small-scale run of every experiment: it checks the machinery
// (each system serves, searches converge, the report renders), not results.
// In -short runs only: a full run has TestSmallScale, which runs every
// experiment at small scale and checks its tables.
func TestFlashStreamExperimentsRun(t *testing.T) {
	if !testing.Short() {
		t.Skip("TestSmallScale runs every experiment, in full")
	}
	sc := scales["small"]
	sc.Titles, sc.SSD, sc.RAM, sc.EnergySSD, sc.TradARAM = 40, 3e9, 40<<20, 3e9, 100<<20
	sc.Trial, sc.FillLimit = time.Minute, 30*time.Minute
	s, err := NewSetup(sc, 1)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	rep, err := RunExperiments(s, Options{Progress: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	md, _ := rep.Markdown("go test")
	t.Logf("%v\n%s", time.Since(start), md)
	for _, m := range rep.Fig7[:4] {
		if m.MaxRPS == 0 {
			t.Errorf("%s sustained no rate", m.System)
		}
	}
}
