package main

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/strata-media/strata/internal/lab/peers"
	"github.com/strata-media/strata/internal/progress"
)

// runSimPeers is strata-lab sim peers: the side-by-side benchmark's
// request trace replayed offline (peers.Offline).
func runSimPeers(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("sim peers", "--from RUN [--out DIR] [--steady N] [--python P]", stderr)
	o := peers.OfflineOptions{Progress: progress.To(stderr)}
	fs.StringVar(&o.Out, "out", "sim-peers", "directory for the trace (oracleGeneral), libCacheSim's figures and report.md")
	from := fs.String("from", "", "required: a scripts/peers/run.sh result directory (or its strata.json), e.g. docs/results/2026-11-24-peers: "+
		"Strata's find-max trials and 80% rate give the trace, the peers' results the best peer's byte hit ratio")
	fs.IntVar(&o.Steady, "steady", 0, "instead, N requests at the run's 80% rate from one seed after a warm-up of N/2 (a long run of the same law)")
	fs.StringVar(&o.Python, "python", "", "python with libcachesim (default .cache/lcs-venv/bin/python, then python3)")
	peerBHR := fs.Float64("peer-byte-hit", 0, "the best peer's byte hit ratio, for the max-rate ratio (default: from the peers' results beside --from)")
	fs.Int64Var(&o.RAM, "ram", 192<<20, "RAM budget, bytes (run.sh: 192 MiB)")
	fs.Int64Var(&o.Flash, "flash", 2<<30, "flash budget, bytes (run.sh: 2 GiB)")
	fs.BoolVar(&o.EdgeKeys, "edge-keys", true, "replay the edge's tier keys (grouped by edgekey.Group, as strata serve does), not the paths")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *from == "" {
		return fmt.Errorf("%w: --from is required: a scripts/peers/run.sh result directory, such as docs/results/2026-11-24-peers", errUsage)
	}
	var err error
	if o.Run, err = peers.ReadRun(*from, *peerBHR); errors.Is(err, peers.ErrIncomplete) {
		return fmt.Errorf("%w: --from: %v (--peer-byte-hit gives the best peer's byte hit ratio)", errUsage, err)
	} else if err != nil {
		return err
	}
	o.Command = strings.TrimSpace("strata-lab sim peers " + strings.Join(args, " "))
	md, err := peers.Offline(o)
	if err != nil {
		return err
	}
	fmt.Fprint(stdout, md)
	return nil
}
