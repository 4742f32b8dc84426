package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/strata-media/strata/internal/cli"
	"github.com/strata-media/strata/internal/lab/report"
	"github.com/strata-media/strata/internal/lab/sim/flashstream"
	"github.com/strata-media/strata/internal/lab/sim/policysim"
	"github.com/strata-media/strata/internal/progress"
)

// simCommands are strata-lab sim's experiments.
func simCommands() map[string]cli.Command {
	return map[string]cli.Command{
		"flashstream": {Summary: "FlashStream §5: Fig. 7, fill times, block size, energy, offline bound", Run: runSimFlashStream},
		"framegroup":  {Summary: "frame grouping §IV: Figs. 12-14, grouped vs play-order layout on SSD1, SSD2, HDD", Run: runSimFramegroup},
		"vod":         {Summary: "VoD paper §4, §6: interval caching vs file-level LFU, cost model, flash lifetime, dynamic LFU", Run: runSimVoD},
		"mris":        {Summary: "MRIS §4.3-4.4: the image store on SSD, hybrid and HDD (Tables 2-4, eq. 1-5)", Run: runSimMRIS},
		"streams":     {Summary: "multi-streamed SSD §4: stream mappings, TRIM, aging, WAF and lifetime on the FTL model", Run: runSimStreams},
		"peers":       {Summary: "the side-by-side benchmark's request trace: the core under each objective vs libCacheSim and Belady", Run: runSimPeers},
		"policies":    {Summary: "flash block policies (reinsert, tinylfu, LRU, LFU, FIFO) vs Belady and libCacheSim on four workloads, or on your own trace (--trace FILE)", Run: policysim.Command},
	}
}

func runSim(args []string, stdout, stderr io.Writer) error {
	return cli.Group("strata-lab sim <experiment> [--scale small|paper] [--out DIR] [--json]", "Experiments", "name an experiment",
		simCommands(), args, stdout, stderr)
}

// simFlags are the flags every experiment takes.
type simFlags struct {
	scale    string
	out      string
	asJSON   bool
	seed     uint64
	parallel int
}

func parseSimFlags(name string, args []string, stderr io.Writer) (simFlags, error) {
	f := simFlags{}
	fs := newFlags("sim "+name, "[--scale small|paper] [--out DIR] [--json]", stderr)
	fs.StringVar(&f.scale, "scale", "small", "small (CI, minutes) or paper (the paper's full configuration)")
	fs.StringVar(&f.out, "out", "", "directory for report.md and its SVG figures (default sim-<experiment>-<scale>)")
	fs.BoolVar(&f.asJSON, "json", false, "print the results as JSON on stdout")
	fs.Uint64Var(&f.seed, "seed", 1, "seed of the dataset and the request sequences")
	fs.IntVar(&f.parallel, "parallel", 2, "systems simulated at once")
	if err := parseFlags(fs, args); err != nil {
		return f, err
	}
	if f.out == "" {
		f.out = "sim-" + name + "-" + f.scale
	}
	return f, nil
}

// simReport is what every experiment hands back: its results and their
// Markdown rendering for a command line.
type simReport interface {
	Markdown(command string) (string, []report.Figure)
}

// finishSim writes an experiment's report into --out and prints its
// results as JSON (--json) or as summary prints them.
func finishSim(name string, args []string, f simFlags, rep simReport, stdout, stderr io.Writer, summary func()) error {
	md, figs := rep.Markdown(strings.TrimSpace("strata-lab sim " + name + " " + strings.Join(args, " ")))
	if err := report.Write(f.out, md, figs); err != nil {
		return fmt.Errorf("sim %s: %w", name, err)
	}
	fmt.Fprintf(stderr, "report: %s/report.md\n", f.out)
	if f.asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(rep)
	}
	summary()
	return nil
}

func runSimFlashStream(args []string, stdout, stderr io.Writer) error {
	f, err := parseSimFlags("flashstream", args, stderr)
	if err != nil {
		return err
	}
	sc, err := flashstream.ParseScale(f.scale)
	if err != nil {
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	setup, err := flashstream.NewSetup(sc, f.seed)
	if err != nil {
		return err
	}
	rep, err := flashstream.RunExperiments(setup, flashstream.Options{Parallel: f.parallel, Progress: progress.To(stderr)})
	if err != nil {
		return err
	}
	return finishSim("flashstream", args, f, rep, stdout, stderr, func() {
		for _, x := range rep.Fig7 {
			fmt.Fprintf(stdout, "%-24s max %4.0f req/s at 0%% misses, SSD hit ratio %.3f\n", x.System, x.MaxRPS, x.AtMax.SSDHitRatio)
		}
	})
}
