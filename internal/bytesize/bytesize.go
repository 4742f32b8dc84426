// Package bytesize parses and formats byte counts with units, as Strata's
// flags and config files take them ("256MiB", "2G", "4096").
package bytesize

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// ErrSyntax reports a malformed size.
var ErrSyntax = errors.New("bytesize: invalid size")

var units = []struct {
	suffix string
	mult   float64
}{
	{"kib", 1 << 10}, {"mib", 1 << 20}, {"gib", 1 << 30}, {"tib", 1 << 40},
	{"kb", 1e3}, {"mb", 1e6}, {"gb", 1e9}, {"tb", 1e12},
	{"k", 1 << 10}, {"m", 1 << 20}, {"g", 1 << 30}, {"t", 1 << 40},
	{"b", 1},
}

// Parse parses a non-negative size: a number with an optional unit. KiB,
// MiB, GiB, TiB and the bare K, M, G, T are powers of 1024; KB, MB, GB, TB
// are powers of 1000. Case and spaces before the unit do not matter.
func Parse(s string) (int64, error) {
	t := strings.ToLower(strings.TrimSpace(s))
	mult := 1.0
	for _, u := range units {
		if num, ok := strings.CutSuffix(t, u.suffix); ok {
			t, mult = strings.TrimSpace(num), u.mult
			break
		}
	}
	f, err := strconv.ParseFloat(t, 64)
	if err != nil || f < 0 || math.IsNaN(f) || math.IsInf(f, 0) || f*mult > math.MaxInt64/2 {
		return 0, fmt.Errorf("%w: %q", ErrSyntax, s)
	}
	return int64(f * mult), nil
}

// Exact returns n as a config file writes it, with the largest unit that
// divides it, so that it reads back (Parse) as the same number of bytes:
// "4MiB", "400MB", "1000". A rate set as "400MB" prints as 400MB, not as
// Format's 381.5 MiB.
func Exact(n int64) string {
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

// Format returns n with the largest binary unit that keeps it readable,
// e.g. "256 MiB", "1.5 GiB", "512 B".
func Format(n int64) string {
	const unit = 1024
	if n < unit && n > -unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit || m <= -unit; m /= unit {
		div *= unit
		exp++
	}
	s := strconv.FormatFloat(float64(n)/float64(div), 'f', 1, 64)
	return strings.TrimSuffix(s, ".0") + " " + string("KMGTPE"[exp]) + "iB"
}

// Compact is Format without the space, e.g. "256MiB": for names and
// flag values.
func Compact(n int64) string { return strings.Replace(Format(n), " ", "", 1) }

// Value is a size usable as a flag.Value and a TOML/text value.
type Value int64

// String formats the size.
func (v *Value) String() string { return Format(int64(*v)) }

// Set parses s.
func (v *Value) Set(s string) error {
	n, err := Parse(s)
	if err != nil {
		return err
	}
	*v = Value(n)
	return nil
}

// UnmarshalText parses a size from a config file.
func (v *Value) UnmarshalText(b []byte) error { return v.Set(string(b)) }
