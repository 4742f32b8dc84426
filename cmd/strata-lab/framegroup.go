package main

import (
	"fmt"
	"io"

	"github.com/strata-media/strata/internal/lab/sim/framesim"
	"github.com/strata-media/strata/internal/progress"
)

// parseFramegroupScale resolves --scale; tests swap in a smaller scale.
var parseFramegroupScale = framesim.ParseScale

// runSimFramegroup is strata-lab sim framegroup: the frame-grouping paper's
// §IV (Figs. 12-14), grouped against play-order layout on the SSD1, SSD2
// and HDD models.
func runSimFramegroup(args []string, stdout, stderr io.Writer) error {
	f, err := parseSimFlags("framegroup", args, stderr)
	if err != nil {
		return err
	}
	sc, err := parseFramegroupScale(f.scale)
	if err != nil {
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	rep, err := framesim.RunAll(framesim.Options{Scale: sc, Seed: f.seed, Parallel: f.parallel, Progress: progress.To(stderr)})
	if err != nil {
		return err
	}
	return finishSim("framegroup", args, f, rep, stdout, stderr, func() { printFramegroup(stdout, rep) })
}

// printFramegroup prints the Fig. 14 totals and the claims' verdicts.
func printFramegroup(w io.Writer, rep *framesim.Report) {
	for _, p := range rep.Fig14 {
		fmt.Fprintf(w, "%-4s %s %2d users: grouped %5.1f MB/s, conventional %5.1f MB/s, gain %+5.1f%%\n",
			p.Device, p.Mix, p.Users, p.Grouped.Total, p.Conventional.Total, 100*p.Gain)
	}
	for _, c := range rep.Claims {
		fmt.Fprintf(w, "%-5s %s: %s (paper: %s)\n", c.Verdict, c.Figure, c.Sim, c.Paper)
	}
}
