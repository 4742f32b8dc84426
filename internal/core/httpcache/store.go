package httpcache

import (
	"net/http"
	"strconv"
	"strings"
	"time"
)

// A Refusal says why a response may not be stored (RFC 9111 §3); the empty
// Refusal means it may. The values are short stable words fit for a metric label.
type Refusal string

// Reasons a response is not stored (RFC 9111 §3 unless said otherwise).
const (
	// Stored: the response may be stored.
	Stored Refusal = ""
	// RefuseMethod: only responses to GET are stored. HEAD responses carry
	// no body to store; they freshen a stored GET instead (§4.3.5,
	// Policy.FreshenFromHead).
	RefuseMethod Refusal = "method"
	// RefuseStatus: a non-final (1xx) status, or a 304, which updates a
	// stored response (§4.3.4) and is never stored on its own.
	RefuseStatus Refusal = "status"
	// RefuseMustUnderstand: must-understand with a status code whose
	// caching rules this package does not implement (§5.2.2.3).
	RefuseMustUnderstand Refusal = "must-understand"
	// RefuseNoStore: no-store in the request (§5.2.1.5) or the response
	// (§5.2.2.5).
	RefuseNoStore Refusal = "no-store"
	// RefusePrivate: the response is private and this is a shared cache
	// (§5.2.2.7).
	RefusePrivate Refusal = "private"
	// RefuseAuthorization: the request carried Authorization and the
	// response has none of public, s-maxage, must-revalidate (§3.5).
	RefuseAuthorization Refusal = "authorization"
	// RefuseVaryStar: Vary: * matches no later request (§4.1).
	RefuseVaryStar Refusal = "vary-star"
	// RefusePartial: a 206 while Options.StorePartial is off, or one whose
	// Content-Range is not a single byte range (§3.3).
	RefusePartial Refusal = "partial"
	// RefuseTooLarge: the representation is larger than
	// Options.MaxObjectSize.
	RefuseTooLarge Refusal = "too-large"
	// RefuseSetCookie: Set-Cookie under SetCookieSkip.
	RefuseSetCookie Refusal = "set-cookie"
	// RefuseNoFreshness: no explicit expiration, not public, and a status
	// that is not heuristically cacheable (§3, last condition).
	RefuseNoFreshness Refusal = "no-freshness"
)

// heuristicStatus lists the status codes "heuristically cacheable" (RFC
// 9110 §15.1): storable without explicit freshness.
var heuristicStatus = map[int]bool{
	200: true, 203: true, 204: true, 206: true, 300: true, 301: true, 308: true,
	404: true, 405: true, 410: true, 414: true, 501: true,
}

// understood reports whether the caching rules of status are implemented
// here (RFC 9111 §3: required for 206, 304 and must-understand).
func (p *Policy) understood(status int) bool {
	switch status {
	case 206:
		return p.opts.StorePartial
	case 302, 303, 307:
		return true
	}
	return heuristicStatus[status]
}

// Storable says whether a shared cache may store resp, received for req
// (RFC 9111 §3, §3.5 for Authorization, RFC 9110 §15.1 for status codes).
func (p *Policy) Storable(req Request, resp Response) Refusal {
	if req.Method != http.MethodGet {
		return RefuseMethod
	}
	if resp.Status < 200 || resp.Status == http.StatusNotModified {
		return RefuseStatus
	}
	if r := p.directivesAllow(req, resp); r != Stored {
		return r
	}
	if r := p.shapeAllows(resp); r != Stored {
		return r
	}
	return p.freshnessAllows(resp)
}

// directivesAllow applies the Cache-Control rules of §3 and §3.5.
func (p *Policy) directivesAllow(req Request, resp Response) Refusal {
	cc := responseCC(resp.Header)
	sc := surrogateCC(resp.Header)
	mustUnderstand := cc.Has("must-understand")
	switch {
	case mustUnderstand && !p.understood(resp.Status):
		return RefuseMustUnderstand
	case requestCC(req.Header).Has("no-store"), sc.Has("no-store"):
		return RefuseNoStore
	// §5.2.2.3: a cache that understands the status ignores no-store
	// sent beside must-understand; a Surrogate-Control max-age aimed at
	// this cache overrides a no-store meant for the browsers.
	case cc.Has("no-store") && !mustUnderstand && !sc.Has("max-age"):
		return RefuseNoStore
	case cc.Unqualified("private"):
		return RefusePrivate
	case req.Header.Get("Authorization") != "" && !sharedByOrigin(cc) && !cc.Has("must-revalidate"):
		return RefuseAuthorization
	}
	return Stored
}

// sharedByOrigin reports whether the origin marked the response for shared
// caches explicitly: public or s-maxage.
func sharedByOrigin(cc CacheControl) bool {
	return cc.Has("public") || cc.Has("s-maxage")
}

// shapeAllows applies the rules on the response's form: Vary, partial
// content, size and cookies.
func (p *Policy) shapeAllows(resp Response) Refusal {
	if _, star := ParseVary(resp.Header); star {
		return RefuseVaryStar
	}
	size, ok := contentLength(resp.Header)
	if resp.Status == http.StatusPartialContent {
		if !p.opts.StorePartial {
			return RefusePartial
		}
		cr, ok := ParseContentRange(resp.Header.Get("Content-Range"))
		if !ok || len(resp.Header.Values("Content-Range")) != 1 {
			return RefusePartial
		}
		size = cr.Complete
	}
	if ok && p.opts.MaxObjectSize > 0 && size > p.opts.MaxObjectSize {
		return RefuseTooLarge
	}
	if p.opts.SetCookie == SetCookieSkip && len(resp.Header.Values("Set-Cookie")) > 0 &&
		!sharedByOrigin(responseCC(resp.Header)) {
		return RefuseSetCookie
	}
	return Stored
}

// freshnessAllows applies the last condition of §3: the response has
// explicit freshness (Surrogate-Control's included), is public, or has a
// heuristically cacheable status.
func (p *Policy) freshnessAllows(resp Response) Refusal {
	cc := responseCC(resp.Header)
	if cc.Has("public") || cc.Has("max-age") || cc.Has("s-maxage") || surrogateCC(resp.Header).Has("max-age") ||
		len(resp.Header.Values("Expires")) > 0 || heuristicStatus[resp.Status] {
		return Stored
	}
	return RefuseNoFreshness
}

// contentLength returns the Content-Length of h if it has one valid value.
func contentLength(h http.Header) (int64, bool) {
	v := h.Values("Content-Length")
	if len(v) != 1 || !isDigits(v[0]) {
		return 0, false
	}
	n, err := strconv.ParseInt(v[0], 10, 64)
	return n, err == nil
}

// responseCC parses the Cache-Control of a response.
func responseCC(h http.Header) CacheControl {
	return ParseCacheControl(h.Values("Cache-Control"))
}

// requestCC parses the Cache-Control of a request; without one, Pragma:
// no-cache counts as Cache-Control: no-cache (RFC 9111 §5.4: Pragma is
// ignored when Cache-Control is present).
func requestCC(h http.Header) CacheControl {
	if v := h.Values("Cache-Control"); len(v) > 0 {
		return ParseCacheControl(v)
	}
	for _, e := range listValues(h.Values("Pragma")) {
		if e == "no-cache" {
			return CacheControl{{Name: "no-cache"}}
		}
	}
	return nil
}

// unstored lists the response fields a cache drops before storing (RFC
// 9111 §3.1): the hop-by-hop fields of RFC 9110 §7.6.1 and the fields
// specific to the proxy a cache forwards through.
var unstored = []string{
	"Connection", "Proxy-Connection", "Keep-Alive", "Te", "Transfer-Encoding", "Upgrade",
	"Proxy-Authenticate", "Proxy-Authentication-Info", "Proxy-Authorization",
}

// storedHeader returns the fields of h a cache keeps (RFC 9111 §3.1):
// without hop-by-hop and proxy fields, the fields Connection names, the
// fields named by private="..." and no-cache="..." (which keeps a stored
// response reusable without validation, §5.2.2.4), Set-Cookie and
// Set-Cookie2 unless under SetCookieStore; with a Date set to responseTime when it had none (RFC
// 9110 §6.6.1).
func (p *Policy) storedHeader(h http.Header, responseTime time.Time) http.Header {
	out := h.Clone()
	if out == nil {
		out = http.Header{}
	}
	for _, name := range fieldNames(strings.Join(h.Values("Connection"), ",")) {
		out.Del(name)
	}
	for _, name := range unstored {
		out.Del(name)
	}
	cc := responseCC(h)
	for _, name := range append(cc.FieldNames("private"), cc.FieldNames("no-cache")...) {
		out.Del(name)
	}
	if p.opts.SetCookie != SetCookieStore {
		out.Del("Set-Cookie")
		out.Del("Set-Cookie2")
	}
	if len(out.Values("Date")) == 0 {
		out.Set("Date", responseTime.UTC().Format(http.TimeFormat))
	}
	return out
}
