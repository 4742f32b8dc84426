package main

//go:generate sh -c "go run . serve --print-config --defaults > ../../packaging/strata.toml"

import (
	"bytes"
	"encoding"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/BurntSushi/toml"

	"github.com/strata-media/strata/internal/bytesize"
	"github.com/strata-media/strata/internal/node/app"
)

// The configuration file and the flags are one set of settings: every key
// of app.Config is named like its flag. A top-level key is its flag with
// '_' for '-' (flash_size is --flash-size); a key of table [T] is the flag
// --T-key ([images] max_age is --images-max-age), but for [T] disabled,
// which is --no-T. The example file packaging/strata.toml is written from
// app.DefaultConfig and the flags' usage by `strata serve --print-config
// --defaults`, and TestExampleConfigIsGenerated keeps it so: a key added to
// app.Config (with its flag) appears in it when it is regenerated.

// ExampleConfigPath is the example configuration file, from the
// repository's root.
const ExampleConfigPath = "packaging/strata.toml"

// deprecatedKeys are the configuration keys renamed to match their flags:
// the old name is still read, with a warning.
var deprecatedKeys = map[string]string{
	"files.default_bitrate": "files.bitrate",
}

// deprecatedFlags are the flags renamed to match their keys: the old name
// still works, with a warning.
var deprecatedFlags = map[string]string{
	"flash-bandwidth": "files-flash-bandwidth",
	"disk-bandwidth":  "files-disk-bandwidth",
}

// nonKeyFlags are strata serve's flags that are not settings.
var nonKeyFlags = map[string]bool{"config": true, "print-config": true, "defaults": true}

// A configKey is one key of the configuration file.
type configKey struct {
	table string // "" for a top-level key
	name  string
	v     reflect.Value
}

// path is the key's dotted name: "flash_size", "images.max_age".
func (k configKey) path() string {
	if k.table == "" {
		return k.name
	}
	return k.table + "." + k.name
}

// flagName is the name of the key's flag.
func (k configKey) flagName() string {
	switch {
	case k.table == "":
		return strings.ReplaceAll(k.name, "_", "-")
	case k.name == "disabled":
		return "no-" + strings.NewReplacer(".", "-", "_", "-").Replace(k.table)
	}
	return strings.NewReplacer(".", "-", "_", "-").Replace(k.table + "-" + k.name)
}

// A configTable is one table of the configuration file: its scalar keys,
// its arrays of tables and its subtables, in field order.
type configTable struct {
	name   string // dotted; "" for the top level
	keys   []configKey
	arrays []configKey
	tables []configTable
}

// tableOf splits the struct v, the table name, into its keys, arrays of
// tables and subtables, recursively.
func tableOf(v reflect.Value, name string) configTable {
	t := configTable{name: name}
	for _, k := range structKeys(v, name) {
		switch {
		case isScalar(k.v):
			t.keys = append(t.keys, k)
		case k.v.Kind() == reflect.Slice && k.v.Type().Elem().Kind() == reflect.Struct:
			t.arrays = append(t.arrays, k)
		case k.v.Kind() == reflect.Struct:
			t.tables = append(t.tables, tableOf(k.v, k.path()))
		}
	}
	return t
}

// allKeys lists the scalar keys of t and its subtables.
func (t configTable) allKeys() []configKey {
	out := slices.Clone(t.keys)
	for _, sub := range t.tables {
		out = append(out, sub.allKeys()...)
	}
	return out
}

// structKeys lists the toml-tagged fields of the struct v.
func structKeys(v reflect.Value, table string) []configKey {
	var out []configKey
	for i := range v.NumField() {
		f := v.Type().Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("toml"), ",")
		if name == "" || name == "-" || !f.IsExported() {
			continue
		}
		out = append(out, configKey{table: table, name: name, v: v.Field(i)})
	}
	return out
}

// isScalar reports whether v is written as one TOML value: a string,
// number, boolean, text value (sizes, durations) or list of strings.
func isScalar(v reflect.Value) bool {
	if v.CanAddr() && v.Addr().Type().Implements(reflect.TypeFor[encoding.TextUnmarshaler]()) {
		return true
	}
	switch v.Kind() {
	case reflect.String, reflect.Bool, reflect.Int, reflect.Int64, reflect.Int32, reflect.Uint, reflect.Uint64, reflect.Float64:
		return true
	case reflect.Slice, reflect.Map:
		if v.Kind() == reflect.Map && v.Type().Key().Kind() != reflect.String {
			return false
		}
		return isScalar(reflect.New(v.Type().Elem()).Elem())
	}
	return false
}

// secretKey matches the keys whose values --print-config hides (not
// tls_key: a path).
var secretKey = regexp.MustCompile(`(^|_)(token|secret|secrets|password)$`)

// tomlValue formats a scalar as TOML.
func tomlValue(v reflect.Value) string {
	switch x := v.Interface().(type) {
	case bytesize.Value:
		return strconv.Quote(exactSize(int64(x)))
	case app.Duration:
		return strconv.Quote(shortDuration(x.Duration))
	}
	switch v.Kind() {
	case reflect.String:
		return tomlString(v.String())
	case reflect.Bool:
		return strconv.FormatBool(v.Bool())
	case reflect.Int, reflect.Int64, reflect.Int32:
		return strconv.FormatInt(v.Int(), 10)
	case reflect.Uint, reflect.Uint64:
		return strconv.FormatUint(v.Uint(), 10)
	case reflect.Float64:
		s := strconv.FormatFloat(v.Float(), 'f', -1, 64)
		if !strings.ContainsAny(s, ".eEn") {
			s += ".0"
		}
		return s
	case reflect.Slice:
		items := make([]string, v.Len())
		for i := range items {
			items[i] = tomlValue(v.Index(i))
		}
		return "[" + strings.Join(items, ", ") + "]"
	case reflect.Map:
		keys := v.MapKeys()
		slices.SortFunc(keys, func(a, b reflect.Value) int { return strings.Compare(a.String(), b.String()) })
		items := make([]string, len(keys))
		for i, k := range keys {
			e := reflect.New(v.Type().Elem()).Elem()
			e.Set(v.MapIndex(k))
			items[i] = tomlString(k.String()) + " = " + tomlValue(e)
		}
		return "{" + strings.Join(items, ", ") + "}"
	}
	if m, ok := v.Interface().(encoding.TextMarshaler); ok {
		b, _ := m.MarshalText()
		return tomlString(string(b))
	}
	return tomlString(fmt.Sprint(v.Interface()))
}

// redacted is a secret's TOML value with every string hidden, its shape
// kept: a map of key ids to keys shows the ids.
func redacted(v reflect.Value) string {
	hide := `"REDACTED"`
	switch {
	case v.Kind() == reflect.Map && v.Type().Elem().Kind() == reflect.String:
		keys := v.MapKeys()
		slices.SortFunc(keys, func(a, b reflect.Value) int { return strings.Compare(a.String(), b.String()) })
		items := make([]string, len(keys))
		for i, k := range keys {
			items[i] = tomlString(k.String()) + " = " + hide
		}
		return "{" + strings.Join(items, ", ") + "}"
	case v.Kind() == reflect.Slice && v.Type().Elem().Kind() == reflect.String:
		return "[" + strings.TrimSuffix(strings.Repeat(hide+", ", v.Len()), ", ") + "]"
	}
	return hide
}

// exactSize writes a size with the largest unit that divides it, so that
// it reads back as the same number of bytes: "4MiB", "400MB", "1000".
func exactSize(n int64) string {
	for _, u := range []struct {
		s string
		m int64
	}{{"TiB", 1 << 40}, {"GiB", 1 << 30}, {"MiB", 1 << 20}, {"TB", 1e12}, {"GB", 1e9}, {"MB", 1e6}, {"KiB", 1 << 10}, {"KB", 1e3}} {
		if n != 0 && n%u.m == 0 {
			return strconv.FormatInt(n/u.m, 10) + u.s
		}
	}
	return strconv.FormatInt(n, 10)
}

// shortDuration is d without trailing zero units: "1h", "2m", "1m30s".
func shortDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

// tomlString is a TOML basic string.
func tomlString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\u%04X`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// configWriter writes a configuration file with the flags' usage as the
// keys' comments.
type configWriter struct {
	w      io.Writer
	flags  *flag.FlagSet
	redact bool
}

// comment is the one-line comment of a key: its flag's usage.
func (cw *configWriter) comment(flagName string) string {
	f := cw.flags.Lookup(flagName)
	if f == nil {
		return "(no flag: set it in this file)"
	}
	return strings.Join(strings.Fields(f.Usage), " ") + " (--" + flagName + ")"
}

func (cw *configWriter) key(k configKey) {
	fmt.Fprintf(cw.w, "# %s\n%s = %s\n", cw.comment(k.flagName()), k.name, cw.value(k))
}

// value is a key's value in TOML, redacted if it is a secret and cw
// redacts.
func (cw *configWriter) value(k configKey) string {
	if cw.redact && secretKey.MatchString(k.name) && !k.v.IsZero() {
		return redacted(k.v)
	}
	return tomlValue(k.v)
}

// writeConfig writes cfg as a TOML configuration file, every key with a
// comment; with redact, secrets are replaced by "REDACTED".
func writeConfig(w io.Writer, cfg app.Config, flags *flag.FlagSet, header string, redact bool) {
	writeStruct(w, &cfg, flags, header, redact)
}

// writeStruct is writeConfig of any struct with toml tags, *v.
func writeStruct(w io.Writer, v any, flags *flag.FlagSet, header string, redact bool) {
	cw := &configWriter{w: w, flags: flags, redact: redact}
	fmt.Fprint(w, header)
	cw.table(tableOf(reflect.ValueOf(v).Elem(), ""))
}

// table writes a table's keys, its arrays of tables, then its subtables.
func (cw *configWriter) table(t configTable) {
	if t.name != "" {
		flagPrefix := strings.NewReplacer(".", "-", "_", "-").Replace(t.name)
		fmt.Fprintf(cw.w, "\n# The [%s] table: its keys are the --%s-* flags.\n[%s]\n", t.name, flagPrefix, t.name)
	}
	for i, k := range t.keys {
		if i > 0 || t.name == "" {
			fmt.Fprintln(cw.w)
		}
		cw.key(k)
	}
	for _, k := range t.arrays {
		cw.array(k)
	}
	for _, sub := range t.tables {
		cw.table(sub)
	}
}

// array writes an array of tables ([[upstream]]), or an example of one,
// commented out, when it is empty.
func (cw *configWriter) array(k configKey) {
	fmt.Fprintf(cw.w, "\n# %s\n", cw.comment(k.flagName()))
	n, prefix := k.v.Len(), ""
	elems := make([]reflect.Value, n)
	for i := range n {
		elems[i] = k.v.Index(i)
	}
	if n == 0 {
		elems, prefix = []reflect.Value{reflect.New(k.v.Type().Elem()).Elem()}, "# "
	}
	for _, e := range elems {
		fmt.Fprintf(cw.w, "%s[[%s]]\n", prefix, k.path())
		for _, f := range structKeys(e, k.path()) {
			if isScalar(f.v) {
				fmt.Fprintf(cw.w, "%s%s = %s\n", prefix, f.name, cw.value(f))
			}
		}
	}
}

// exampleHeader opens the example configuration file.
const exampleHeader = `# strata serve's configuration file (strata serve --config FILE): every key,
# set to its default, with its flag's usage. Flags override the file. A key
# is named like its flag: flash_size is --flash-size, [images] max_age is
# --images-max-age, [images] disabled is --no-images.
#
# Generated by 'strata serve --print-config --defaults' (go generate
# ./cmd/strata); TestExampleConfigIsGenerated checks it is up to date.
# 'strata serve --print-config [flags]' prints the effective configuration.
`

// effectiveHeader opens --print-config's output.
const effectiveHeader = `# strata serve's effective configuration: defaults, the config file, then
# flags; derived paths filled in, secrets redacted.
`

// printConfig prints the example configuration (defaults) or the
// effective one.
func printConfig(w io.Writer, cfg app.Config, defaults bool) {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	serveFlags(fs, &cfg)
	if defaults {
		writeConfig(w, app.DefaultConfig(), fs, exampleHeader, false)
		return
	}
	writeConfig(w, cfg, fs, effectiveHeader, true)
}

// decodeConfigFile reads the TOML file p into cfg. Keys renamed to match
// their flags are read under their old names too, with a warning; an
// unknown key is an error.
func decodeConfigFile(p string, cfg *app.Config, stderr io.Writer) error {
	var raw map[string]any
	if _, err := toml.DecodeFile(p, &raw); err != nil {
		return fmt.Errorf("%w: config %s: %v", errUsage, p, err)
	}
	renamed := false
	for old, cur := range deprecatedKeys {
		v, ok := lookupKey(raw, old)
		if !ok {
			continue
		}
		if _, dup := lookupKey(raw, cur); dup {
			return fmt.Errorf("%w: config %s: both %s and its deprecated name %s", errUsage, p, cur, old)
		}
		fmt.Fprintf(stderr, "strata serve: config %s: %s is deprecated; it is now %s\n", p, old, cur)
		deleteKey(raw, old)
		setKey(raw, cur, v)
		renamed = true
	}
	var md toml.MetaData
	var err error
	if renamed {
		var buf bytes.Buffer
		if err := toml.NewEncoder(&buf).Encode(raw); err != nil {
			return fmt.Errorf("config %s: %w", p, err)
		}
		md, err = toml.Decode(buf.String(), cfg)
	} else {
		md, err = toml.DecodeFile(p, cfg)
	}
	if err != nil {
		return fmt.Errorf("%w: config %s: %v", errUsage, p, err)
	}
	if und := md.Undecoded(); len(und) > 0 {
		return fmt.Errorf("%w: config %s: unknown keys %v", errUsage, p, und)
	}
	return nil
}

// lookupKey finds a dotted key ("files.bitrate") in a decoded file.
func lookupKey(raw map[string]any, key string) (any, bool) {
	table, name, ok := strings.Cut(key, ".")
	if !ok {
		v, ok := raw[key]
		return v, ok
	}
	t, ok := raw[table].(map[string]any)
	if !ok {
		return nil, false
	}
	v, ok := t[name]
	return v, ok
}

func deleteKey(raw map[string]any, key string) {
	if table, name, ok := strings.Cut(key, "."); ok {
		if t, ok := raw[table].(map[string]any); ok {
			delete(t, name)
		}
		return
	}
	delete(raw, key)
}

func setKey(raw map[string]any, key string, v any) {
	table, name, ok := strings.Cut(key, ".")
	if !ok {
		raw[key] = v
		return
	}
	t, ok := raw[table].(map[string]any)
	if !ok {
		t = map[string]any{}
		raw[table] = t
	}
	t[name] = v
}

// addDeprecatedFlags registers the old names of renamed flags, sharing
// the new flags' values.
func addDeprecatedFlags(fs *flag.FlagSet) {
	for old, cur := range deprecatedFlags {
		if f := fs.Lookup(cur); f != nil {
			fs.Var(f.Value, old, "deprecated: use --"+cur)
		}
	}
}

// warnDeprecatedFlags says which deprecated flags were used.
func warnDeprecatedFlags(fs *flag.FlagSet, stderr io.Writer) {
	fs.Visit(func(f *flag.Flag) {
		if cur, ok := deprecatedFlags[f.Name]; ok {
			fmt.Fprintf(stderr, "strata serve: --%s is deprecated; use --%s\n", f.Name, cur)
		}
	})
}

// printRequest is what --print-config asked for.
type printRequest struct{ print, defaults bool }

// parseServeArgs reads strata serve's configuration: defaults, then a
// TOML config file (--config), then flags; and whether to print it.
func parseServeArgs(args []string, stderr io.Writer) (app.Config, printRequest, error) {
	var pr printRequest
	cfg := app.DefaultConfig()
	if p := configPath(args); p != "" {
		if err := decodeConfigFile(p, &cfg, stderr); err != nil {
			return cfg, pr, err
		}
	}
	fs := newFlags("serve", "[--config FILE] [flags]", stderr)
	fs.String("config", "", "TOML config file; flags override it (packaging/strata.toml lists every key)")
	fs.BoolVar(&pr.print, "print-config", false, "print the effective configuration (defaults, config file, flags) as TOML, secrets redacted, and exit")
	fs.BoolVar(&pr.defaults, "defaults", false, "with --print-config: print the example config file, every key at its default")
	serveFlags(fs, &cfg)
	addDeprecatedFlags(fs)
	if err := parseFlags(fs, args); err != nil {
		return cfg, pr, err
	}
	warnDeprecatedFlags(fs, stderr)
	if pr.print && pr.defaults {
		return cfg, pr, nil
	}
	return cfg, pr, usageError(cfg.Resolve())
}

// newFormatLeveledLogger is newLeveledLogger in format text or json.
func newFormatLeveledLogger(w io.Writer, level, format string) (*slog.Logger, *slog.LevelVar) {
	lg, lv := newLeveledLogger(w, level)
	if format == "json" {
		lg = slog.New(slog.NewJSONHandler(w, &slog.HandlerOptions{Level: lv}))
	}
	return lg, lv
}

// timeoutsFlags registers the [timeouts] table's flags.
func timeoutsFlags(fs *flag.FlagSet, t *app.TimeoutsConfig) {
	fs.DurationVar(&t.ReadHeader.Duration, "timeouts-read-header", t.ReadHeader.Duration, "how long a request's headers may take to arrive")
	fs.DurationVar(&t.Body.Duration, "timeouts-body", t.Body.Duration, "how long a request body may go without a byte arriving")
	fs.DurationVar(&t.Idle.Duration, "timeouts-idle", t.Idle.Duration, "how long a kept-alive connection may wait for its next request")
	fs.DurationVar(&t.Write.Duration, "timeouts-write", t.Write.Duration, "how long a response may take (whole-file streams move it on as the client reads)")
}
