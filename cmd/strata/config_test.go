package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/BurntSushi/toml"

	"github.com/strata-media/strata/internal/node/app"
)

// examplePath is the example config file, from this package's directory.
var examplePath = filepath.Join("..", "..", ExampleConfigPath)

// TestExampleConfigIsGenerated: the example file in the repository is what
// the code writes today, so that a key added, renamed or given another
// default cannot leave it behind.
func TestExampleConfigIsGenerated(t *testing.T) {
	var buf bytes.Buffer
	printConfig(&buf, app.DefaultConfig(), true)
	have, err := os.ReadFile(examplePath)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(have, buf.Bytes()) {
		t.Fatalf("%s is out of date: regenerate it with 'go generate ./cmd/strata'\n--- generated:\n%s", ExampleConfigPath, buf.String())
	}
}

// sample is a value for a key's flag other than its default.
func sample(k app.ConfigKey) string {
	switch k.Value.Interface().(type) {
	case app.Duration:
		return "7s"
	}
	switch k.Value.Kind() {
	case reflect.Bool:
		if k.Value.Bool() {
			return "false"
		}
		return "true"
	case reflect.Int, reflect.Int64:
		return "7"
	case reflect.Float64:
		return "0.37"
	case reflect.Slice:
		return "https://a.example,https://b.example"
	}
	if strings.HasSuffix(k.Value.Type().String(), "bytesize.Value") {
		return "3MiB"
	}
	return "/x/y"
}

// TestKeysAreNamedLikeTheirFlags: each flag of strata serve sets the key
// of its name and no other, and no flag is left without a key.
func TestKeysAreNamedLikeTheirFlags(t *testing.T) {
	def := app.DefaultConfig()
	keyed := map[string]bool{"upstream": true} // the [[upstream]] tables
	for _, k := range app.ConfigKeys(&def) {
		cfg := app.DefaultConfig()
		fs := flag.NewFlagSet("serve", flag.ContinueOnError)
		serveFlags(fs, &cfg)
		if fs.Lookup(k.FlagName()) == nil {
			continue // a key without a flag is allowed; its comment says so
		}
		keyed[k.FlagName()] = true
		if err := fs.Set(k.FlagName(), sample(k)); err != nil {
			t.Errorf("--%s %s: %v", k.FlagName(), sample(k), err)
			continue
		}
		changed := []string{}
		before := app.ConfigKeys(&def)
		for i, after := range app.ConfigKeys(&cfg) {
			if !reflect.DeepEqual(after.Value.Interface(), before[i].Value.Interface()) {
				changed = append(changed, after.Path())
			}
		}
		if len(changed) != 1 || changed[0] != k.Path() {
			t.Errorf("--%s changed %v, want only %s", k.FlagName(), changed, k.Path())
		}
	}
	fs := newFlags("serve", "", io.Discard)
	parseServeFlagsOnly(fs)
	fs.VisitAll(func(f *flag.Flag) {
		if !keyed[f.Name] && !nonKeyFlags[f.Name] && app.DeprecatedFlag(f.Name) == "" {
			t.Errorf("--%s sets no key of the config file of the same name", f.Name)
		}
	})
}

// parseServeFlagsOnly registers every flag strata serve takes.
func parseServeFlagsOnly(fs *flag.FlagSet) {
	var cfg app.Config
	var pr printRequest
	fs.String("config", "", "")
	fs.BoolVar(&pr.print, "print-config", false, "")
	fs.BoolVar(&pr.defaults, "defaults", false, "")
	serveFlags(fs, &cfg)
	app.AddDeprecatedFlags(fs)
}

// TestDeprecatedNames: the old names of renamed keys and flags still set
// them, with a warning; a file with both names of a key is refused.
func TestDeprecatedNames(t *testing.T) {
	dir := t.TempDir()
	conf := filepath.Join(dir, "old.toml")
	os.WriteFile(conf, []byte("ram = \"8MiB\"\n[files]\ndefault_bitrate = \"100KB\"\nflash_size = \"2MiB\"\n"), 0o644)
	var warn bytes.Buffer
	cfg, err := loadServeConfig([]string{"--config", conf, "--data", dir, "--flash-bandwidth", "5MB"}, &warn)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Files.Bitrate != 100_000 || cfg.Files.FlashSize != 2<<20 || cfg.RAM != 8<<20 || cfg.Files.FlashBandwidth != 5_000_000 {
		t.Fatalf("files %+v, ram %d", cfg.Files, cfg.RAM)
	}
	for _, w := range []string{"files.default_bitrate is deprecated; it is now files.bitrate", "--flash-bandwidth is deprecated; use --files-flash-bandwidth"} {
		if !strings.Contains(warn.String(), w) {
			t.Errorf("no warning %q in %q", w, warn.String())
		}
	}
	os.WriteFile(conf, []byte("[files]\ndefault_bitrate = \"100KB\"\nbitrate = \"1KB\"\n"), 0o644)
	if _, err := loadServeConfig([]string{"--config", conf, "--data", dir}, io.Discard); err == nil || !strings.Contains(err.Error(), "both") {
		t.Errorf("both names: %v", err)
	}
}

// TestPrintConfig: --print-config shows defaults, file and flags merged,
// derived paths filled in and the admin token hidden, as a file that
// reads back; it serves nothing.
func TestPrintConfig(t *testing.T) {
	dir := t.TempDir()
	conf := filepath.Join(dir, "strata.toml")
	os.WriteFile(conf, []byte("ram = \"8MiB\"\nadmin_token = \"s3cret-in-file\"\n[images]\nquality = 70\n"+
		"[[signed_urls.keys]]\nid = \"k1\"\nsecret = \"s3cret-signing-key-0123\"\n"), 0o644)
	var out, errb bytes.Buffer
	code := run([]string{"serve", "--config", conf, "--data", dir, "--images-quality", "60", "--print-config"}, &out, &errb)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	s := out.String()
	for _, want := range []string{`ram = "8MiB"`, `admin_token = "REDACTED"`, "quality = 60", `id = "k1"`, `secret = "REDACTED"`,
		`flash = "` + filepath.Join(dir, "flash.cache") + `"`, "# RAM buffer pool budget"} {
		if !strings.Contains(s, want) {
			t.Errorf("no %q in\n%s", want, s)
		}
	}
	if strings.Contains(s, "s3cret") {
		t.Error("the admin token is printed")
	}
	var back app.Config
	if _, err := toml.Decode(s, &back); err != nil || back.RAM != 8<<20 || back.Images.Quality != 60 {
		t.Errorf("the output reads back as ram %d, quality %d: %v", back.RAM, back.Images.Quality, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "flash.cache")); err == nil {
		t.Error("--print-config opened the node")
	}
}

// syncBuffer is a bytes.Buffer safe for the server's goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestLogFormatJSON: with --log-format json every line of the server's log
// is a JSON object; an unknown format is a usage error.
func TestLogFormatJSON(t *testing.T) {
	cfg := smallConfig(t.TempDir())
	cfg.LogLevel, cfg.LogFormat = "info", "json"
	var logs syncBuffer
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // serve opens the node, serves nothing and shuts down
	if err := serve(ctx, cfg, app.Options{}, nil, io.Discard, &logs); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(logs.String()), "\n")
	for _, l := range lines {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil || m["msg"] == nil || m["level"] == nil {
			t.Errorf("log line %q is not a JSON record: %v", l, err)
		}
	}
	if !strings.Contains(logs.String(), `"msg":"shutting down"`) {
		t.Errorf("no shutdown message in %q", logs.String())
	}
	var errb bytes.Buffer
	if code := run([]string{"serve", "--data", t.TempDir(), "--log-format", "xml"}, io.Discard, &errb); code != 2 ||
		!strings.Contains(errb.String(), "--log-format") {
		t.Errorf("--log-format xml: exit %d, %s", code, errb.String())
	}
}

// TestPrintConfigRefusesBadUpstreams: --print-config refuses what serve
// would, naming the key; a good [[upstream]] table is printed with its
// settings filled.
func TestPrintConfigRefusesBadUpstreams(t *testing.T) {
	dir := t.TempDir()
	conf := filepath.Join(dir, "strata.toml")
	for file, key := range map[string]string{
		"[[upstream]]\nprefix = \"/\"\nurl = \"ftp://origin.example/\"\n":                             "url",
		"[[upstream]]\nprefix = \"/\"\nurl = \"http://origin.example/\"\nconnect_timeout = \"-1s\"\n": "connect_timeout",
		"[[upstream]]\nprefix = \"/\"\nurl = \"http://origin.example/\"\nattempts = 50\n":             "attempts",
	} {
		os.WriteFile(conf, []byte(file), 0o644)
		var out, errb bytes.Buffer
		if code := run([]string{"serve", "--config", conf, "--data", dir, "--print-config"}, &out, &errb); code != 2 || !strings.Contains(errb.String(), key) {
			t.Errorf("%q: exit %d, %q", file, code, errb.String())
		}
	}
	os.WriteFile(conf, []byte("[[upstream]]\nprefix = \"/\"\nurl = \"http://origin.example/\"\nattempts = 3\n"), 0o644)
	var out, errb bytes.Buffer
	if code := run([]string{"serve", "--config", conf, "--data", dir, "--print-config"}, &out, &errb); code != 0 ||
		!strings.Contains(out.String(), "attempts = 3\nretry_backoff = \"100ms\"") || !strings.Contains(out.String(), `connect_timeout = "5s"`) {
		t.Errorf("exit %d %s:\n%s", code, errb.String(), out.String())
	}
}

// TestEdgeRulesConfig: [edge] defaults and [[edge.rule]] tables are read,
// echoed by --print-config as a file that reads back; a bad one is refused
// by --print-config (as by serve and a reload, which parse the same way)
// with a message naming the key.
func TestEdgeRulesConfig(t *testing.T) {
	dir := t.TempDir()
	conf := filepath.Join(dir, "strata.toml")
	good := "[[upstream]]\nprefix = \"/\"\nurl = \"http://127.0.0.1:9/\"\n" +
		"[edge]\ndefault_ttl = \"1m\"\nkeep_on_error = \"168h\"\n" +
		"[[edge.rule]]\nmatch = \"*.mpd\"\nmax_ttl = \"2s\"\n" +
		"[[edge.rule]]\nprefix = \"/vod/\"\nmatch = \"*.m4s\"\nimmutable = true\nquery = \"none\"\n"
	os.WriteFile(conf, []byte(good), 0o644)
	var out, errb bytes.Buffer
	if code := run([]string{"serve", "--config", conf, "--data", dir, "--print-config"}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	s := out.String()
	for _, want := range []string{`default_ttl = "1m"`, `keep_on_error = "168h"`, "[[edge.rule]]", `match = "*.mpd"`, `max_ttl = "2s"`,
		`prefix = "/vod/"`, "immutable = true", `query = "none"`} {
		if !strings.Contains(s, want) {
			t.Errorf("no %q in\n%s", want, s)
		}
	}
	var back app.Config
	if _, err := toml.Decode(s, &back); err != nil || len(back.Edge.Rules) != 2 || back.Edge.Rules[0].MaxTTL == nil ||
		back.Edge.Rules[0].MaxTTL.Duration != 2*time.Second || back.Edge.Rules[0].Immutable != nil || back.Edge.Rules[1].Query == nil {
		t.Errorf("the output reads back as %+v: %v", back.Edge.Rules, err)
	}

	for _, c := range []struct{ file, want string }{
		{"[edge]\ndefault_ttl = \"-5s\"\n", "edge.default_ttl: negative duration"},
		{"[[edge.rule]]\nmatch = \"*.mpd\"\ngrace = \"-1s\"\n", `edge.rule[1] (match "*.mpd"): grace: negative duration`},
		{"[[edge.rule]]\nmatch = \"[*.mpd\"\n", "bad glob"},
		{"[[edge.rule]]\nmatch = \"*.mpd\"\n[[edge.rule]]\nmatch = \"*.mpd\"\n", "overlaps rule 1"},
		{"[[edge.rule]]\nmatch = \"*.mpd\"\ncolour = \"blue\"\n", "unknown keys [edge.rule.colour]"},
		{"[[upstream]]\nprefix = \"/\"\nurl = \"ftp://origin.example/\"\n", `upstream URL "ftp://origin.example/" is not an absolute http(s) URL`},
		{"[edge]\nquery = \"some\"\n", "edge.query"},
		{"[edge]\nslice_size = \"1\"\n", "edge.slice_size"},
	} {
		os.WriteFile(conf, []byte(c.file), 0o644)
		out.Reset()
		errb.Reset()
		if code := run([]string{"serve", "--config", conf, "--data", dir, "--print-config"}, &out, &errb); code == 0 || !strings.Contains(errb.String(), c.want) {
			t.Errorf("%q: exit %d, %q; want an error with %q", c.file, code, errb.String(), c.want)
		}
	}
}

// --print-config refuses a listen address serve could not listen on, as
// serve and a reload do (one check, app.Config.Resolve).
func TestPrintConfigRefusesBadListen(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--listen", "8080"}, `--listen "8080"`},
		{[]string{"--listen", ":99999"}, `--listen ":99999"`},
		{[]string{"--debug-addr", "localhost"}, `--debug-addr "localhost"`},
	} {
		var out, errb bytes.Buffer
		args := append([]string{"serve", "--data", dir, "--print-config"}, c.args...)
		if code := run(args, &out, &errb); code != 2 || !strings.Contains(errb.String(), c.want) {
			t.Errorf("%v: exit %d, %q; want a usage error naming %s", c.args, code, errb.String(), c.want)
		}
		errb.Reset()
		if code := run(append([]string{"serve", "--data", dir}, c.args...), &out, &errb); code != 2 || !strings.Contains(errb.String(), c.want) {
			t.Errorf("serve %v: exit %d, %q; want the same usage error", c.args, code, errb.String())
		}
	}
	var out, errb bytes.Buffer
	if code := run([]string{"serve", "--data", dir, "--print-config", "--listen", "[::1]:http", "--debug-addr", "127.0.0.1:6060"}, &out, &errb); code != 0 {
		t.Errorf("good addresses refused: %d %s", code, errb.String())
	}
}

// strata serve -h lists the flags by the config file's tables, each under
// its table's heading (the top-level keys first), with defaults written
// as the file writes them ("4MiB", not "4 MiB"), every flag once and the
// renamed ones not at all.
func TestServeHelpGroupsByTable(t *testing.T) {
	var out, errb bytes.Buffer
	run([]string{"serve", "-h"}, &out, &errb)
	help := errb.String()
	headings := []string{"\nCommand:\n", "\nTop-level keys:\n", "\n[images] (--images-*):\n", "\n[files] (--files-*):\n", "\n[timeouts] (--timeouts-*):\n"}
	last := -1
	for _, h := range headings {
		i := strings.Index(help, h)
		if i < last {
			t.Fatalf("heading %q missing or out of order:\n%s", h, help)
		}
		last = i
	}
	section := func(flagName string) string {
		i := strings.Index(help, "\n  --"+flagName+" ")
		if i < 0 {
			i = strings.Index(help, "\n  --"+flagName+"\n")
		}
		if i < 0 {
			t.Fatalf("--%s not listed:\n%s", flagName, help)
		}
		return help[strings.LastIndex(help[:i], "\n\n")+2 : i] // from its heading on
	}
	for name, heading := range map[string]string{"images-max-age": "[images]", "files-flash-size": "[files]",
		"timeouts-body": "[timeouts]", "listen": "Top-level keys", "print-config": "Command"} {
		if s := section(name); !strings.HasPrefix(s, heading) {
			t.Errorf("--%s is under %q, want %s", name, s[:min(len(s), 30)], heading)
		}
	}
	if !strings.Contains(help, `(default "4MiB")`) || regexp.MustCompile(`default [0-9.]+ [KMG]iB`).MatchString(help) {
		t.Errorf("sizes not written as the config file writes them:\n%s", help)
	}
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	cfg := app.DefaultConfig()
	serveFlags(fs, &cfg)
	fs.VisitAll(func(f *flag.Flag) {
		if n := strings.Count(help, "\n  --"+f.Name+" ") + strings.Count(help, "\n  --"+f.Name+"\n"); n != 1 {
			t.Errorf("--%s listed %d times", f.Name, n)
		}
	})
	if strings.Contains(help, "\n  --flash-bandwidth") {
		t.Error("a renamed flag is listed")
	}
}
