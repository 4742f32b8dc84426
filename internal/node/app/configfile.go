package app

import (
	"bytes"
	"encoding"
	"flag"
	"fmt"
	"io"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/BurntSushi/toml"

	"github.com/strata-media/strata/internal/bytesize"
)

// The configuration file and the flags are one set of settings: every key
// of Config is named like its flag. A top-level key is its flag with '_'
// for '-' (flash_size is --flash-size); a key of table [T] is the flag
// --T-key ([images] max_age is --images-max-age), but for [T] disabled,
// which is --no-T. This file is the codec of that file: reading it
// (DecodeConfigFile), writing it with the flags' usage as comments
// (WriteConfigFile), and the mapping of keys to flags (ConfigKeys,
// ConfigKey.FlagName). The flags themselves are strata serve's
// (cmd/strata); SIGHUP reloads read the file again through this codec.

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

// A ConfigKey is one key of the configuration file.
type ConfigKey struct {
	Table string // "" for a top-level key
	Name  string
	// Value is the key's field in the configuration it was listed from:
	// setting it sets the key.
	Value reflect.Value
}

// path is the key's dotted name: "flash_size", "images.max_age".
func (k ConfigKey) Path() string {
	if k.Table == "" {
		return k.Name
	}
	return k.Table + "." + k.Name
}

// flagName is the name of the key's flag.
func (k ConfigKey) FlagName() string {
	switch {
	case k.Table == "":
		return strings.ReplaceAll(k.Name, "_", "-")
	case k.Name == "disabled":
		return "no-" + strings.NewReplacer(".", "-", "_", "-").Replace(k.Table)
	}
	return strings.NewReplacer(".", "-", "_", "-").Replace(k.Table + "-" + k.Name)
}

// TOML is the key's value as the configuration file writes it: sizes
// as "400MB" or "4MiB" (the largest unit that divides them), durations
// as "1m30s", strings quoted.
func (k ConfigKey) TOML() string { return tomlValue(k.Value) }

// A configTable is one table of the configuration file: its scalar keys,
// its arrays of tables and its subtables, in field order.
type configTable struct {
	name   string // dotted; "" for the top level
	keys   []ConfigKey
	arrays []ConfigKey
	tables []configTable
}

// tableOf splits the struct v, the table name, into its keys, arrays of
// tables and subtables, recursively.
func tableOf(v reflect.Value, name string) configTable {
	t := configTable{name: name}
	for _, k := range structKeys(v, name) {
		switch {
		case isScalar(k.Value):
			t.keys = append(t.keys, k)
		case k.Value.Kind() == reflect.Slice && k.Value.Type().Elem().Kind() == reflect.Struct:
			t.arrays = append(t.arrays, k)
		case k.Value.Kind() == reflect.Struct:
			t.tables = append(t.tables, tableOf(k.Value, k.Path()))
		}
	}
	return t
}

// ConfigKeys lists the scalar keys of *v, a Config or any struct with
// toml tags: its top-level keys and its tables', recursively.
func ConfigKeys(v any) []ConfigKey {
	return tableOf(reflect.ValueOf(v).Elem(), "").allKeys()
}

// allKeys lists the scalar keys of t and its subtables.
func (t configTable) allKeys() []ConfigKey {
	out := slices.Clone(t.keys)
	for _, sub := range t.tables {
		out = append(out, sub.allKeys()...)
	}
	return out
}

// structKeys lists the toml-tagged fields of the struct v.
func structKeys(v reflect.Value, table string) []ConfigKey {
	var out []ConfigKey
	for i := range v.NumField() {
		f := v.Type().Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("toml"), ",")
		if name == "" && f.Anonymous && f.Type.Kind() == reflect.Struct && f.IsExported() {
			out = append(out, structKeys(v.Field(i), table)...) // its keys are the table's, as TOML decodes them
			continue
		}
		if name == "" || name == "-" || !f.IsExported() {
			continue
		}
		out = append(out, ConfigKey{Table: table, Name: name, Value: v.Field(i)})
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
	case Duration:
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
func exactSize(n int64) string { return bytesize.Exact(n) }

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

// arrayComments are the comments of the arrays of tables that have no
// flag.
var arrayComments = map[string]string{
	"edge.rule": "cache rules (no flag: set them in this file): the first whose prefix and match (a glob on the last path segment, or on the whole path when it holds a '/') fit a request sets any [edge] key but slice_size, fill_memory and max_relays for it; a key left out keeps the [edge] value",
}

// keyComments are the comments of keys that have no flag, by the flag
// name they would have.
var keyComments = map[string]string{
	"files-ram":       "the whole-file tier's RAM: interval caching's buffers, and the pool of pieces of files in an S3 origin's bucket",
	"files-mechanism": `what serves whole-file streams besides the disk: lfu (flash copies of popular files), interval (interval caching in RAM), both, or auto: both, but lfu on an edge node (upstreams and no origin), whose memory then goes to its RAM tier`,
	"files-stat-ttl":  "how long the version of a file in the bucket is trusted before it is asked again",
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
		if c, ok := keyComments[flagName]; ok {
			return c + " (no flag: set it in this file)"
		}
		return "(no flag: set it in this file)"
	}
	return strings.Join(strings.Fields(f.Usage), " ") + " (--" + flagName + ")"
}

func (cw *configWriter) key(k ConfigKey) {
	fmt.Fprintf(cw.w, "# %s\n%s = %s\n", cw.comment(k.FlagName()), k.Name, cw.value(k))
}

// value is a key's value in TOML, redacted if it is a secret and cw
// redacts.
func (cw *configWriter) value(k ConfigKey) string {
	if cw.redact && secretKey.MatchString(k.Name) && !k.Value.IsZero() {
		return redacted(k.Value)
	}
	return tomlValue(k.Value)
}

// WriteConfigFile writes *v, a Config or any struct with toml tags, as a
// TOML configuration file after header: every key with its flag's usage
// (in flags) as its comment; with redact, secrets are replaced by
// "REDACTED".
func WriteConfigFile(w io.Writer, v any, flags *flag.FlagSet, header string, redact bool) {
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
// commented out, when it is empty: the element's Example method, if it
// has one, fills it. An element type with a KeyDoc method has its keys
// commented with it in the example.
func (cw *configWriter) array(k ConfigKey) {
	c, ok := arrayComments[k.Path()]
	if !ok {
		c = cw.comment(k.FlagName())
	}
	fmt.Fprintf(cw.w, "\n# %s\n", c)
	n, prefix := k.Value.Len(), ""
	elems := make([]reflect.Value, n)
	for i := range n {
		elems[i] = k.Value.Index(i)
	}
	if n == 0 {
		e := reflect.New(k.Value.Type().Elem())
		if ex, ok := e.Interface().(interface{ Example() }); ok {
			ex.Example()
		}
		elems, prefix = []reflect.Value{e.Elem()}, "# "
	}
	for _, e := range elems {
		doc, _ := e.Interface().(interface{ KeyDoc(string) string })
		fmt.Fprintf(cw.w, "%s[[%s]]\n", prefix, k.Path())
		for _, f := range structKeys(e, k.Path()) {
			// An optional key (a pointer, or a list that may be
			// left out) is written when set, or in the example.
			switch v := f.Value; {
			case v.Kind() == reflect.Pointer && v.IsNil() && n == 0:
				f.Value = reflect.New(v.Type().Elem()).Elem()
			case v.Kind() == reflect.Pointer && v.IsNil(), v.Kind() == reflect.Slice && v.IsNil() && n > 0:
				continue
			case v.Kind() == reflect.Pointer:
				f.Value = v.Elem()
			}
			if !isScalar(f.Value) {
				continue
			}
			if d := ""; doc != nil && n == 0 {
				if d = doc.KeyDoc(f.Name); d != "" {
					fmt.Fprintf(cw.w, "%s# %s\n", prefix, d)
				}
			}
			fmt.Fprintf(cw.w, "%s%s = %s\n", prefix, f.Name, cw.value(f))
		}
	}
}

// DecodeConfigFile reads the TOML file p into cfg. Keys renamed to match
// their flags are read under their old names too, with a warning on
// stderr; an unknown key is an error. Its errors are ErrConfig.
func DecodeConfigFile(p string, cfg *Config, stderr io.Writer) error {
	var raw map[string]any
	if _, err := toml.DecodeFile(p, &raw); err != nil {
		return configErrorf("config %s: %v", p, err)
	}
	renamed := false
	for old, cur := range deprecatedKeys {
		v, ok := lookupKey(raw, old)
		if !ok {
			continue
		}
		if _, dup := lookupKey(raw, cur); dup {
			return configErrorf("config %s: both %s and its deprecated name %s", p, cur, old)
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
		return configErrorf("config %s: %v", p, err)
	}
	if und := md.Undecoded(); len(und) > 0 {
		return configErrorf("config %s: unknown keys %v", p, und)
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

// configError is an error of the configuration file: ErrConfig, its text
// without ErrConfig's.
type configError struct{ msg string }

func (e configError) Error() string        { return e.msg }
func (e configError) Is(target error) bool { return target == ErrConfig }

func configErrorf(format string, a ...any) error {
	return configError{fmt.Sprintf(format, a...)}
}

// DeprecatedFlag is the current name of a renamed flag, "" if name is not
// the old name of one.
func DeprecatedFlag(name string) string { return deprecatedFlags[name] }

// AddDeprecatedFlags registers on fs the old names of its renamed flags,
// sharing the new flags' values.
func AddDeprecatedFlags(fs *flag.FlagSet) {
	for old, cur := range deprecatedFlags {
		if f := fs.Lookup(cur); f != nil {
			fs.Var(f.Value, old, "deprecated: use --"+cur)
		}
	}
}

// WarnDeprecatedFlags says which deprecated flags were used.
func WarnDeprecatedFlags(fs *flag.FlagSet, stderr io.Writer) {
	fs.Visit(func(f *flag.Flag) {
		if cur, ok := deprecatedFlags[f.Name]; ok {
			fmt.Fprintf(stderr, "strata serve: --%s is deprecated; use --%s\n", f.Name, cur)
		}
	})
}
