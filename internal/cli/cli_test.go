package cli

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
)

// TestMainExitStatus: 0 for success and help, 2 for a usage error or an
// unknown command, 1 for found problems (nothing printed: the command
// printed its report) and for any other error.
func TestMainExitStatus(t *testing.T) {
	cmds := map[string]Command{
		"ok":    {Summary: "succeeds", Run: func([]string, io.Writer, io.Writer) error { return nil }},
		"usage": {Summary: "misused", Run: func([]string, io.Writer, io.Writer) error { return fmt.Errorf("%w: bad flag", ErrUsage) }},
		"found": {Summary: "finds", Run: func([]string, io.Writer, io.Writer) error { return ErrFound }},
		"fails": {Summary: "fails", Run: func([]string, io.Writer, io.Writer) error { return errors.New("disk on fire") }},
	}
	for args, want := range map[string]struct {
		code   int
		stderr string
	}{
		"":      {0, ""},
		"ok":    {0, ""},
		"usage": {2, "prog usage: usage error: bad flag"},
		"found": {1, ""},
		"fails": {1, "prog fails: disk on fire"},
		"nope":  {2, `prog: unknown command "nope"`},
	} {
		var out, errb bytes.Buffer
		code := Main("prog", "about prog", cmds, strings.Fields(args), &out, &errb)
		if code != want.code || !strings.Contains(errb.String(), want.stderr) || (want.stderr == "" && errb.Len() > 0) {
			t.Errorf("%q: exit %d, stderr %q; want %d, %q", args, code, errb.String(), want.code, want.stderr)
		}
		if args == "" && !strings.Contains(out.String(), "  usage     misused\n") {
			t.Errorf("no command list:\n%s", out.String())
		}
	}
}

// TestParseWithArg: the argument may come before or after the flags; a
// second one, or none, is a usage error.
func TestParseWithArg(t *testing.T) {
	for _, args := range [][]string{{"X", "--n", "3"}, {"--n", "3", "X"}} {
		fs := NewFlags("t", "", io.Discard)
		n := fs.Int("n", 0, "")
		if arg, err := ParseWithArg(fs, args, "need X"); arg != "X" || *n != 3 || err != nil {
			t.Errorf("%v: %q, n %d, %v", args, arg, *n, err)
		}
	}
	for _, args := range [][]string{{"X", "Y"}, {"--n", "3"}, {"--bogus"}} {
		fs := NewFlags("t", "", io.Discard)
		fs.Int("n", 0, "")
		if _, err := ParseWithArg(fs, args, "need X"); !errors.Is(err, ErrUsage) {
			t.Errorf("%v: %v, want a usage error", args, err)
		}
	}
}

// TestGroup: a group runs its named subcommand with the rest of the
// arguments, and without one lists them and is a usage error.
func TestGroup(t *testing.T) {
	var got []string
	subs := map[string]Command{"a": {Summary: "the a", Run: func(args []string, _, _ io.Writer) error { got = args; return nil }}}
	if err := Group("g <sub>", "Subs", "name one", subs, []string{"a", "x"}, io.Discard, io.Discard); err != nil || len(got) != 1 || got[0] != "x" {
		t.Errorf("g a x: %v, args %v", err, got)
	}
	var errb bytes.Buffer
	if err := Group("g <sub>", "Subs", "name one", subs, nil, io.Discard, &errb); !errors.Is(err, ErrUsage) ||
		!strings.Contains(errb.String(), "Usage: g <sub>\n\nSubs:\n  a   the a\n") {
		t.Errorf("g: %v, %q", err, errb.String())
	}
}
