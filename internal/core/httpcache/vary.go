package httpcache

import (
	"net/http"
	"slices"
	"strconv"
	"strings"
)

// caseless lists request fields whose values compare case-insensitively, so
// a secondary key lower-cases them (RFC 9111 §4.1: "case-normalization,
// where values are defined to be case-insensitive"): content codings (RFC
// 9110 §8.4.1), media types (§8.3.1), charsets (§8.3.2) and language tags
// (§8.5.1).
var caseless = map[string]bool{
	"Accept": true, "Accept-Charset": true, "Accept-Encoding": true, "Accept-Language": true,
}

// unordered lists request fields whose element order carries no meaning
// (preference is by weight, RFC 9110 §12.5.3), so a key sorts them.
var unordered = map[string]bool{"Accept-Encoding": true}

// VaryKey returns the secondary cache key of a request for a stored
// response that varies on names (RFC 9111 §4.1; names as ParseVary returns
// them): each named field's value normalized as §4.1 allows, so requests
// whose fields differ only in whitespace, field-name case, line splitting,
// value case (where insensitive) or element order (where insignificant)
// share a key, and a field that is absent differs from one that is empty.
// The key is empty when names is. It is opaque but stable: the same
// names and values give the same key across versions of this package.
func VaryKey(names []string, h http.Header) string {
	var b strings.Builder
	for i, name := range names {
		if i > 0 {
			b.WriteByte('&')
		}
		b.WriteString(strings.ToLower(name))
		v, ok := h[http.CanonicalHeaderKey(name)]
		if !ok {
			b.WriteByte('!')
			continue
		}
		b.WriteByte('=')
		b.WriteString(strconv.Quote(NormalizeValue(name, v)))
	}
	return b.String()
}

// NormalizeValue returns the normalized value of the request field name
// with lines v, as VaryKey keys it (RFC 9111 §4.1): lines combined, list
// elements trimmed and empty ones dropped (RFC 9110 §5.6.1), whitespace
// around ";" and "=" in parameters removed (§5.6.6), and for the fields
// that allow it, lower-cased and sorted. Quoted strings are kept as sent.
func NormalizeValue(name string, v []string) string {
	name = http.CanonicalHeaderKey(name)
	elems := listValues(v)
	for i, e := range elems {
		e = squeezeParams(e)
		if caseless[name] {
			e = strings.ToLower(e)
		}
		elems[i] = e
	}
	if unordered[name] {
		slices.Sort(elems)
	}
	return strings.Join(elems, ",")
}

// squeezeParams removes the optional whitespace around ";" and "=" outside
// quoted strings.
func squeezeParams(s string) string {
	var b strings.Builder
	quoted := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quoted && c == '\\' && i+1 < len(s):
			b.WriteByte(c)
			i++
			c = s[i]
		case c == '"':
			quoted = !quoted
		case !quoted && (c == ' ' || c == '\t') && nextIsSep(s[i:]):
			continue
		case !quoted && (c == ';' || c == '='):
			b.WriteByte(c)
			for i+1 < len(s) && (s[i+1] == ' ' || s[i+1] == '\t') {
				i++
			}
			continue
		}
		b.WriteByte(c)
	}
	return b.String()
}

// nextIsSep reports whether s, starting with whitespace, reaches ";" or "="
// before any other character.
func nextIsSep(s string) bool {
	t := strings.TrimLeft(s, " \t")
	return t != "" && (t[0] == ';' || t[0] == '=')
}

// MatchesVary reports whether the request header h selects this entry's
// variant (RFC 9111 §4.1): its fields named by the stored Vary normalize
// to the values of the request that produced the entry.
func (e *Entry) MatchesVary(h http.Header) bool {
	names, star := ParseVary(e.Header)
	return !star && VaryKey(names, h) == e.Variant
}
