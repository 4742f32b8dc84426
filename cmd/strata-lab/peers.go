package main

import (
	"fmt"
	"io"

	"github.com/strata-media/strata/internal/cli"
	"github.com/strata-media/strata/internal/lab/peers"
	"github.com/strata-media/strata/internal/lab/report"
)

// peersSynopsis is peers' usage line.
const peersSynopsis = "DIR [--check]"

// runPeers tabulates a scripts/peers/run.sh result directory: DIR/report.md
// and an SVG per figure, the table on stdout; --check also checks that
// every server served the workload (the quick CI run).
func runPeers(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("peers", peersSynopsis, stderr)
	check := fs.Bool("check", false, "fail unless every server answered every request and cached some")
	dir, err := cli.ParseWithArg(fs, args, "name a scripts/peers/run.sh result directory")
	if err != nil {
		return err
	}
	results, err := peers.Load(dir)
	if err != nil {
		return err
	}
	ms := make([]peers.Metrics, len(results))
	for i, r := range results {
		ms[i] = peers.Compute(r)
	}
	figs := peers.Figures(ms)
	md := peers.Markdown(results, ms, figs)
	if err := report.Write(dir, md, figs); err != nil {
		return err
	}
	fmt.Fprint(stdout, md)
	if *check {
		if err := peers.Check(results); err != nil {
			fmt.Fprintln(stderr, err)
			return errFound
		}
		fmt.Fprintf(stdout, "check: all %d servers served the workload and cached\n", len(results))
	}
	return nil
}
