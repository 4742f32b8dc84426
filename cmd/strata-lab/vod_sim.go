package main

import (
	"fmt"
	"io"

	"github.com/strata-media/strata/internal/lab/sim/vodsim"
	"github.com/strata-media/strata/internal/progress"
)

// runSimVoD is strata-lab sim vod: the VoD paper's §4 and §6 (interval
// caching in RAM against file-level LFU on flash, the cost model, flash
// lifetime, the SSD models under reads and writes) and the dynamic LFU.
func runSimVoD(args []string, stdout, stderr io.Writer) error {
	f, err := parseSimFlags("vod", args, stderr)
	if err != nil {
		return err
	}
	sc, err := vodsim.ParseScale(f.scale)
	if err != nil {
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	rep, err := vodsim.Run(sc, f.seed, vodsim.Options{Parallel: f.parallel, Progress: progress.To(stderr)})
	if err != nil {
		return fmt.Errorf("sim vod: %w", err)
	}
	return finishSim("vod", args, f, rep, stdout, stderr, func() { printVoDSummary(stdout, rep) })
}

// printVoDSummary prints the headline numbers against the paper's.
func printVoDSummary(w io.Writer, r *vodsim.Report) {
	o := r.Onset
	fmt.Fprintf(w, "capacity added: interval caching %.0f%% (hit %.2f; paper 23%%, 0.19), LFU %.0f%% (hit %.2f; paper 59%%, 0.37)\n",
		100*o.ICGain, o.IC.Result.HitRatio, 100*o.LFUGain, o.LFU.Result.HitRatio)
	for _, m := range r.Cost.Formula {
		fmt.Fprintf(w, "%-9s %d DRAM %d SSD %d HDD  $%.0f  %.2f streams/$ (mean), %.2f (3600/$)\n",
			m.Config, m.DRAM, m.SSD, m.HDD, m.Dollars, m.MeanPerDollar, m.PerDollar)
	}
}
