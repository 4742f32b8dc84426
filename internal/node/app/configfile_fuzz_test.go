package app

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"
	"unicode/utf8"

	"github.com/BurntSushi/toml"

	"github.com/strata-media/strata/internal/node/edge"
)

// FuzzEdgeConfigFile: whatever a configuration file says in [edge],
// [[edge.rule]] and [[upstream]] (or anywhere), reading it never panics
// and fails only with ErrConfig; a file that reads gives rules that
// edge.CheckRules accepts or an ErrConfig from Policies, and written back
// (WriteConfigFile, as strata config writes it) it reads as the same
// [edge] and [[upstream]].
func FuzzEdgeConfigFile(f *testing.F) {
	f.Add("[edge]\nttl = \"10s\"\nkeep_on_error = \"1h\"\n[[edge.rule]]\nprefix = \"/live/\"\nmatch = \"*.m3u8\"\nttl = \"1s\"\n" +
		"[[edge.rule]]\nprefix = \"/vod/\"\nquery = \"list\"\nquery_params = [\"v\"]\n")
	f.Add("[[upstream]]\nprefix = \"/cdn/\"\nurl = \"http://127.0.0.1:1/media/\"\nbackups = [\"http://b/\"]\n")
	f.Add("[[edge.rule]]\nmatch = \"[\"\n")
	f.Add("[[edge.rule]]\nprefix = \"/a/\"\n[[edge.rule]]\nprefix = \"/a/b/\"\nmatch = \"*\"\ngrace = \"-1s\"\n")
	f.Add("[edge]\nmax_object_size = \"1KiB\"\nquery = \"none\"\n")
	f.Fuzz(func(t *testing.T, file string) {
		if len(file) > 16<<10 {
			return
		}
		p := filepath.Join(t.TempDir(), "strata.toml")
		if err := os.WriteFile(p, []byte(file), 0o600); err != nil {
			t.Fatal(err)
		}
		cfg := DefaultConfig()
		if err := DecodeConfigFile(p, &cfg, io.Discard); err != nil {
			if !errors.Is(err, ErrConfig) {
				t.Fatalf("reading %q: %v, not ErrConfig", file, err)
			}
			return
		}
		def, rules, err := cfg.Edge.Policies()
		switch {
		case err != nil && !errors.Is(err, ErrConfig):
			t.Fatalf("policies of %q: %v, not ErrConfig", file, err)
		case err == nil:
			if cerr := edge.CheckRules(def, rules); cerr != nil {
				t.Fatalf("policies of %q accepted, CheckRules: %v", file, cerr)
			}
		}
		write := func(c *Config) string {
			var buf bytes.Buffer
			WriteConfigFile(&buf, c, flag.NewFlagSet("strata", flag.ContinueOnError), "", false)
			return buf.String()
		}
		written := write(&cfg)
		back := DefaultConfig()
		if _, err := toml.Decode(written, &back); err != nil {
			t.Fatalf("%q written back does not read: %v\n%s", file, err, written)
		}
		// An empty list is written "[]", read as an empty slice where
		// the original had none: the policies compared, and the file
		// written again, say whether anything else differs.
		def2, rules2, err2 := back.Edge.Policies()
		if a, b := fmt.Sprintf("%+v %+v %v", def, rules, err), fmt.Sprintf("%+v %+v %v", def2, rules2, err2); a != b {
			t.Fatalf("%q written back has the policies\n%s, want\n%s\nfrom\n%s", file, b, a, written)
		}
		if a, b := fmt.Sprintf("%+v", cfg.Upstreams), fmt.Sprintf("%+v", back.Upstreams); a != b {
			t.Fatalf("%q written back has the upstreams\n%s, want\n%s", file, b, a)
		}
		if again := write(&back); again != written {
			t.Fatalf("%q written back, read and written again differs:\n%s\nthen\n%s", file, written, again)
		}
	})
}

// FuzzTOMLString: a text value written as a TOML basic string reads back
// as itself.
func FuzzTOMLString(f *testing.F) {
	for _, s := range []string{"", `a"b\c`, "tab\tnl\n\x00\x7f", "é€😀", "\u2028"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if !utf8.ValidString(s) {
			return // TOML text is UTF-8
		}
		var v struct{ K string }
		if _, err := toml.Decode("K = "+tomlString(s), &v); err != nil || v.K != s {
			t.Fatalf("%q written as %s: read %q, %v", s, tomlString(s), v.K, err)
		}
	})
}
