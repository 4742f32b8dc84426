package httpapi

import (
	"bytes"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// A Module is one subsystem of the HTTP API (videos, files, images, admin,
// the dashboard): it mounts its routes, its section of GET /stats and its
// metrics on the Mounter it is given, the way every other module does.
type Module interface {
	Mount(m *Mounter)
}

// ModuleFunc makes a function a Module.
type ModuleFunc func(m *Mounter)

// Mount calls f(m).
func (f ModuleFunc) Mount(m *Mounter) { f(m) }

// Options configure an API.
type Options struct {
	// AdminToken is the bearer token of the routes mounted with
	// HandleAdmin. Empty disables them (403).
	AdminToken string
	// Logger receives errors of /stats. Nil: slog.Default().
	Logger *slog.Logger
	// CORSOrigins are the origins whose pages may read the public routes
	// (GET and HEAD of routes mounted with Handle): "*" for any, or exact
	// origins ("https://player.example"). Empty: no CORS fields. Admin
	// routes, /stats and /metrics are never CORS-enabled.
	CORSOrigins []string
	// CORSMaxAge is how long a browser may cache a preflight's answer.
	// Default DefaultCORSMaxAge.
	CORSMaxAge time.Duration
}

// An API is the root handler of a node: the modules mounted on it, GET
// /stats merging their sections and GET /metrics gathering their metrics.
type API struct {
	opts     Options
	mux      *http.ServeMux
	reg      *prometheus.Registry
	sections []section
	routes   *routeMetrics
	public   map[string]bool // patterns mounted with Handle
	fallback Fallback        // nil: none (SetFallback)
	patterns []string        // every route's pattern, in mounting order
	fast     []fastRoute     // HandleFast's routes (fast.go)
	// fastOK is fast less the routes a conflict turned off, decided
	// once (fastRoutes).
	fastOK struct {
		once   sync.Once
		routes []fastRoute
	}
	// live holds what SetCORSOrigins and SetAdminToken change while the
	// API serves (reload.go).
	live struct {
		cors  atomic.Pointer[cors]
		token atomic.Pointer[string]
	}
}

// section is one part of GET /stats; name "" puts its fields at the top.
type section struct {
	name string
	fn   func() any
}

// New returns an API with GET /stats, GET /metrics (and the Go runtime's
// and the process's metrics) and nothing else mounted.
func New(opts Options) *API {
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	a := &API{opts: opts, mux: http.NewServeMux(), reg: prometheus.NewRegistry(), public: map[string]bool{},
		routes: newRouteMetrics()}
	a.SetCORSOrigins(opts.CORSOrigins)
	a.SetAdminToken(opts.AdminToken)
	a.Mount(ModuleFunc(a.mountNode)) //nolint:errcheck // two fresh collectors cannot conflict
	return a
}

func (a *API) mountNode(m *Mounter) {
	// The node's own routes: public, but not for pages of other origins.
	a.handle("GET /stats", named("GET /stats", http.HandlerFunc(a.serveStats)))
	a.handle("GET /metrics", named("GET /metrics", promhttp.HandlerFor(a.reg, promhttp.HandlerOpts{})))
	m.Metrics(a.routes)
	m.Metrics(buildInfo())
	m.Metrics(collectors.NewGoCollector())
	m.Metrics(collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
}

// Mount mounts modules in order. It returns the first error of a
// module's mounting: a duplicate /stats section or conflicting metrics.
// Duplicate route patterns panic, as http.ServeMux does.
func (a *API) Mount(modules ...Module) error {
	var errs []error
	for _, mod := range modules {
		m := &Mounter{api: a}
		mod.Mount(m)
		errs = append(errs, m.errs...)
	}
	return errors.Join(errs...)
}

// Handler returns the API's root handler. Every error it answers, the
// mux's own 404 and 405 and http.Error from library code included, is
// a problem details body.
func (a *API) Handler() http.Handler { return http.HandlerFunc(a.serveHTTP) }

func (a *API) serveHTTP(w http.ResponseWriter, r *http.Request) {
	if encodedSlash(r) {
		Error(w, http.StatusBadRequest, "an encoded slash (%2F) inside a path segment: every object has one URL")
		return
	}
	if r.Method == http.MethodOptions && a.isPublic(r) {
		a.live.cors.Load().preflight(w, r)
		return
	}
	start := time.Now()
	if a.fallsBack(r) {
		route, status := a.serveWithFallback(w, r)
		a.routes.observe(route, status, time.Since(start))
		return
	}
	pw := &problemWriter{ResponseWriter: w}
	a.mux.ServeHTTP(pw, r)
	pw.finish()
	a.routes.observe(pw.route, pw.status, time.Since(start))
}

// encodedSlash reports whether r's path has a %2F. The mux matches
// patterns on escaped segments, so /videos/t%2F700k/1.m4s would match
// {video}/{name} with video "t/700k": a second URL of /videos/t/700k/1.m4s
// that caches in front key and purge apart.
func encodedSlash(r *http.Request) bool {
	p := r.URL.RawPath
	return p != "" && (strings.Contains(p, "%2F") || strings.Contains(p, "%2f"))
}

// isPublic reports whether a GET of r's path reaches a route mounted with
// Handle.
func (a *API) isPublic(r *http.Request) bool {
	probe := r.Clone(r.Context())
	probe.Method = http.MethodGet
	_, pattern := a.mux.Handler(probe)
	return a.public[pattern]
}

// Stats returns the merged sections of GET /stats: the fields of the
// top-level section, then one member per named section.
func (a *API) Stats() (json.RawMessage, error) {
	var buf bytes.Buffer
	buf.WriteByte('{')
	for _, s := range a.sections {
		b, err := json.Marshal(s.fn())
		if err != nil {
			return nil, fmt.Errorf("httpapi: stats section %q: %w", s.name, err)
		}
		if s.name == "" {
			if len(b) < 2 || b[0] != '{' {
				return nil, fmt.Errorf("httpapi: the top-level stats section is not an object: %.20s", b)
			}
			b = b[1 : len(b)-1]
			if len(b) == 0 {
				continue
			}
		} else {
			name, _ := json.Marshal(s.name)
			b = append(append(name, ':'), b...)
		}
		if buf.Len() > 1 {
			buf.WriteByte(',')
		}
		buf.Write(b)
	}
	buf.WriteByte('}')
	return buf.Bytes(), nil
}

func (a *API) serveStats(w http.ResponseWriter, r *http.Request) {
	b, err := a.Stats()
	if err != nil {
		a.opts.Logger.Error("GET /stats", "err", err)
		Error(w, http.StatusInternalServerError, "a stats section failed to encode; see the server log")
		return
	}
	Write(w, http.StatusOK, "no-store", b) //nolint:errcheck // the status is sent
}

// requireToken wraps h so that it runs only for requests bearing the
// admin token ("Authorization: Bearer <token>").
func (a *API) requireToken(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		token := *a.live.token.Load()
		if token == "" {
			refuseBody(w, r)
			Error(w, http.StatusForbidden, "admin endpoints are disabled: no token configured")
			return
		}
		got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		if !ok || subtle.ConstantTimeCompare([]byte(got), []byte(token)) != 1 {
			refuseBody(w, r)
			w.Header().Set("WWW-Authenticate", `Bearer realm="strata"`)
			Error(w, http.StatusUnauthorized, "missing or wrong bearer token")
			return
		}
		h.ServeHTTP(w, r)
	})
}

// refuseBody closes the connection after a refusal of a request with a
// body (CloseAfter): the body is never read, so a client that sends
// headers and no body cannot hold the refusal back.
func refuseBody(w http.ResponseWriter, r *http.Request) {
	if r.ContentLength != 0 {
		CloseAfter(w)
	}
}

// A Mounter is what a Module mounts itself on: routes, public or behind
// the admin token, a section of GET /stats and metrics.
type Mounter struct {
	api  *API
	errs []error
}

// Handle registers a public route (an http.ServeMux pattern). Its GET
// and HEAD answers carry the CORS fields of Options.CORSOrigins, and an
// OPTIONS request for its path is answered as a CORS preflight.
func (m *Mounter) Handle(pattern string, h http.Handler) {
	m.api.handle(pattern, named(pattern, m.api.corsWrap(h)))
	m.api.public[pattern] = true
}

// HandleNode registers a public route about the node itself (like
// /stats and /metrics): anyone may read it, but it carries no CORS
// fields, so pages of other origins cannot.
func (m *Mounter) HandleNode(pattern string, h http.Handler) {
	m.api.handle(pattern, named(pattern, h))
}

// HandleAdmin registers a route that runs only for requests bearing the
// admin token: 403 when none is configured, 401 for a missing or wrong one.
func (m *Mounter) HandleAdmin(pattern string, h http.Handler) {
	m.api.handle(pattern, named(pattern, m.api.requireToken(h)))
}

// handle registers h for pattern on the mux and remembers the pattern.
func (a *API) handle(pattern string, h http.Handler) {
	a.mux.Handle(pattern, h)
	a.patterns = append(a.patterns, pattern)
}

// Stats adds a section to GET /stats, filled by fn at each request. The
// section "" puts fn's fields (it must return a struct or map) at the top
// level, where the segment engine's have always been.
func (m *Mounter) Stats(name string, fn func() any) {
	for _, s := range m.api.sections {
		if s.name == name {
			m.errs = append(m.errs, fmt.Errorf("httpapi: stats section %q mounted twice", name))
			return
		}
	}
	m.api.sections = append(m.api.sections, section{name, fn})
}

// Metrics adds a Prometheus collector to GET /metrics.
func (m *Mounter) Metrics(c prometheus.Collector) {
	if err := m.api.reg.Register(c); err != nil {
		m.errs = append(m.errs, fmt.Errorf("httpapi: metrics: %w", err))
	}
}
