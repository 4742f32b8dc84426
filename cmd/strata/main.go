// Command strata is Strata's one binary: a media storage server that serves
// video and images from RAM, flash and capacity storage, and the tools
// around it.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
)

// A command is one subcommand of strata.
type command struct {
	summary string
	run     func(args []string, stdout, stderr io.Writer) error
}

func commands() map[string]command {
	return map[string]command{
		"bench":   {"load a server with FlashStream-style segment requests and report deadline misses", runBench},
		"fsck":    {"check a flash cache file or device and report what it holds", runFsck},
		"ingest":  {"add media to the stores (strata ingest for the list)", runIngest},
		"origin":  {"serve a neutral WAN-like origin of a synthetic DASH library, for benchmarking caches", runOrigin},
		"peers":   {"tabulate and plot a scripts/peers/run.sh result directory (the side-by-side benchmark)", runPeers},
		"probe":   {"find a flash device's optimal write block size (FlashStream §3.1)", runProbe},
		"sim":     {"run an experiment in the discrete-event simulator (strata sim for the list)", runSim},
		"serve":   {"run the media server (RAM, flash and capacity tiers over HTTP)", runServe},
		"sign":    {"print a signed URL with a key of the config file (signed_urls)", runSign},
		"soak":    {"hold a server at 80% of its maximum rate, sampling its resident memory (soak)", runSoak},
		"torture": {"kill -9 a real strata serve under load, restart it, check every byte (crash torture)", runTorture},
		"version": {"print the version", runVersion},
	}
}

// Version is set at build time with -ldflags "-X main.Version=...".
var Version = "dev"

// errUsage marks a usage error: exit status 2.
var errUsage = errors.New("usage error")

// errFound marks a check that ran and found problems: exit status 1, with
// the report already printed.
var errFound = errors.New("problems found")

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		usage(stdout)
		return 0
	}
	cmd, ok := commands()[args[0]]
	if !ok {
		fmt.Fprintf(stderr, "strata: unknown command %q\n\n", args[0])
		usage(stderr)
		return 2
	}
	err := cmd.run(args[1:], stdout, stderr)
	switch {
	case err == nil:
		return 0
	case errors.Is(err, flag.ErrHelp):
		return 0
	case errors.Is(err, errUsage):
		fmt.Fprintf(stderr, "strata %s: %v\n", args[0], err)
		return 2
	case errors.Is(err, errFound):
		return 1
	}
	fmt.Fprintf(stderr, "strata %s: %v\n", args[0], err)
	return 1
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "strata: a media storage server for RAM, flash and capacity storage.")
	fmt.Fprintln(w, "\nUsage: strata <command> [flags]\n\nCommands:")
	cmds := commands()
	names := make([]string, 0, len(cmds))
	for n := range cmds {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-9s %s\n", n, cmds[n].summary)
	}
	fmt.Fprintln(w, "\nRun 'strata <command> -h' for a command's flags.")
}

// newFlags returns a flag set that reports errors instead of exiting.
func newFlags(name, synopsis string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("strata "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: strata %s %s\n\nFlags:\n", name, synopsis)
		fs.PrintDefaults()
	}
	return fs
}

// parseFlags parses args, turning flag errors into usage errors.
func parseFlags(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("%w: unexpected argument %q", errUsage, fs.Arg(0))
	}
	return nil
}

func runVersion(args []string, stdout, stderr io.Writer) error {
	fmt.Fprintf(stdout, "strata %s\n", Version)
	return nil
}

// ingestCommands are strata ingest's kinds of media.
func ingestCommands() map[string]command {
	return map[string]command{
		"image": {"store an image file and its variants, as PUT /images/{id} does", runIngestImage},
		"file":  {"store a whole media file served at /files/{id}, as PUT /files/{id} does", runIngestFile},
		"video": {"package MP4 renditions into a playable title (DASH, HLS, play levels), as POST /videos/{id} does", runIngestVideo},
	}
}

// runIngest dispatches strata ingest's subcommands.
func runIngest(args []string, stdout, stderr io.Writer) error {
	subs := ingestCommands()
	if len(args) == 0 || subs[args[0]].run == nil {
		fmt.Fprintln(stderr, "Usage: strata ingest <kind> [flags] FILE...\n\nKinds:")
		names := make([]string, 0, len(subs))
		for n := range subs {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			fmt.Fprintf(stderr, "  %-8s %s\n", n, subs[n].summary)
		}
		return fmt.Errorf("%w: name what to ingest", errUsage)
	}
	return subs[args[0]].run(args[1:], stdout, stderr)
}
