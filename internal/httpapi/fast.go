package httpapi

import (
	"errors"
	"fmt"
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
// signature guards), and hands every other request back untouched.
type FastHandler interface {
	// ServeFast answers r and returns the route pattern it stands for
	// and the status it sent, with next nil. Or it writes nothing at
	// all (not even a header) and returns next, the request the general
	// path is to serve: r itself, or r carrying what ServeFast has
	// already learnt (so that the general path does not ask the engine
	// twice). It calls c.Apply before it sets its own header fields.
	ServeFast(w http.ResponseWriter, r *http.Request, c CORS) (route string, status int, next *http.Request)
}

// CORS adds to a response the CORS fields of the policy in force, as the
// general path does on the GETs and HEADs of every public route.
type CORS struct{ c *cors }

// Apply sets h's CORS fields for a GET or HEAD r of a public route.
func (c CORS) Apply(h http.Header, r *http.Request) { c.c.apply(h, r) }

// fastRoute is a FastHandler and the path prefix of the requests it is
// asked about.
type fastRoute struct {
	prefix   string
	h        FastHandler
	patterns []string // the handler's own patterns under prefix
}

// HandleFast offers f the GETs and HEADs whose path starts with prefix
// (API.FastPath), before the general path's layers. patterns are the
// routes f stands for, mounted with Handle as usual: the general path
// serves what f hands back. FastPath turns f off if any other route that
// answers GET reaches under prefix.
func (m *Mounter) HandleFast(prefix string, f FastHandler, patterns ...string) {
	m.api.fast = append(m.api.fast, fastRoute{prefix: prefix, h: f, patterns: patterns})
}

// FastPath returns the root handler that offers each GET and HEAD of a
// fast route's prefix to its FastHandler first, then to general (the
// API's Handler behind the node's own layers) when it is handed back or
// when skip(r) says a layer of general's applies to r (a signed-URL
// guard). The fast answers are counted in the route metrics as the
// general path counts them.
func (a *API) FastPath(general http.Handler, skip func(*http.Request) bool) http.Handler {
	routes := a.fastRoutes()
	if len(routes) == 0 {
		return general
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if f := fastFor(routes, r); f != nil && (skip == nil || !skip(r)) && r.Context().Value(fastTriedKey{}) == nil {
			start := time.Now()
			route, status, next := f.ServeFast(w, r, CORS{a.live.cors.Load()})
			if next == nil {
				a.routes.observe(route, status, time.Since(start))
				return
			}
			r = next
		}
		general.ServeHTTP(w, r)
	})
}

// fastRoutes are the fast routes, decided once: FastPath and Front both
// ask. A route that another route overlaps (the node's /stats under an
// edge on "/") hands the requests the mux would give that route back to
// the general path (yielding); one whose overlap cannot be told apart
// is turned off, and the conflict logged.
func (a *API) fastRoutes() []fastRoute {
	a.fastOK.once.Do(func() {
		for _, f := range a.fast {
			if err := a.fastConflict(f); err != nil {
				y, yerr := a.yielding(f)
				if yerr != nil {
					a.opts.Logger.Warn("fast path off", "prefix", f.prefix, "err", errors.Join(err, yerr))
					continue
				}
				f.h = y
			}
			a.fastOK.routes = append(a.fastOK.routes, f)
		}
	})
	return a.fastOK.routes
}

// yieldingRoute is a FastHandler that other routes overlap: it offers
// its handler only the requests the API's mux would route to one of the
// handler's own patterns, and hands the others (GET /stats under an edge
// on "/") back untouched. The mux holds every GET and HEAD route of the
// API, so that it decides as the API's mux does.
type yieldingRoute struct {
	h   FastHandler
	mux *http.ServeMux
}

// routeMark marks a pattern of yieldingRoute.mux: true for the fast
// handler's own. It is never served.
type routeMark bool

func (routeMark) ServeHTTP(http.ResponseWriter, *http.Request) {}

func (y yieldingRoute) ServeFast(w http.ResponseWriter, r *http.Request, c CORS) (string, int, *http.Request) {
	if h, _ := y.mux.Handler(r); h != routeMark(true) {
		return "", 0, r
	}
	return y.h.ServeFast(w, r, c)
}

// yielding returns f's handler wrapped to yield to the other routes,
// with a mux of every route that answers GET: f's own patterns marked as
// its, the others as not.
func (a *API) yielding(f fastRoute) (y yieldingRoute, err error) {
	defer func() {
		if p := recover(); p != nil { // patterns the API's mux took: not expected
			err = fmt.Errorf("httpapi: routing the fast path's prefix %q: %v", f.prefix, p)
		}
	}()
	own := map[string]bool{}
	for _, p := range f.patterns {
		own[p] = true
	}
	mux := http.NewServeMux()
	for _, p := range a.patterns {
		method, _, ok := strings.Cut(p, " ")
		if ok && method != http.MethodGet && method != http.MethodHead {
			continue
		}
		mux.Handle(p, routeMark(own[p]))
	}
	return yieldingRoute{h: f.h, mux: mux}, nil
}

// fastFor returns the FastHandler r may go to: a GET or HEAD of a fast
// prefix whose path needs no unescaping beyond the default (RawPath empty:
// no %2F, nothing the mux would match otherwise).
func fastFor(routes []fastRoute, r *http.Request) FastHandler {
	if r.Method != http.MethodGet && r.Method != http.MethodHead || r.URL.RawPath != "" {
		return nil
	}
	for i := range routes {
		if strings.HasPrefix(r.URL.Path, routes[i].prefix) {
			return routes[i].h
		}
	}
	return nil
}

// fastConflict reports a mounted route, other than f's own, that a GET
// f serves could reach instead: the fast path would take its requests.
func (a *API) fastConflict(f fastRoute) error {
	own := map[string]bool{}
	for _, p := range f.patterns {
		own[p] = true
	}
	for _, p := range a.patterns {
		if own[p] {
			continue
		}
		method, path, ok := strings.Cut(p, " ")
		if !ok {
			method, path = "", p
		}
		if method != "" && method != http.MethodGet && method != http.MethodHead {
			continue
		}
		// A route under the prefix may be more specific than f's own
		// (a literal where they have a wildcard) and take some of their
		// paths; a less specific one (a subtree such as "/") never takes
		// a path f's patterns match, and f serves no other. A pattern
		// with a host is not compared: it is taken as a conflict.
		if strings.HasPrefix(path, f.prefix) || !strings.HasPrefix(path, "/") {
			return fmt.Errorf("httpapi: route %q overlaps the fast path's prefix %q", p, f.prefix)
		}
	}
	return nil
}
