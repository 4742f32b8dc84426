// Command strata is Strata's server binary: a media storage server that
// serves video and images from RAM, flash and capacity storage, and its
// user commands (ingest, bench, fsck, probe, sign). The simulators and the
// benchmarking tools are the lab's binary, cmd/strata-lab.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/strata-media/strata/internal/cli"
	"github.com/strata-media/strata/internal/httpapi"
)

// command is one subcommand of strata.
type command = cli.Command

func commands() map[string]command {
	return map[string]command{
		"bench":   {Summary: "load a server with FlashStream-style segment requests and report deadline misses", Run: runBench},
		"fsck":    {Summary: "check a flash cache file or device and report what it holds", Run: runFsck},
		"ingest":  {Summary: "add media to the stores (strata ingest for the list)", Run: runIngest},
		"probe":   {Summary: "find a flash device's optimal write block size (FlashStream §3.1)", Run: runProbe},
		"serve":   {Summary: "run the media server (RAM, flash and capacity tiers over HTTP)", Run: runServe},
		"sign":    {Summary: "print a signed URL with a key of the config file (signed_urls)", Run: runSign},
		"version": {Summary: "print the version", Run: runVersion},
	}
}

var (
	// errUsage marks a usage error: exit status 2.
	errUsage = cli.ErrUsage
	// errFound marks a check that ran and found problems: exit status 1,
	// with the report already printed.
	errFound = cli.ErrFound
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 && (args[0] == "--version" || args[0] == "-version") {
		args = append([]string{"version"}, args[1:]...)
	}
	return cli.Main("strata", "strata: a media storage server for RAM, flash and capacity storage.", commands(), args, stdout, stderr)
}

// newFlags returns a flag set of strata's command name that reports
// errors instead of exiting.
func newFlags(name, synopsis string, stderr io.Writer) *flag.FlagSet {
	return cli.NewFlags("strata "+name, synopsis, stderr)
}

// parseFlags parses args, turning flag errors into usage errors.
func parseFlags(fs *flag.FlagSet, args []string) error { return cli.ParseFlags(fs, args) }

// runVersion prints the build: the module version and the VCS revision
// from Go's build information (httpapi.ReadBuild), as the start banner
// and strata_build_info name it; --json prints its fields.
func runVersion(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("version", "[--json]", stderr)
	asJSON := fs.Bool("json", false, "print the build's fields as JSON")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	b := httpapi.ReadBuild()
	return cli.Output(stdout, *asJSON, b, func() { fmt.Fprintf(stdout, "strata %s\n", b) })
}

// runIngest dispatches strata ingest's kinds of media.
func runIngest(args []string, stdout, stderr io.Writer) error {
	return cli.Group("strata ingest <kind> [flags] FILE...", "Kinds", "name what to ingest", map[string]command{
		"image": {Summary: "store an image file and its variants, as PUT /images/{id} does", Run: runIngestImage},
		"file":  {Summary: "store a whole media file served at /files/{id}, as PUT /files/{id} does", Run: runIngestFile},
		"video": {Summary: "package MP4 renditions into a playable title (DASH, HLS, play levels), as POST /videos/{id} does", Run: runIngestVideo},
	}, args, stdout, stderr)
}
