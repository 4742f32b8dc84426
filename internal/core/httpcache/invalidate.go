package httpcache

import (
	"net/http"
	"net/url"
	"slices"
	"strings"
)

// safeMethods are the methods RFC 9110 §9.2.1 defines as safe; a response to
// any other, including methods whose safety is unknown, invalidates.
var safeMethods = map[string]bool{
	http.MethodGet: true, http.MethodHead: true, http.MethodOptions: true, http.MethodTrace: true,
}

// Invalidations returns the URIs whose stored responses a response to
// method on target invalidates (RFC 9111 §4.4): for an unsafe method
// answered with a non-error status (2xx or 3xx), the target URI, and the
// URIs in Location and Content-Location when they have the target's origin
// (a different origin could be used to attack it, §4.4). URIs are absolute,
// resolved against target, without fragment, with scheme and host in lower
// case (RFC 3986 §6.2.2.1); the target comes first.
// Nil for a safe method or an error status.
func Invalidations(method string, target *url.URL, status int, h http.Header) []string {
	if safeMethods[method] || status < 200 || status >= 400 {
		return nil
	}
	base := normalize(*target)
	out := []string{base.String()}
	for _, name := range []string{"Location", "Content-Location"} {
		v := h.Values(name)
		if len(v) != 1 {
			continue
		}
		ref, err := url.Parse(v[0])
		if err != nil {
			continue
		}
		u := normalize(*base.ResolveReference(ref))
		if sameOrigin(&u, &base) && !slices.Contains(out, u.String()) {
			out = append(out, u.String())
		}
	}
	return out
}

// normalize drops the fragment and lower-cases scheme and host.
func normalize(u url.URL) url.URL {
	u.Fragment, u.RawFragment = "", ""
	u.Scheme, u.Host = strings.ToLower(u.Scheme), strings.ToLower(u.Host)
	return u
}

// sameOrigin compares scheme and authority (RFC 6454 §4, as RFC 9110 §4.3.1
// uses it for http URIs), case-insensitively as both are.
func sameOrigin(a, b *url.URL) bool {
	return strings.EqualFold(a.Scheme, b.Scheme) && strings.EqualFold(a.Host, b.Host)
}
