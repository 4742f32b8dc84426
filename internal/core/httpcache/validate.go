package httpcache

import (
	"net/http"
	"slices"
	"time"
)

// Conditional returns the fields to add to the upstream request that
// revalidates the entry (RFC 9111 §4.3.1): If-None-Match with the stored
// entity tag and If-Modified-Since with the stored Last-Modified. Empty when
// the entry has neither validator: the request is then a plain fetch.
func (e *Entry) Conditional() http.Header {
	h := http.Header{}
	if tag, ok := etagOf(e.Header); ok {
		h.Set("If-None-Match", tag.String())
	}
	if _, arg := headerDate(e.Header, "Last-Modified"); arg == Valid {
		h.Set("If-Modified-Since", e.Header.Get("Last-Modified"))
	}
	return h
}

// Matches304 reports whether a 304 with header h applies to the entry (RFC
// 9111 §4.3.4): its entity tag, when it has one, must equal the stored one
// (weak comparison, the one If-None-Match uses, RFC 9110 §13.1.2); without
// one, its Last-Modified, when both have one, must equal the stored one.
// A 304 with no validator answers the conditional request this entry's
// validators produced, so it selects the entry.
func (e *Entry) Matches304(h http.Header) bool {
	if len(h.Values("Etag")) > 0 {
		got, ok := etagOf(h)
		stored, ok2 := etagOf(e.Header)
		return ok && ok2 && got.WeakMatch(stored)
	}
	got, arg := headerDate(h, "Last-Modified")
	stored, arg2 := headerDate(e.Header, "Last-Modified")
	if arg == Absent || arg2 == Absent {
		return true
	}
	return arg == Valid && arg2 == Valid && got.Equal(stored)
}

// freshenKept are the stored fields a 304 never replaces: they describe
// the stored body itself (its length, content coding, digest and range),
// so a 304 changing them would mislabel the bytes (RFC 9111 §3.2: a cache
// "MAY omit these header fields from updating stored responses ... to
// assure integrity of the stored response").
var freshenKept = []string{"Content-Length", "Content-Encoding", "Content-Md5", "Content-Range"}

// Freshen returns the entry refreshed by a 304 with header h, received for
// a request sent at requestTime at responseTime (RFC 9111 §4.3.4, §3.2):
// every stored field the 304 carries is replaced, except the fields a
// cache never stores (§3.1) and those that describe the stored bytes
// (freshenKept, §3.2's integrity exception); the body is kept; the age
// basis becomes this exchange (request and response times, the 304's Date
// or responseTime, its Age or none) and the lifetime is recomputed.
func (p *Policy) Freshen(e *Entry, h http.Header, requestTime, responseTime time.Time) *Entry {
	update := p.storedHeader(h, responseTime)
	for _, name := range freshenKept {
		update.Del(name)
	}
	n := *e
	n.Header = e.Header.Clone()
	n.Header.Del("Age")
	for name, v := range update {
		n.Header[name] = v
	}
	// Fields the refreshed Cache-Control names as private or no-cache go
	// too, as they would have on storing (§3.1).
	n.Header = p.storedHeader(n.Header, responseTime)
	n.RequestTime, n.ResponseTime = requestTime, responseTime
	n.Lifetime, n.Heuristic = p.FreshnessLifetime(n.Status, n.Header)
	return &n
}

// FreshenFromHead returns the entry refreshed by a 200 response to a HEAD
// request, with header h, the way a 304 refreshes it (RFC 9111 §4.3.5), or
// ok false when the HEAD response carries a Content-Length, ETag or
// Last-Modified that differs from the stored one: the stored body is then
// not the current representation and the driver drops the entry.
func (p *Policy) FreshenFromHead(e *Entry, h http.Header, requestTime, responseTime time.Time) (n *Entry, ok bool) {
	for _, name := range []string{"Content-Length", "Etag", "Last-Modified"} {
		if got := h.Values(name); len(got) > 0 && !slices.Equal(got, e.Header.Values(name)) {
			return nil, false
		}
	}
	return p.Freshen(e, h, requestTime, responseTime), true
}

// Combinable reports whether two stored parts (206 slices, or a slice and a
// full response) hold the same representation and may be combined into one
// response (RFC 9111 §3.4): both carry the same strong entity tag, or,
// without entity tags, the same Last-Modified that is strong by RFC 9110
// §8.8.2.2 (at least a minute older than its Date).
func Combinable(a, b http.Header) bool {
	ta, okA := etagOf(a)
	tb, okB := etagOf(b)
	if okA || okB {
		return okA && okB && ta.StrongMatch(tb)
	}
	la, argA := headerDate(a, "Last-Modified")
	lb, argB := headerDate(b, "Last-Modified")
	if argA != Valid || argB != Valid || !la.Equal(lb) {
		return false
	}
	return strongLastModified(a, la) && strongLastModified(b, lb)
}

// strongLastModified reports whether lm is a strong validator for a
// response with header h: its Date is at least 60 seconds later (RFC 9110
// §8.8.2.2).
func strongLastModified(h http.Header, lm time.Time) bool {
	date, arg := headerDate(h, "Date")
	return arg == Valid && date.Sub(lm) >= time.Minute
}
