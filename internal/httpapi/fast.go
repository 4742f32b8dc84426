package httpapi

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/strata-media/strata/internal/httpapi/front"
)

// A FastHandler answers the common case of a public route's reads without
// the API's layers, on the Front or on net/http (FastPath): see package
// front for its contract.
type FastHandler = front.FastHandler

// CORS adds to a response the CORS fields of the policy in force, as the
// general path does on the GETs and HEADs of every public route: the
// front.CORS the API passes its FastHandlers.
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
	return front.FastPath(general, a.frontOptions(skip))
}

// FrontOptions configure the API's Front: front.Options less what the API
// sets itself (its fast routes, CORS policy and metrics).
type FrontOptions struct {
	// ReadHeader, Idle and Write are net/http's ReadHeaderTimeout,
	// IdleTimeout and WriteTimeout (front.Options).
	ReadHeader, Idle, Write time.Duration
	// Skip reports the requests a layer of the general path must see
	// (a signed-URL guard), as for FastPath.
	Skip func(*http.Request) bool
	// AccessLog, if set, gets a line per request the Front answers, as
	// AccessLog.Handler writes for the others.
	AccessLog *AccessLog
	// Track is front.Options.Track.
	Track func(delta int)
	// Logger receives accept errors. Nil: slog.Default().
	Logger *slog.Logger
}

// Front returns a Front over the API's fast routes, nil if it has none
// (FastPath's conflict check turned them off or none was mounted).
func (a *API) Front(o FrontOptions) *front.Front {
	fo := a.frontOptions(o.Skip)
	fo.ReadHeader, fo.Idle, fo.Write, fo.Track, fo.Logger = o.ReadHeader, o.Idle, o.Write, o.Track, o.Logger
	fo.Counters = front.Counters{Answers: a.routes.frontAnswers, Handovers: a.routes.frontHandovers, Reclaims: a.routes.frontReclaims, Laid: a.routes.frontLaid}
	if o.AccessLog != nil {
		fo.AccessLog = frontLog{o.AccessLog}
	}
	return front.New(fo)
}

// frontOptions are the Front's options the API sets: its fast routes,
// its CORS policy, its route metrics.
func (a *API) frontOptions(skip func(*http.Request) bool) front.Options {
	routes := a.fastRoutes()
	o := front.Options{Skip: skip, Observe: a.routes.observe,
		CORS: func() front.CORS { return CORS{a.live.cors.Load()} }}
	for _, r := range routes {
		o.Routes = append(o.Routes, front.Route{Prefix: r.prefix, Handler: r.h})
	}
	return o
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
	// others are the first path segments of the other routes' patterns
	// ("stats" of GET /stats): a path whose first segment is none of
	// them is the handler's without asking the mux (its own patterns
	// hold its whole prefix, and only a pattern that matches a path can
	// be more specific than that subtree). Nil: the mux is asked for
	// every path (a pattern with a host or a wildcard first segment).
	others map[string]bool
}

// routeMark marks a pattern of yieldingRoute.mux: true for the fast
// handler's own. It is never served.
type routeMark bool

func (routeMark) ServeHTTP(http.ResponseWriter, *http.Request) {}

func (y yieldingRoute) ServeFast(w http.ResponseWriter, r *http.Request, c front.CORS) (string, int, *http.Request) {
	if y.others == nil || y.others[firstSegment(r.URL.Path)] {
		if h, _ := y.mux.Handler(r); h != routeMark(true) {
			return "", 0, r
		}
	}
	return y.h.ServeFast(w, r, c)
}

// Prompt reports whether the handler it yields for is a front.Prompt one.
func (y yieldingRoute) Prompt() bool { return front.IsPrompt(y.h) }

// firstSegment is path's first segment: "stats" of "/stats" and of
// "/stats/x", "" of "/".
func firstSegment(path string) string {
	path = strings.TrimPrefix(path, "/")
	if i := strings.IndexByte(path, '/'); i >= 0 {
		return path[:i]
	}
	return path
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
	subtree := false // an own pattern holds the whole prefix
	for _, p := range f.patterns {
		own[p] = true
		_, path, ok := strings.Cut(p, " ")
		if !ok {
			path = p
		}
		subtree = subtree || path == f.prefix && strings.HasSuffix(path, "/")
	}
	mux := http.NewServeMux()
	others := map[string]bool{}
	for _, p := range a.patterns {
		method, path, ok := strings.Cut(p, " ")
		if !ok {
			method, path = "", p
		}
		if method != "" && method != http.MethodGet && method != http.MethodHead {
			continue
		}
		mux.Handle(p, routeMark(own[p]))
		if own[p] {
			continue
		}
		seg := firstSegment(strings.TrimSuffix(path, "{$}")) // {$} anchors the end only
		if !strings.HasPrefix(path, "/") || strings.Contains(seg, "{") {
			subtree = false // a host, or a wildcard first segment: ask the mux
		}
		others[seg] = true
	}
	y = yieldingRoute{h: f.h, mux: mux}
	if subtree {
		y.others = others
	}
	return y, nil
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
