package httpapi

import (
	"cmp"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
)

// MaxRanges bounds the ranges of one request: each may cost a read of its
// own (a flash piece, a part of a multipart body), and a request of
// thousands of one-byte ranges would amplify reads and responses without
// bound (RFC 9110 §14.2 lets a server reject such a set).
const MaxRanges = 8

// A ByteRange is a satisfiable range of a representation: First to Last
// inclusive.
type ByteRange struct{ First, Last int64 }

// A RangeVerdict is what a server does with a Range header.
type RangeVerdict int

// The verdicts of ParseRange.
const (
	// RangeIgnore serves the whole representation (200): no Range, a
	// unit other than bytes (RFC 9110 §14.2: ignored), or overlapping
	// ranges (§14.2: may be ignored).
	RangeIgnore RangeVerdict = iota
	// RangeServe serves the ranges (206).
	RangeServe
	// RangeRefuse answers 416 with Content-Range: bytes */size: a
	// malformed byte range set, more than MaxRanges, or none satisfiable
	// (bytes=-0 among them).
	RangeRefuse
)

// ParseRange decides what to do with the Range header value h of a GET
// or HEAD of a representation of size bytes (RFC 9110 §14.1.2, §14.2):
// for RangeServe it returns the satisfiable ranges, clipped to the size,
// in the order asked; for RangeRefuse, why.
func ParseRange(h string, size int64) ([]ByteRange, RangeVerdict, string) {
	unit, set, ok := strings.Cut(h, "=")
	if h == "" || !strings.EqualFold(strings.TrimSpace(unit), "bytes") {
		return nil, RangeIgnore, ""
	}
	if !ok {
		return nil, RangeRefuse, "malformed Range"
	}
	var ranges []ByteRange
	n := 0
	for set != "" {
		var spec string
		spec, set, _ = strings.Cut(set, ",")
		spec = strings.Trim(spec, " \t")
		if spec == "" {
			continue // empty list elements are allowed (RFC 9110 §5.6.1)
		}
		if n++; n > MaxRanges {
			return nil, RangeRefuse, fmt.Sprintf("more than %d ranges", MaxRanges)
		}
		r, satisfiable, ok := parseRangeSpec(spec, size)
		if !ok {
			return nil, RangeRefuse, "malformed Range"
		}
		if satisfiable {
			ranges = append(ranges, r)
		}
	}
	switch {
	case n == 0:
		return nil, RangeRefuse, "malformed Range"
	case len(ranges) == 0:
		return nil, RangeRefuse, "no range is satisfiable"
	case overlap(ranges):
		return nil, RangeIgnore, ""
	}
	return ranges, RangeServe, ""
}

// parseRangeSpec parses "first-last", "first-" or "-suffix": ok false
// for a malformed one, satisfiable false for one outside the size or a
// suffix of zero bytes.
func parseRangeSpec(spec string, size int64) (r ByteRange, satisfiable, ok bool) {
	a, b, ok := strings.Cut(spec, "-")
	if !ok {
		return r, false, false
	}
	b = strings.Trim(b, " \t")
	a = strings.Trim(a, " \t")
	if a == "" { // suffix: the last b bytes
		n, ok := digits(b)
		if !ok {
			return r, false, false
		}
		if n == 0 || size == 0 {
			return r, false, true
		}
		return ByteRange{max(size-n, 0), size - 1}, true, true
	}
	first, ok := digits(a)
	if !ok {
		return r, false, false
	}
	last := int64(-1)
	if b != "" {
		if last, ok = digits(b); !ok || last < first {
			return r, false, false
		}
	}
	if first >= size {
		return r, false, true
	}
	if last < 0 || last >= size {
		last = size - 1
	}
	return ByteRange{first, last}, true, true
}

// digits parses a non-negative decimal integer of at most 18 digits
// (a larger one is no range of a representation Strata holds).
func digits(s string) (int64, bool) {
	if s == "" || len(s) > 18 {
		return 0, false
	}
	for i := range len(s) {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	return n, err == nil
}

// etagMatches reports whether the If-None-Match list matches etag by weak
// comparison (RFC 9110 §13.1.2).
func etagMatches(list, etag string) bool {
	if etag == "" {
		return false
	}
	want := strings.TrimPrefix(etag, "W/")
	for t := range strings.SplitSeq(list, ",") {
		t = strings.TrimSpace(t)
		if t == "*" || strings.TrimPrefix(t, "W/") == want {
			return true
		}
	}
	return false
}

// overlap reports whether two of the ranges share a byte.
func overlap(ranges []ByteRange) bool {
	s := slices.Clone(ranges)
	slices.SortFunc(s, func(a, b ByteRange) int { return cmp.Compare(a.First, b.First) })
	for i := 1; i < len(s); i++ {
		if s[i].First <= s[i-1].Last {
			return true
		}
	}
	return false
}

// CheckRange applies ParseRange to r's Range header before
// http.ServeContent serves a representation of size bytes, for GET and
// HEAD alike (so that they agree): it answers 416 with Content-Range:
// bytes */size and returns false, or leaves ServeContent a Range header
// it can serve as it is: none (ignored) or the satisfiable ranges,
// clipped. ServeContent's own parse would answer bytes=-0 with an invalid
// 206, a malformed set with a 416 without Content-Range, and another
// unit with 416.
//
// Preconditions come first (RFC 9110 §13.2.2): an If-None-Match that
// matches the ETag header already set leaves the Range to ServeContent,
// which answers 304; an If-Range other than that ETag makes the Range
// ignored (a date is not compared: the whole representation is always a
// correct answer to it).
func CheckRange(w http.ResponseWriter, r *http.Request, size int64) bool {
	h := r.Header.Get("Range")
	if h == "" {
		return true
	}
	etag := w.Header().Get("ETag")
	if inm := r.Header.Get("If-None-Match"); inm != "" && etagMatches(inm, etag) {
		return true
	}
	if ir := r.Header.Get("If-Range"); ir != "" && (ir != etag || strings.HasPrefix(etag, "W/")) {
		r.Header.Del("Range")
		return true
	}
	ranges, verdict, why := ParseRange(h, size)
	switch verdict {
	case RangeRefuse:
		w.Header().Set("Content-Range", fmt.Sprintf("bytes */%d", size))
		Error(w, http.StatusRequestedRangeNotSatisfiable, why)
		return false
	case RangeIgnore:
		r.Header.Del("Range")
		return true
	}
	var b strings.Builder
	b.WriteString("bytes=")
	for i, br := range ranges {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, "%d-%d", br.First, br.Last)
	}
	r.Header.Set("Range", b.String())
	return true
}
