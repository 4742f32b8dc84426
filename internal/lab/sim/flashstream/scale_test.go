package flashstream

import (
	"testing"
	"time"

	"github.com/strata-media/strata/internal/lab/golden"
)

// TestSmallScale runs the experiments of strata-lab sim flashstream --scale
// small with each trial shortened from 10 to 3 simulated minutes (the
// scale's library, RAM, flash and warm-ups unchanged; the full small run
// takes minutes of CPU, too long for every test run) and checks the
// paper's shape on them: a regression check of the simulator and the tier
// core together.
func TestSmallScale(t *testing.T) {
	if testing.Short() {
		t.Skip("a minute of simulation")
	}
	sc := scales["small"]
	sc.Trial = 3 * time.Minute
	s, err := NewSetup(sc, 1)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := RunExperiments(s, Options{})
	if err != nil {
		t.Fatal(err)
	}
	md, figs := rep.Markdown("strata-lab sim flashstream --scale small")
	// The tables of that run (testdata/small-seed1.tables, rewritten by
	// go test -run TestSmallScale -rewrite).
	golden.Check(t, "testdata/small-seed1.tables", golden.Tables(md))
	if len(figs) < 5 {
		t.Errorf("%d figures", len(figs))
	}
	fig7 := map[string]float64{}
	for _, m := range rep.Fig7 {
		fig7[m.System] = m.MaxRPS
	}
	if fig7["FlashStream(LRU)"] < 1.8*fig7["ZFS"] || fig7["Flashcache"] > fig7["ZFS"]/3 {
		t.Errorf("Fig. 7 shape lost: %v\n%s", fig7, md)
	}
	b := rep.BlockSize
	if b[1].FilledPercent > b[0].FilledPercent/10 {
		t.Errorf("4 KiB blocks do not collapse: %+v", b)
	}
	e := rep.Energy
	if !(e[0].RequestsPerJoule > e[2].RequestsPerJoule && e[2].RequestsPerJoule > e[1].RequestsPerJoule) {
		t.Errorf("energy order lost: %+v", e)
	}
}
