package httpcache

import (
	"strings"
	"time"
)

// A Directive is one cache directive of a Cache-Control field (RFC 9111
// §5.2): a case-insensitive name with an optional argument in token or
// quoted-string form.
type Directive struct {
	// Name is the directive name in lower case.
	Name string
	// Value is the argument with any quoting removed.
	Value string
	// HasValue says an "=" followed the name.
	HasValue bool
	// Malformed says the argument did not parse: an unterminated quoted
	// string, text after the closing quote, or a token argument holding
	// characters a token cannot. Value then holds the raw text.
	Malformed bool
}

// CacheControl is the parsed Cache-Control of one message, its directives in
// the order received, duplicates and unknown extensions kept (RFC 9111 §5.2:
// "A cache MUST ignore unrecognized cache directives"; ignoring is the
// reader's business, the parser keeps them so they can be forwarded).
type CacheControl []Directive

// ParseCacheControl parses every Cache-Control field line of a message
// (RFC 9111 §5.2). Lines are combined as one list (RFC 9110 §5.3). A list
// element whose name is not a token is dropped; an element whose argument
// does not parse is kept with Malformed set, so a broken max-age makes a
// response stale instead of silently falling back to heuristics (RFC 9111
// §4.2.1: "caches are encouraged to consider responses that have invalid
// freshness information ... to be stale").
func ParseCacheControl(lines []string) CacheControl {
	var cc CacheControl
	for _, line := range lines {
		for s := line; s != ""; {
			var d Directive
			var ok bool
			d, s, ok = parseDirective(s)
			if ok {
				cc = append(cc, d)
			}
		}
	}
	return cc
}

// parseDirective parses the first list element of s and returns it with the
// rest of s after the element's comma. ok is false for an empty element or
// one whose name is not a token.
func parseDirective(s string) (d Directive, rest string, ok bool) {
	s = strings.TrimLeft(s, " \t,")
	if s == "" {
		return d, "", false
	}
	end := strings.IndexAny(s, "=,")
	if end < 0 {
		end = len(s)
	}
	name := strings.TrimRight(s[:end], " \t")
	if !isToken(name) {
		return d, skipElement(s), false
	}
	d.Name = strings.ToLower(name)
	s = s[end:]
	if s == "" || s[0] == ',' {
		return d, s, true
	}
	d.HasValue = true
	s = strings.TrimLeft(s[1:], " \t")
	if strings.HasPrefix(s, `"`) {
		d.Value, d.Malformed, s = parseQuoted(s)
		return d, s, true
	}
	end = strings.IndexByte(s, ',')
	if end < 0 {
		end = len(s)
	}
	d.Value = strings.TrimRight(s[:end], " \t")
	d.Malformed = !isToken(d.Value)
	return d, s[end:], true
}

// parseQuoted parses the quoted-string at the start of s (RFC 9110 §5.6.4)
// and what follows it up to the element's comma. malformed reports an
// unterminated string or text after the closing quote.
func parseQuoted(s string) (value string, malformed bool, rest string) {
	var b strings.Builder
	for i := 1; i < len(s); i++ {
		switch c := s[i]; {
		case c == '\\' && i+1 < len(s):
			i++
			b.WriteByte(s[i])
		case c == '"':
			after := strings.TrimLeft(s[i+1:], " \t")
			if after != "" && after[0] != ',' {
				rest = skipElement(after)
				raw := strings.TrimSuffix(s[:len(s)-len(rest)], ",")
				return strings.TrimRight(raw, " \t"), true, rest
			}
			return b.String(), false, after
		default:
			b.WriteByte(c)
		}
	}
	return s, true, ""
}

// skipElement returns s after the next comma outside a quoted string.
func skipElement(s string) string {
	quoted := false
	for i := 0; i < len(s); i++ {
		switch {
		case quoted && s[i] == '\\':
			i++
		case s[i] == '"':
			quoted = !quoted
		case !quoted && s[i] == ',':
			return s[i+1:]
		}
	}
	return ""
}

// isToken reports whether s is a non-empty token (RFC 9110 §5.6.2).
func isToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c <= ' ' || c >= 0x7f || strings.IndexByte(`"(),/:;<=>?@[\]{}`, c) >= 0 {
			return false
		}
	}
	return true
}

// Has reports whether the directive name (lower case; directive names are
// case-insensitive, RFC 9111 §5.2) is present, with or without an argument.
func (cc CacheControl) Has(name string) bool {
	for _, d := range cc {
		if d.Name == name {
			return true
		}
	}
	return false
}

// Get returns the first directive named name (lower case, RFC 9111 §5.2).
func (cc CacheControl) Get(name string) (Directive, bool) {
	for _, d := range cc {
		if d.Name == name {
			return d, true
		}
	}
	return Directive{}, false
}

// Unqualified reports whether name is present in a form that applies to the
// whole response: without an argument, or with one that does not parse or
// names no field. RFC 9111 §5.2.2.4 and §5.2.2.7 let no-cache and private
// name fields; treating a broken list as unqualified is the restrictive
// reading.
func (cc CacheControl) Unqualified(name string) bool {
	for _, d := range cc {
		if d.Name == name && (!d.HasValue || d.Malformed || len(fieldNames(d.Value)) == 0) {
			return true
		}
	}
	return false
}

// FieldNames returns the field names listed by every qualified occurrence of
// name (RFC 9111 §5.2.2.4 no-cache="...", §5.2.2.7 private="..."), in
// canonical form.
func (cc CacheControl) FieldNames(name string) []string {
	var names []string
	for _, d := range cc {
		if d.Name == name && d.HasValue && !d.Malformed {
			names = append(names, fieldNames(d.Value)...)
		}
	}
	return names
}

// Arg says what a directive's delta-seconds argument (RFC 9111 §1.2.2), or
// a date field (§5.3), turned out to be.
type Arg int

// The states of a delta-seconds argument or date field (RFC 9111 §1.2.2,
// §5.3).
const (
	// Absent: the directive is not present.
	Absent Arg = iota
	// Valid: present with a delta-seconds argument.
	Valid
	// Invalid: present without an argument, with one that is not
	// delta-seconds, or several times with different arguments.
	Invalid
)

// maxDelta is the largest delta-seconds a recipient must represent; larger
// values are taken as this one (RFC 9111 §1.2.2).
const maxDelta = (1 << 31) * time.Second

// Seconds returns the delta-seconds argument of the directive name (RFC
// 9111 §1.2.2), capped at 2^31 seconds. Duplicates that agree are one
// directive; duplicates that disagree are Invalid, which makes a freshness
// directive count as already expired (RFC 9111 §4.2.1: "either the first
// occurrence should be used or the response should be considered stale";
// the second is the more restrictive).
func (cc CacheControl) Seconds(name string) (time.Duration, Arg) {
	var v time.Duration
	state := Absent
	for _, d := range cc {
		if d.Name != name {
			continue
		}
		n, ok := parseDelta(d.Value)
		if d.Malformed || !ok || (state == Valid && n != v) {
			return 0, Invalid
		}
		v, state = n, Valid
	}
	return v, state
}

// parseDelta parses delta-seconds = 1*DIGIT (RFC 9111 §1.2.2).
func parseDelta(s string) (time.Duration, bool) {
	if s == "" {
		return 0, false
	}
	var n time.Duration
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
		if n < maxDelta {
			n = n*10 + time.Duration(s[i]-'0')*time.Second
		}
	}
	return min(n, maxDelta), true
}

// String formats the directives as one Cache-Control field value (RFC 9111
// §5.2), quoting arguments that are not tokens; ParseCacheControl of the result gives the
// same directives back (malformed ones become well-formed quoted strings).
func (cc CacheControl) String() string {
	var b strings.Builder
	for i, d := range cc {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(d.Name)
		if !d.HasValue {
			continue
		}
		b.WriteByte('=')
		if isToken(d.Value) {
			b.WriteString(d.Value)
			continue
		}
		b.WriteByte('"')
		for j := 0; j < len(d.Value); j++ {
			if c := d.Value[j]; c == '"' || c == '\\' {
				b.WriteByte('\\')
			}
			b.WriteByte(d.Value[j])
		}
		b.WriteByte('"')
	}
	return b.String()
}
