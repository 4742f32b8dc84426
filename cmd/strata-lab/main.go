// Command strata-lab is Strata's lab: the discrete-event simulators that
// reproduce the papers' experiments and replay the benchmarks' traces,
// and the benchmarking tools (the side-by-side peers report, the crash
// torture, the memory soak, a WAN-like origin). It is a binary apart from
// strata, the server, so that the server links none of it; its tools
// that run a server run the strata binary (--strata).
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/strata-media/strata/internal/cli"
)

func commands() map[string]cli.Command {
	return map[string]cli.Command{
		"origin":  {Summary: "serve a neutral WAN-like origin of a synthetic DASH library, for benchmarking caches", Run: runOrigin},
		"peers":   {Summary: "tabulate and plot a scripts/peers/run.sh result directory (the side-by-side benchmark)", Run: runPeers},
		"sim":     {Summary: "run an experiment in the discrete-event simulator (strata-lab sim for the list)", Run: runSim},
		"soak":    {Summary: "hold a strata serve at 80% of its maximum rate, sampling its resident memory", Run: runSoak},
		"torture": {Summary: "kill -9 a real strata serve under load, restart it, check every byte (crash torture)", Run: runTorture},
		"version": {Summary: "print the version", Run: runVersion},
	}
}

// Version is set at build time with -ldflags "-X main.Version=...".
var Version = "dev"

var (
	errUsage = cli.ErrUsage
	errFound = cli.ErrFound
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	return cli.Main("strata-lab", "strata-lab: Strata's simulators and benchmarking tools.", commands(), args, stdout, stderr)
}

// newFlags is the flag set of strata-lab's command name.
func newFlags(name, synopsis string, stderr io.Writer) *flag.FlagSet {
	return cli.NewFlags("strata-lab "+name, synopsis, stderr)
}

func parseFlags(fs *flag.FlagSet, args []string) error { return cli.ParseFlags(fs, args) }

func runVersion(args []string, stdout, stderr io.Writer) error {
	fmt.Fprintf(stdout, "strata-lab %s\n", Version)
	return nil
}

// strataFlag registers --strata, the server binary a tool runs.
func strataFlag(fs *flag.FlagSet) *string {
	return fs.String("strata", "", "the strata binary to run (default: strata beside strata-lab, then strata on PATH)")
}

// strataBinary is the server binary: bin if set, else strata beside this
// executable, else strata on PATH.
func strataBinary(bin string) (string, error) {
	if bin != "" {
		return bin, nil
	}
	if self, err := os.Executable(); err == nil {
		p := filepath.Join(filepath.Dir(self), "strata")
		if st, err := os.Stat(p); err == nil && !st.IsDir() {
			return p, nil
		}
	}
	p, err := exec.LookPath("strata")
	if err != nil {
		return "", fmt.Errorf("%w: no strata binary beside strata-lab or on PATH: build it (go build ./cmd/strata) and give --strata", errUsage)
	}
	return p, nil
}
