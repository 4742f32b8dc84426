package httpcache

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// dump formats directives compactly: name, =value, ! for malformed.
func dump(cc CacheControl) string {
	var parts []string
	for _, d := range cc {
		s := d.Name
		if d.HasValue {
			s += "=" + fmt.Sprintf("%q", d.Value)
		}
		if d.Malformed {
			s += "!"
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, " ")
}

func TestParseCacheControl(t *testing.T) {
	for _, tc := range []struct {
		in   []string
		want string
	}{
		{nil, ""},
		{[]string{""}, ""},
		{[]string{"no-store"}, `no-store`},
		{[]string{"No-StOrE"}, `no-store`},
		{[]string{"max-age=60"}, `max-age="60"`},
		{[]string{`max-age="60"`}, `max-age="60"`},
		{[]string{"max-age = 60"}, `max-age="60"`},
		{[]string{"public,max-age=60 ,  s-maxage=30"}, `public max-age="60" s-maxage="30"`},
		{[]string{",, ,public,,"}, `public`},
		{[]string{"public", "max-age=5"}, `public max-age="5"`},
		{[]string{"max-age=5, max-age=10"}, `max-age="5" max-age="10"`},
		{[]string{`no-cache="Set-Cookie, X-Foo", private`}, `no-cache="Set-Cookie, X-Foo" private`},
		{[]string{`ext="a \"quoted\" \\ value"`}, `ext="a \"quoted\" \\ value"`},
		{[]string{`ext="unterminated, max-age=5`}, `ext="\"unterminated, max-age=5"!`},
		{[]string{`ext="a"junk, public`}, `ext="\"a\"junk"! public`},
		{[]string{"max-age=abc"}, `max-age="abc"`},
		{[]string{"max-age=1 2"}, `max-age="1 2"!`},
		{[]string{"max-age="}, `max-age=""!`},
		{[]string{"bad name=1, public"}, `public`},
		{[]string{`"quoted"=1, public`}, `public`},
		{[]string{`x"y,z"=1, public`}, `public`},
		{[]string{"a/b, no-cache"}, `no-cache`},
		{[]string{"=5, public"}, `public`},
		{[]string{"stale-while-revalidate=30\t,\tstale-if-error=60"}, `stale-while-revalidate="30" stale-if-error="60"`},
		{[]string{"my-extension;x, public"}, `public`},
	} {
		if got := dump(ParseCacheControl(tc.in)); got != tc.want {
			t.Errorf("ParseCacheControl(%q) = %s, want %s", tc.in, got, tc.want)
		}
	}
}

func TestSeconds(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want time.Duration
		arg  Arg
	}{
		{"public", 0, Absent},
		{"max-age=0", 0, Valid},
		{"max-age=3600", time.Hour, Valid},
		{`max-age="3600"`, time.Hour, Valid},
		{"max-age=007", 7 * time.Second, Valid},
		{"max-age", 0, Invalid},
		{"max-age=-1", 0, Invalid},
		{"max-age=1.5", 0, Invalid},
		{"max-age=1e3", 0, Invalid},
		{"max-age=+5", 0, Invalid},
		{"max-age=5, max-age=5", 5 * time.Second, Valid},
		{"max-age=5, max-age=10", 0, Invalid},
		{"max-age=5, max-age=x", 0, Invalid},
		{"max-age=2147483648", maxDelta, Valid},
		{"max-age=99999999999999999999999999", maxDelta, Valid},
	} {
		got, arg := ParseCacheControl([]string{tc.in}).Seconds("max-age")
		if got != tc.want || arg != tc.arg {
			t.Errorf("Seconds(%q) = %v, %v; want %v, %v", tc.in, got, arg, tc.want, tc.arg)
		}
	}
}

func TestQualified(t *testing.T) {
	for _, tc := range []struct {
		in          string
		unqualified bool
		names       string
	}{
		{"no-cache", true, ""},
		{`no-cache="Set-Cookie"`, false, "Set-Cookie"},
		{`no-cache="set-cookie, x-a"`, false, "Set-Cookie X-A"},
		{`no-cache=x-a`, false, "X-A"},
		{`no-cache=""`, true, ""},
		{`no-cache="x-a`, true, ""},
		{`no-cache="x-a", no-cache`, true, "X-A"},
		{`public`, false, ""},
	} {
		cc := ParseCacheControl([]string{tc.in})
		u, names := cc.Unqualified("no-cache"), strings.Join(cc.FieldNames("no-cache"), " ")
		if u != tc.unqualified || names != tc.names {
			t.Errorf("%q: unqualified %v names %q; want %v %q", tc.in, u, names, tc.unqualified, tc.names)
		}
	}
}

// FuzzParseCacheControl checks that any field parses without panicking, that
// names are lower-case tokens, and that String is a faithful serialization:
// parsing it gives the same names and values back, well formed.
func FuzzParseCacheControl(f *testing.F) {
	for _, s := range []string{
		"max-age=60, public", `no-cache="a, b"`, `x="\"", y`, `a="`, "=,=", `"a,b"=c`,
		"max-age=99999999999999999999", "s-maxage=1 2", `ext="a"b, c`, "\x00,\xff",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		cc := ParseCacheControl([]string{s})
		for _, d := range cc {
			if !isToken(d.Name) || strings.ToLower(d.Name) != d.Name {
				t.Fatalf("%q: bad name %q", s, d.Name)
			}
			cc.Seconds(d.Name)
		}
		out := cc.String()
		again := ParseCacheControl([]string{out})
		if len(again) != len(cc) {
			t.Fatalf("%q -> %q: %d directives, then %d", s, out, len(cc), len(again))
		}
		for i, d := range again {
			w := cc[i]
			if d.Name != w.Name || d.HasValue != w.HasValue || d.Value != w.Value || d.Malformed {
				t.Fatalf("%q -> %q: directive %d is %+v, was %+v", s, out, i, d, w)
			}
		}
	})
}
