package app

import (
	"bytes"
	"errors"
	"flag"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/BurntSushi/toml"

	"github.com/strata-media/strata/internal/node/files"
)

// examplePath is the example config file (written by strata serve
// --print-config --defaults), from this package's directory.
var examplePath = filepath.Join("..", "..", "..", "packaging", "strata.toml")

// TestExampleConfigReadsBackAsDefaults: loading the example file over a
// zero configuration gives every default, so that it holds every key
// with its real default.
func TestExampleConfigReadsBackAsDefaults(t *testing.T) {
	var cfg Config
	if err := DecodeConfigFile(examplePath, &cfg, io.Discard); err != nil {
		t.Fatal(err)
	}
	def := DefaultConfig()
	nilEmpty(reflect.ValueOf(&cfg).Elem())
	nilEmpty(reflect.ValueOf(&def).Elem())
	if !reflect.DeepEqual(cfg, def) {
		t.Fatalf("the example reads back as\n%+v\nnot the defaults\n%+v", cfg, def)
	}
}

// nilEmpty makes the empty slices and maps of v nil: TOML's [] reads
// back as an empty list where a default may be nil, the same setting.
func nilEmpty(v reflect.Value) {
	switch v.Kind() {
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				nilEmpty(v.Field(i))
			}
		}
	case reflect.Slice, reflect.Map:
		if v.Len() == 0 {
			v.Set(reflect.Zero(v.Type()))
		} else if v.Kind() == reflect.Slice {
			for i := range v.Len() {
				nilEmpty(v.Index(i))
			}
		}
	}
}

// TestConfigFileErrors: an unknown key, a key under both its names and a
// file that is not TOML are ErrConfig, each saying what is wrong; a
// deprecated key is read under its new name with a warning.
func TestConfigFileErrors(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct{ file, want string }{
		{"rma = \"8MiB\"\n", "unknown keys [rma]"},
		{"[files]\ndefault_bitrate = \"100KB\"\nbitrate = \"1KB\"\n", "both files.bitrate and its deprecated name files.default_bitrate"},
		{"ram = \n", "config "},
	} {
		p := filepath.Join(dir, "c.toml")
		os.WriteFile(p, []byte(c.file), 0o644)
		cfg := DefaultConfig()
		err := DecodeConfigFile(p, &cfg, io.Discard)
		if !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), ErrConfig.Error()) {
			t.Errorf("%q: %v, want ErrConfig saying %q (and not ErrConfig's text)", c.file, err, c.want)
		}
	}
	p := filepath.Join(dir, "old.toml")
	os.WriteFile(p, []byte("[files]\ndefault_bitrate = \"100KB\"\n"), 0o644)
	cfg := DefaultConfig()
	var warn bytes.Buffer
	if err := DecodeConfigFile(p, &cfg, &warn); err != nil || cfg.Files.Bitrate != 100_000 ||
		!strings.Contains(warn.String(), "files.default_bitrate is deprecated; it is now files.bitrate") {
		t.Errorf("deprecated key: %v, bitrate %d, warning %q", err, cfg.Files.Bitrate, warn.String())
	}
}

// futureConfig has the shapes a key added later may take: a table in a
// table, an array of tables in a table, a map, lists of numbers, a secret.
type futureConfig struct {
	Port   int `toml:"port"`
	Signed struct {
		Required []string          `toml:"required"`
		Secrets  map[string]string `toml:"secrets"`
		Window   Duration          `toml:"window"`
		Deep     struct {
			Ratios []float64 `toml:"ratios"`
			On     bool      `toml:"on"`
		} `toml:"deep"`
		Rules []struct {
			Prefix string `toml:"prefix"`
			Max    int64  `toml:"max"`
		} `toml:"rule"`
	} `toml:"signed"`
}

// TestWriterTakesNewShapes: whatever shape a new key has, the written file
// reads back as the same values, comments name the flags where there are
// some, and secrets are redacted on demand.
func TestWriterTakesNewShapes(t *testing.T) {
	var c futureConfig
	c.Port = 8443
	c.Signed.Required = []string{"/private/", `/a"b\`}
	c.Signed.Secrets = map[string]string{"k2": "secret-two", "k1": "secret-one"}
	c.Signed.Window.Duration = 90 * time.Second
	c.Signed.Deep.Ratios = []float64{0.5, 2}
	c.Signed.Deep.On = true
	c.Signed.Rules = append(c.Signed.Rules, struct {
		Prefix string `toml:"prefix"`
		Max    int64  `toml:"max"`
	}{"/x/", 7})
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	fs.Int("port", 0, "the port")
	fs.Bool("signed-deep-on", false, "deep switch")
	var buf bytes.Buffer
	WriteConfigFile(&buf, &c, fs, "", false)
	var back futureConfig
	if _, err := toml.Decode(buf.String(), &back); err != nil {
		t.Fatalf("%v in\n%s", err, buf.String())
	}
	if !reflect.DeepEqual(back, c) {
		t.Fatalf("read back %+v, want %+v, from\n%s", back, c, buf.String())
	}
	for _, want := range []string{"# the port (--port)\nport = 8443", "[signed.deep]", "# deep switch (--signed-deep-on)\non = true",
		"[[signed.rule]]", "# (no flag: set it in this file)\nwindow = \"1m30s\""} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("no %q in\n%s", want, buf.String())
		}
	}
	buf.Reset()
	WriteConfigFile(&buf, &c, fs, "", true)
	if strings.Contains(buf.String(), "secret-") || !strings.Contains(buf.String(), `secrets = {"k1" = "REDACTED", "k2" = "REDACTED"}`) {
		t.Errorf("secrets not redacted:\n%s", buf.String())
	}
	if _, err := toml.Decode(buf.String(), &back); err != nil {
		t.Errorf("the redacted file does not read back: %v", err)
	}
}

// TestFilesMechanism: [files] mechanism takes lfu, interval, both or auto,
// and anything else is ErrConfig naming the key; auto is both on an
// origin node and lfu on an edge node.
func TestFilesMechanism(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct{ value, want string }{{"interval", ""}, {"LFU", ""}, {"auto", ""}, {"arc", "[files] mechanism"}} {
		p := filepath.Join(dir, "c.toml")
		os.WriteFile(p, []byte("[files]\nmechanism = \""+c.value+"\"\n"), 0o644)
		cfg := DefaultConfig()
		err := DecodeConfigFile(p, &cfg, io.Discard)
		if err == nil {
			cfg.Data = dir
			err = cfg.Resolve()
		}
		if c.want == "" && (err != nil || cfg.Files.Mechanism != c.value) {
			t.Errorf("mechanism %q: %v, read %q", c.value, err, cfg.Files.Mechanism)
		}
		if c.want != "" && (!errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), c.want)) {
			t.Errorf("mechanism %q: %v, want ErrConfig naming %q", c.value, err, c.want)
		}
	}
	cfg := DefaultConfig()
	if m, err := cfg.FilesMechanism(); err != nil || m != files.MechanismBoth {
		t.Errorf("auto on an origin node: %q, %v; want both", m, err)
	}
	cfg.Upstreams = []UpstreamConfig{{Prefix: "/", URL: "http://127.0.0.1:1/"}}
	if m, err := cfg.FilesMechanism(); err != nil || m != files.MechanismLFU {
		t.Errorf("auto on an edge node: %q, %v; want lfu", m, err)
	}
}
