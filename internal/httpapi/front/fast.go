package front

import (
	"net/http"
	"strings"
	"time"
)

// A FastHandler answers the common case of a public route's reads (a plain
// GET or HEAD of a media segment that the RAM pool holds) without the
// API's per-request layers: no mux lookup, no wrapped ResponseWriter, no
// closure per layer. Its answers must be byte for byte those of the
// route's handler behind the general path: it serves only what no layer
// would change (a 200 of a media type that is never compressed, a path no
// signature guards), and hands every other request back untouched. What
// it may set on an answer is the package's contract (doc.go).
type FastHandler interface {
	// ServeFast answers r and returns the route pattern it stands for
	// and the status it sent, with next nil. Or it writes nothing at
	// all (not even a header) and returns next, the request the general
	// path is to serve: r itself, or r carrying what ServeFast has
	// already learnt (so that the general path does not ask the engine
	// twice). It calls c.Apply before it sets its own header fields.
	ServeFast(w http.ResponseWriter, r *http.Request, c CORS) (route string, status int, next *http.Request)
}

// A Prompt FastHandler never waits for a peer while it answers: what it
// does not hold it hands back, and the general path fetches it. The
// Front does not watch such a handler's client for a hang-up while it
// runs (no timer per answer): its context is cancelled when the client
// is gone only if the Front closes. Prompt reports whether it is such a
// handler.
type Prompt interface {
	FastHandler
	Prompt() bool
}

// IsPrompt reports whether h is a Prompt FastHandler.
func IsPrompt(h FastHandler) bool {
	p, ok := h.(Prompt)
	return ok && p.Prompt()
}

// CORS adds to a response the CORS fields of the policy in force, as the
// general path does on the GETs and HEADs of every public route.
type CORS interface {
	// Apply sets h's CORS fields for a GET or HEAD r of a public route.
	Apply(h http.Header, r *http.Request)
}

// noCORS is the CORS of a Front without a policy: no field.
type noCORS struct{}

func (noCORS) Apply(http.Header, *http.Request) {}

// A Route is a FastHandler and the path prefix of the requests it is
// asked about.
type Route struct {
	Prefix  string
	Handler FastHandler
}

// For returns the FastHandler of routes that r may go to: a GET or HEAD
// of a route's prefix whose path needs no unescaping beyond the default
// (RawPath empty: no %2F, nothing the mux would match otherwise). Nil if
// none.
func For(routes []Route, r *http.Request) FastHandler {
	if r.Method != http.MethodGet && r.Method != http.MethodHead || r.URL.RawPath != "" {
		return nil
	}
	for i := range routes {
		if strings.HasPrefix(r.URL.Path, routes[i].Prefix) {
			return routes[i].Handler
		}
	}
	return nil
}

// FastPath returns the handler, for net/http, that offers each GET and
// HEAD of o's routes to its FastHandler first, then to general when it is
// handed back, when o.Skip(r) says a layer of general's applies to r (a
// signed-URL guard), or when the Front has asked the FastHandler already
// (a request it handed over with its connection). Its answers are
// observed as the Front's (o.Observe). Only o's Routes, CORS, Skip and
// Observe are used.
func FastPath(general http.Handler, o Options) http.Handler {
	if len(o.Routes) == 0 {
		return general
	}
	o = o.withDefaults()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if f := For(o.Routes, r); f != nil && (o.Skip == nil || !o.Skip(r)) && !Tried(r) {
			start := time.Now()
			route, status, next := f.ServeFast(w, r, o.CORS())
			if next == nil {
				o.Observe(route, status, time.Since(start))
				return
			}
			r = next
		}
		general.ServeHTTP(w, r)
	})
}

// Tried reports whether r is a request the Front's FastHandler has handed
// back (Wrap marks it): it is not to be asked again.
func Tried(r *http.Request) bool { return r.Context().Value(fastTriedKey{}) != nil }
