package httpapi

import (
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
)

// CORS headers of the public routes (Fetch standard, "CORS protocol").
// Players are usually served from another origin than the media: a page
// on one reads manifests, segments, files and images from Strata.
const (
	// corsMethods are the only methods a cross-origin request may use:
	// reads. Uploads and admin routes are never CORS-enabled.
	corsMethods = "GET, HEAD, OPTIONS"
	// corsAllowHeaders are the request fields a player may send: ranges
	// and the conditionals of revalidation.
	corsAllowHeaders = "Range, If-Range, If-None-Match, If-Modified-Since, If-Match, If-Unmodified-Since, Cache-Control"
	// corsExposeHeaders are the response fields a page may read beyond the
	// safelisted ones: what players need for ranges, what says where a
	// response came from, and an IIIF image's profile and canonical Link
	// and the stored variant it was derived from.
	corsExposeHeaders = "Content-Range, Content-Length, Accept-Ranges, Age, ETag, Last-Modified, Retry-After, X-Strata-Tier, X-Strata-Cache, Link, X-Strata-Variant"
)

// DefaultCORSMaxAge is how long a browser may keep a preflight's answer.
const DefaultCORSMaxAge = time.Hour

// cors is the CORS policy of the public routes: which origins may read
// them. Empty origins: CORS is off, no field is added.
type cors struct {
	any     bool     // "*" is among the origins
	origins []string // exact origins ("https://player.example")
	maxAge  time.Duration
}

func newCORS(origins []string, maxAge time.Duration) cors {
	c := cors{maxAge: maxAge}
	if c.maxAge <= 0 {
		c.maxAge = DefaultCORSMaxAge
	}
	for _, o := range origins {
		switch o = strings.TrimSuffix(strings.TrimSpace(o), "/"); o {
		case "":
		case "*":
			c.any = true
		default:
			c.origins = append(c.origins, o)
		}
	}
	return c
}

func (c *cors) enabled() bool { return c.any || len(c.origins) > 0 }

// allow sets the allowed origin of an answer to a request from origin:
// "*", or origin itself with Vary: Origin when the list is not "*". It
// reports whether the answer may be read across origins.
func (c *cors) allow(h http.Header, origin string) bool {
	if !c.enabled() {
		return false
	}
	if c.any {
		// On every answer, Origin or not: a browser or shared cache that
		// keeps a same-origin answer must be able to hand it to a page of
		// another origin, and nothing varies, so no Vary is needed.
		h.Set("Access-Control-Allow-Origin", "*")
		return true
	}
	h.Add("Vary", "Origin") // the answer depends on the request's Origin
	if origin == "" || !slices.Contains(c.origins, origin) {
		return false
	}
	h.Set("Access-Control-Allow-Origin", origin)
	return true
}

// corsWrap adds the CORS fields of the policy in force to the answers of
// a public route's reads.
func (a *API) corsWrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		a.live.cors.Load().apply(w.Header(), r)
		next.ServeHTTP(w, r)
	})
}

// Shared values of the CORS fields most answers carry, assigned without
// an allocation; cut to cap == len, so that an Add appends to a copy.
var (
	corsAnyOrigin = []string{"*"}[:1:1]
	corsExpose    = []string{corsExposeHeaders}[:1:1]
)

// apply sets h's CORS fields for a request r of a public route: none
// unless r is a GET or HEAD and the policy is on.
func (c *cors) apply(h http.Header, r *http.Request) {
	if !c.enabled() || r.Method != http.MethodGet && r.Method != http.MethodHead {
		return
	}
	if c.any { // what allow and the Set below do, without their allocations
		h["Access-Control-Allow-Origin"] = corsAnyOrigin
		h["Access-Control-Expose-Headers"] = corsExpose
		return
	}
	if c.allow(h, r.Header.Get("Origin")) {
		h.Set("Access-Control-Expose-Headers", corsExposeHeaders)
	}
}

// preflight answers OPTIONS for the path of a public route (204, Allow),
// with the CORS fields when the origin may read it and asks for a read.
func (c *cors) preflight(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Allow", corsMethods)
	h.Set("Cache-Control", "no-store")
	method := r.Header.Get("Access-Control-Request-Method")
	if c.allow(h, r.Header.Get("Origin")) && (method == "" || method == http.MethodGet || method == http.MethodHead) {
		h.Set("Access-Control-Allow-Methods", corsMethods)
		h.Set("Access-Control-Allow-Headers", corsAllowHeaders)
		h.Set("Access-Control-Max-Age", strconv.Itoa(int(c.maxAge.Seconds())))
	}
	w.WriteHeader(http.StatusNoContent)
}
