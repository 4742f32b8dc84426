package httpcache

import (
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestParseHTTPDate(t *testing.T) {
	want := time.Date(1994, 11, 6, 8, 49, 37, 0, time.UTC)
	for _, tc := range []struct {
		in string
		ok bool
	}{
		{"Sun, 06 Nov 1994 08:49:37 GMT", true},  // IMF-fixdate
		{"Sunday, 06-Nov-94 08:49:37 GMT", true}, // rfc850-date
		{"Sun Nov  6 08:49:37 1994", true},       // asctime-date
		{" Sun, 06 Nov 1994 08:49:37 GMT ", true},
		{"0", false},
		{"-1", false},
		{"", false},
		{"Sun, 06 Nov 1994 08:49:37 PST", false},
		{"tomorrow", false},
	} {
		got, ok := ParseHTTPDate(tc.in)
		if ok != tc.ok || (ok && !got.Equal(want)) {
			t.Errorf("ParseHTTPDate(%q) = %v, %v; want ok=%v", tc.in, got, ok, tc.ok)
		}
	}
}

func TestHeaderDate(t *testing.T) {
	h := http.Header{}
	if _, arg := headerDate(h, "Expires"); arg != Absent {
		t.Errorf("absent Expires: %v", arg)
	}
	h.Add("Expires", "Sun, 06 Nov 1994 08:49:37 GMT")
	if _, arg := headerDate(h, "Expires"); arg != Valid {
		t.Errorf("one Expires: %v", arg)
	}
	h.Add("Expires", "Sun, 06 Nov 1994 08:49:37 GMT")
	if _, arg := headerDate(h, "Expires"); arg != Invalid {
		t.Errorf("two Expires lines: %v", arg)
	}
	h.Set("Expires", "0")
	if _, arg := headerDate(h, "Expires"); arg != Invalid {
		t.Errorf("Expires: 0: %v", arg)
	}
}

func TestParseAge(t *testing.T) {
	for _, tc := range []struct {
		in   []string
		want time.Duration
		ok   bool
	}{
		{nil, 0, false},
		{[]string{"0"}, 0, true},
		{[]string{"60"}, time.Minute, true},
		{[]string{" 60 "}, time.Minute, true},
		{[]string{"60, 120"}, time.Minute, true},
		{[]string{"60", "120"}, time.Minute, true},
		{[]string{"-5"}, 0, false},
		{[]string{"1.5"}, 0, false},
		{[]string{"abc"}, 0, false},
		{[]string{"99999999999999"}, maxDelta, true},
	} {
		got, ok := ParseAge(http.Header{"Age": tc.in})
		if got != tc.want || ok != tc.ok {
			t.Errorf("ParseAge(%q) = %v, %v; want %v, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}

func TestParseETag(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want ETag
		ok   bool
	}{
		{`"abc"`, ETag{Opaque: "abc"}, true},
		{`W/"abc"`, ETag{Weak: true, Opaque: "abc"}, true},
		{` "" `, ETag{}, true},
		{`abc`, ETag{}, false},
		{`w/"abc"`, ETag{}, false},
		{`"a"b"`, ETag{}, false},
		{`"abc`, ETag{}, false},
		{`W/`, ETag{}, false},
	} {
		got, ok := ParseETag(tc.in)
		if got != tc.want || ok != tc.ok {
			t.Errorf("ParseETag(%q) = %+v, %v; want %+v, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
	strong, weak := ETag{Opaque: "x"}, ETag{Weak: true, Opaque: "x"}
	if !strong.StrongMatch(strong) || strong.StrongMatch(weak) || !strong.WeakMatch(weak) {
		t.Error("entity tag comparison (RFC 9110 §8.8.3.2)")
	}
	if weak.String() != `W/"x"` || strong.String() != `"x"` {
		t.Errorf("String: %s %s", weak, strong)
	}
}

func TestParseVary(t *testing.T) {
	for _, tc := range []struct {
		in   []string
		want string
		star bool
	}{
		{nil, "", false},
		{[]string{"Accept-Encoding"}, "Accept-Encoding", false},
		{[]string{"accept-encoding, ORIGIN"}, "Accept-Encoding Origin", false},
		{[]string{"Origin", "accept-encoding,origin"}, "Accept-Encoding Origin", false},
		{[]string{"Accept, *"}, "Accept", true},
		{[]string{"*"}, "", true},
		{[]string{" , bad name, Accept"}, "Accept", false},
	} {
		names, star := ParseVary(http.Header{"Vary": tc.in})
		if got := strings.Join(names, " "); got != tc.want || star != tc.star {
			t.Errorf("ParseVary(%q) = %q, %v; want %q, %v", tc.in, got, star, tc.want, tc.star)
		}
	}
}

func TestParseContentRange(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want ContentRange
		ok   bool
	}{
		{"bytes 0-99/1000", ContentRange{0, 99, 1000}, true},
		{"bytes 900-999/1000", ContentRange{900, 999, 1000}, true},
		{"bytes 0-99/*", ContentRange{0, 99, -1}, true},
		{"Bytes 0-0/1", ContentRange{0, 0, 1}, true},
		{"bytes */1000", ContentRange{}, false},
		{"bytes 0-1000/1000", ContentRange{}, false},
		{"bytes 5-4/10", ContentRange{}, false},
		{"bytes -1-4/10", ContentRange{}, false},
		{"bytes +1-4/10", ContentRange{}, false},
		{"items 0-1/2", ContentRange{}, false},
		{"bytes 0-1/x", ContentRange{}, false},
		{"", ContentRange{}, false},
	} {
		got, ok := ParseContentRange(tc.in)
		if got != tc.want || ok != tc.ok {
			t.Errorf("ParseContentRange(%q) = %+v, %v; want %+v, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}

func TestSplitList(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"a, b ,c", "a|b|c"},
		{`a="x,y", b`, `a="x,y"|b`},
		{" , ,a,,", "a"},
		{"", ""},
	} {
		if got := strings.Join(splitList(tc.in), "|"); got != tc.want {
			t.Errorf("splitList(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
