// Package cli is what Strata's two binaries, strata (the server and its
// user commands) and strata-lab (the simulators and the benchmarking
// tools), share on a command line: commands and groups of subcommands,
// flag sets that report their errors instead of exiting, and the exit
// statuses (0 done, 1 failed or found problems, 2 usage error).
package cli

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
)

// A Command is one subcommand.
type Command struct {
	Summary string
	Run     func(args []string, stdout, stderr io.Writer) error
}

// ErrUsage marks a usage error: exit status 2.
var ErrUsage = errors.New("usage error")

// ErrFound marks a check that ran and found problems: exit status 1, with
// the report already printed.
var ErrFound = errors.New("problems found")

// Main runs the command of prog named by args[0] and returns the exit
// status; without a command (or with help) it prints about and the list
// of commands.
func Main(prog, about string, cmds map[string]Command, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		usage(stdout, prog, about, cmds)
		return 0
	}
	cmd, ok := cmds[args[0]]
	if !ok {
		fmt.Fprintf(stderr, "%s: unknown command %q\n\n", prog, args[0])
		usage(stderr, prog, about, cmds)
		return 2
	}
	err := cmd.Run(args[1:], stdout, stderr)
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
		return 0
	case errors.Is(err, ErrUsage):
		fmt.Fprintf(stderr, "%s %s: %v\n", prog, args[0], err)
		return 2
	case errors.Is(err, ErrFound):
		return 1
	}
	fmt.Fprintf(stderr, "%s %s: %v\n", prog, args[0], err)
	return 1
}

func usage(w io.Writer, prog, about string, cmds map[string]Command) {
	fmt.Fprintln(w, about)
	fmt.Fprintf(w, "\nUsage: %s <command> [flags]\n\nCommands:\n", prog)
	list(w, cmds, 9)
	fmt.Fprintf(w, "\nRun '%s <command> -h' for a command's flags.\n", prog)
}

// list prints the commands' names and summaries, in name order.
func list(w io.Writer, cmds map[string]Command, width int) {
	for _, n := range slices.Sorted(maps.Keys(cmds)) {
		fmt.Fprintf(w, "  %-*s %s\n", width, n, cmds[n].Summary)
	}
}

// Group runs the subcommand of a group (strata ingest image, strata-lab
// sim vod) named by args[0]; without one it prints synopsis, then the
// subcommands under heading, and is a usage error saying missing.
func Group(synopsis, heading, missing string, subs map[string]Command, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || subs[args[0]].Run == nil {
		width := 0
		for n := range subs {
			width = max(width, len(n)+2)
		}
		fmt.Fprintf(stderr, "Usage: %s\n\n%s:\n", synopsis, heading)
		list(stderr, subs, width)
		return fmt.Errorf("%w: %s", ErrUsage, missing)
	}
	return subs[args[0]].Run(args[1:], stdout, stderr)
}

// NewFlags returns a flag set of the command name ("strata serve") that
// reports errors instead of exiting.
func NewFlags(name, synopsis string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: %s %s\n\nFlags:\n", name, synopsis)
		fs.PrintDefaults()
	}
	return fs
}

// ParseFlags parses args, turning flag errors into usage errors; no
// argument may follow the flags.
func ParseFlags(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return fmt.Errorf("%w: %v", ErrUsage, err)
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("%w: unexpected argument %q", ErrUsage, fs.Arg(0))
	}
	return nil
}

// ParseWithArg parses fs from args holding one argument (a URL, a
// directory) before or after the flags, and returns it; missing is the
// usage error's text when there is none.
func ParseWithArg(fs *flag.FlagSet, args []string, missing string) (string, error) {
	var arg string
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		arg, args = args[0], args[1:]
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return "", err
		}
		return "", fmt.Errorf("%w: %w", ErrUsage, err)
	}
	rest := fs.Args()
	if arg == "" && len(rest) > 0 {
		arg, rest = rest[0], rest[1:]
	}
	if len(rest) > 0 {
		return "", fmt.Errorf("%w: unexpected argument %q", ErrUsage, rest[0])
	}
	if arg == "" {
		return "", fmt.Errorf("%w: %s", ErrUsage, missing)
	}
	return arg, nil
}

// Output writes v as indented JSON, or calls table.
func Output(w io.Writer, asJSON bool, v any, table func()) error {
	if !asJSON {
		table()
		return nil
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
