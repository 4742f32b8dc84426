package httpcache

import (
	"net/http"
	"net/textproto"
	"slices"
	"strconv"
	"strings"
	"time"
)

// splitList splits a list-based field value (RFC 9110 §5.6.1) into its
// non-empty elements with surrounding whitespace removed; commas inside
// quoted strings do not split.
func splitList(s string) []string {
	var out []string
	for s != "" {
		rest := skipElement(s)
		elem := strings.TrimSuffix(s[:len(s)-len(rest)], ",")
		if e := strings.Trim(elem, " \t"); e != "" {
			out = append(out, e)
		}
		s = rest
	}
	return out
}

// listValues splits every line of a list-based field into its elements.
func listValues(lines []string) []string {
	var out []string
	for _, l := range lines {
		out = append(out, splitList(l)...)
	}
	return out
}

// fieldNames parses a list of field names, as in no-cache="a, b" (RFC 9111
// §5.2.2.4) or Vary (RFC 9110 §12.5.5), into canonical names, dropping
// elements that are not tokens.
func fieldNames(s string) []string {
	var names []string
	for _, e := range splitList(s) {
		if isToken(e) {
			names = append(names, textproto.CanonicalMIMEHeaderKey(e))
		}
	}
	return names
}

// ParseHTTPDate parses an HTTP-date in any of the three formats a recipient
// must accept (RFC 9110 §5.6.7: IMF-fixdate, rfc850-date, asctime-date).
func ParseHTTPDate(s string) (time.Time, bool) {
	t, err := http.ParseTime(strings.Trim(s, " \t"))
	return t, err == nil
}

// headerDate parses the date field name of h. A field with more than one
// line, or one that does not parse, is Invalid (RFC 9111 §5.3: invalid
// dates mean "already expired"; §4.2.1: several Expires lines may be
// considered stale).
func headerDate(h http.Header, name string) (time.Time, Arg) {
	v := h.Values(name)
	switch {
	case len(v) == 0:
		return time.Time{}, Absent
	case len(v) > 1:
		return time.Time{}, Invalid
	}
	t, ok := ParseHTTPDate(v[0])
	if !ok {
		return time.Time{}, Invalid
	}
	return t, Valid
}

// ParseAge returns the Age of a response (RFC 9111 §5.1). A list-based value
// uses its first member; a value that is not a non-negative integer is
// ignored (ok false).
func ParseAge(h http.Header) (age time.Duration, ok bool) {
	v := listValues(h.Values("Age"))
	if len(v) == 0 {
		return 0, false
	}
	return parseDelta(v[0])
}

// An ETag is an entity tag (RFC 9110 §8.8.3).
type ETag struct {
	// Weak says the tag had the W/ prefix.
	Weak bool
	// Opaque is the tag between its quotes.
	Opaque string
}

// ParseETag parses one entity-tag (RFC 9110 §8.8.3): an optional W/ and a
// quoted opaque tag.
func ParseETag(s string) (ETag, bool) {
	s = strings.Trim(s, " \t")
	var e ETag
	if strings.HasPrefix(s, "W/") {
		e.Weak, s = true, s[2:]
	}
	if len(s) < 2 || s[0] != '"' || s[len(s)-1] != '"' || strings.Contains(s[1:len(s)-1], `"`) {
		return ETag{}, false
	}
	e.Opaque = s[1 : len(s)-1]
	return e, true
}

// String formats the tag as it is sent in ETag and If-None-Match (RFC 9110
// §8.8.3, §13.1.2).
func (e ETag) String() string {
	if e.Weak {
		return `W/"` + e.Opaque + `"`
	}
	return `"` + e.Opaque + `"`
}

// StrongMatch reports whether both tags are strong and equal (RFC 9110
// §8.8.3.2, strong comparison).
func (e ETag) StrongMatch(o ETag) bool {
	return !e.Weak && !o.Weak && e.Opaque == o.Opaque
}

// WeakMatch reports whether the opaque tags are equal whatever their
// weakness (RFC 9110 §8.8.3.2, weak comparison).
func (e ETag) WeakMatch(o ETag) bool { return e.Opaque == o.Opaque }

// etagOf returns the response's entity tag if it has exactly one valid one.
func etagOf(h http.Header) (ETag, bool) {
	v := h.Values("Etag")
	if len(v) != 1 {
		return ETag{}, false
	}
	return ParseETag(v[0])
}

// ParseVary returns the request field names a response varies on (RFC 9110
// §12.5.5), canonical, sorted and without duplicates, and whether the
// value includes "*", which no request matches (RFC 9111 §4.1).
func ParseVary(h http.Header) (names []string, star bool) {
	for _, e := range listValues(h.Values("Vary")) {
		if e == "*" {
			star = true
		} else if isToken(e) {
			names = append(names, textproto.CanonicalMIMEHeaderKey(e))
		}
	}
	slices.Sort(names)
	return slices.Compact(names), star
}

// ContentRange is a parsed single-part byte range of a 206 response (RFC
// 9110 §14.4).
type ContentRange struct {
	// First and Last are the inclusive byte positions of the part.
	First, Last int64
	// Complete is the length of the whole representation, -1 when the
	// origin sent "*".
	Complete int64
}

// ParseContentRange parses "bytes first-last/complete" (RFC 9110 §14.4).
// Unsatisfied ranges ("bytes */n") and other units are not ok.
func ParseContentRange(s string) (ContentRange, bool) {
	unit, rest, ok := strings.Cut(strings.Trim(s, " \t"), " ")
	if !ok || !strings.EqualFold(unit, "bytes") {
		return ContentRange{}, false
	}
	rng, complete, ok := strings.Cut(strings.TrimLeft(rest, " "), "/")
	first, last, ok2 := strings.Cut(rng, "-")
	if !ok || !ok2 {
		return ContentRange{}, false
	}
	cr := ContentRange{Complete: -1}
	var err1, err2 error
	cr.First, err1 = strconv.ParseInt(first, 10, 64)
	cr.Last, err2 = strconv.ParseInt(last, 10, 64)
	if err1 != nil || err2 != nil || cr.First < 0 || cr.Last < cr.First || !isDigits(first+last) {
		return ContentRange{}, false
	}
	if complete != "*" {
		n, err := strconv.ParseInt(complete, 10, 64)
		if err != nil || !isDigits(complete) || n <= cr.Last {
			return ContentRange{}, false
		}
		cr.Complete = n
	}
	return cr, true
}

// isDigits reports whether s is all ASCII digits (ParseInt also takes signs).
func isDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
