// Package edge is the pull-through cache in front of HTTP origins: an
// http.Handler that answers GET and HEAD for the paths of its
// upstreams from Strata's RAM and flash tiers through the engine, and on a
// miss fetches from the upstream, serves, and stores, every caching
// decision taken by core/httpcache (RFC 9111, RFC 5861).
//
// A stored response is a record (record.go): the httpcache.Entry and the
// body, checksummed, so a flash copy survives a restart and a damaged one
// is detected. Objects larger than a slice are fetched and stored in
// aligned slices, as nginx's slice module does: a Range request pulls
// only the slices it covers, and every slice must carry the validators of
// the first (httpcache.Combinable). Concurrent misses of one object share
// one upstream fetch (the engine's coalescing), revalidations one
// conditional request.
package edge

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/sync/singleflight"

	"github.com/strata-media/strata/internal/core/httpcache"
	"github.com/strata-media/strata/internal/core/tier"
	"github.com/strata-media/strata/internal/httpapi"
	"github.com/strata-media/strata/internal/node/engine"
)

// Values of the X-Strata-Cache response field. On an edge error answer
// (502, 504) for a GET or HEAD, MISS says the edge held no copy it could
// read (it answers what it holds, marked STALE, whatever the upstream
// does), EXPIRED that it held one it may not serve stale
// (must-revalidate, past keep-on-error).
const (
	// CacheHit: a fresh stored response.
	CacheHit = "HIT"
	// CacheCoalesced: the response another request was fetching.
	CacheCoalesced = "COALESCED"
	// CacheMiss: fetched from the upstream and stored.
	CacheMiss = "MISS"
	// CacheExpired: a stale stored response was replaced by a new one.
	CacheExpired = "EXPIRED"
	// CacheRevalidated: a stale stored response, refreshed by a 304.
	CacheRevalidated = "REVALIDATED"
	// CacheStale: a stale stored response (stale-while-revalidate,
	// stale-if-error, max-stale).
	CacheStale = "STALE"
	// CachePass: a response the cache does not store.
	CachePass = "PASS"
)

// Header fields the edge adds to its responses.
const (
	// HeaderTier names the tier that served the response: ram, ssd or
	// upstream.
	HeaderTier = "X-Strata-Tier"
	// HeaderCache says what the cache did (CacheHit, CacheMiss, ...).
	HeaderCache = "X-Strata-Cache"
)

// Handler is the edge cache. Its methods are safe for concurrent use.
type Handler struct {
	opts Options
	log  *slog.Logger
	eng  *engine.Engine
	// client carries every upstream exchange when Options.Transport is
	// set; nil otherwise, each server having its own.
	client *http.Client
	// rules are the default cache policy and the rules; SetRules
	// replaces them while serving.
	rules atomic.Pointer[rules]
	// routes are the upstreams, longest prefix first; SetUpstreams
	// replaces them while serving.
	routes atomic.Pointer[[]route]

	reval singleflight.Group // one revalidation per variant at a time
	bg    chan struct{}      // a token per background revalidation
	// relays holds a token per relay in progress (Options.MaxRelays);
	// nil: no bound.
	relays chan struct{}

	// refreshed holds the entries 304s refreshed, by variant key
	// directory: the stored record keeps the metadata it was stored with.
	refreshed struct {
		sync.Mutex // protects m
		m          map[string]refreshedEntry
	}
	// streams are the stored responses being fetched, by the tier key
	// of their first slice: a plain GET for one of them reads its body as
	// it arrives instead of waiting for the whole (stream.go).
	streams struct {
		sync.Mutex // protects m
		m          map[string]*fetched
	}
	// life owns the background goroutines.
	life struct {
		sync.Mutex // protects closed and Add on wg
		closed     bool
		wg         sync.WaitGroup
		ctx        context.Context
		cancel     context.CancelFunc
	}
	// tags are the tag index and the tag purges (tags.go).
	tags  tagState
	stats counters
	// flashDecoded are the records ServeFast decoded from this engine's
	// flash hits: per handler, since a generation names bytes within
	// one cache only (two nodes in one process number theirs alike).
	flashDecoded flashRecords
	// fill bounds the upstream bodies held in the heap (Options.FillMemory).
	fill *fillMemory
	// upstreamLatency times upstream exchanges up to their response
	// header.
	upstreamLatency prometheus.Histogram
}

// refreshedEntry is an entry refreshed by a 304, for the record with id.
type refreshedEntry struct {
	id    uint64
	entry *httpcache.Entry
}

// New returns an edge handler storing in eng. The caller keeps ownership
// of eng; Close stops the handler's background revalidations.
func New(eng *engine.Engine, opts Options) (*Handler, error) {
	if eng == nil || len(opts.Upstreams) == 0 {
		return nil, errors.New("edge: an engine and at least one upstream are needed")
	}
	if opts.MaxIdleConns == 0 {
		opts.MaxIdleConns = idleConnsFor(eng.LoadLimit(), opts.MaxBackground)
	}
	if opts.MaxRelays == 0 {
		opts.MaxRelays = eng.LoadLimit()
	}
	opts.EnsureDefaults()
	if opts.SliceSize < 0 || opts.MaxWhole < 0 {
		return nil, errors.New("edge: negative slice size or whole-object limit")
	}
	h := &Handler{opts: opts, log: opts.Logger, eng: eng, bg: make(chan struct{}, opts.MaxBackground),
		upstreamLatency: newUpstreamLatency(), fill: newFillMemory(opts.FillMemory)}
	if opts.MaxRelays > 0 {
		h.relays = make(chan struct{}, opts.MaxRelays)
	}
	routes, err := h.opts.parseRoutes(opts.Upstreams)
	if err != nil {
		return nil, err
	}
	if opts.Transport != nil {
		h.client = newClient(opts.Transport)
	}
	h.newClients(routes)
	h.routes.Store(&routes)
	rs, err := compileRules(Policy{Cache: opts.Cache, Query: opts.Query, QueryParams: opts.QueryParams}, opts.Rules)
	if err != nil {
		return nil, err
	}
	h.rules.Store(rs)
	h.tags.index, h.tags.bans, h.tags.file = map[string]map[string]struct{}{}, map[string]time.Time{}, opts.TagPurgeFile
	if h.tags.file != "" {
		skipped, err := h.tags.loadBans()
		if err != nil {
			return nil, err
		}
		if skipped > 0 {
			h.log.Warn("skipped lines of the tag purge file that do not check (a torn append)", "file", h.tags.file, "lines", skipped)
		}
	}
	h.refreshed.m = make(map[string]refreshedEntry)
	h.streams.m = make(map[string]*fetched)
	h.life.ctx, h.life.cancel = context.WithCancel(context.Background())
	return h, nil
}

// Close cancels the background revalidations, waits for them, and closes
// the idle upstream connections. Requests still in progress complete.
func (h *Handler) Close() error {
	h.life.Lock()
	h.life.closed = true
	h.life.Unlock()
	h.life.cancel()
	h.life.wg.Wait()
	closeIdle(*h.routes.Load())
	return nil
}

// newClient returns the client of upstream exchanges over tr.
func newClient(tr http.RoundTripper) *http.Client {
	return &http.Client{
		Transport: tr,
		// Redirects are answers to cache and pass on, never followed.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// newClients gives each server of routes its client: the shared one of
// Options.Transport, else its own transport with its route's settings.
func (h *Handler) newClients(routes []route) {
	for i := range routes {
		for _, s := range routes[i].servers {
			s.client = h.client
			if s.client == nil {
				s.client = newClient(newTransport(&routes[i].set))
			}
		}
	}
}

// closeIdle closes the idle connections of the servers of routes.
func closeIdle(routes []route) {
	for i := range routes {
		for _, s := range routes[i].servers {
			s.client.CloseIdleConnections()
		}
	}
}

// match returns the route of an escaped request path and the path below
// its prefix.
func (h *Handler) match(path string) (*route, string, bool) {
	routes := *h.routes.Load()
	for i := range routes {
		if rest, ok := strings.CutPrefix(path, routes[i].prefix); ok {
			return &routes[i], rest, true
		}
	}
	return nil, "", false
}

// Handles reports whether an upstream is configured for the request path.
func (h *Handler) Handles(path string) bool {
	_, _, ok := h.match(path)
	return ok
}

// ServeHTTP answers a GET or HEAD for an upstream's path from the cache or
// the upstream, and forwards other methods, dropping what their answer
// invalidates (RFC 9111 §4.4); 404 for a path of no upstream.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	// What ServeFast found and this request does not take is released
	// once it is answered.
	defer releaseFinds(r)
	httpapi.Relay(w) // an upstream's 404 or 503 reaches the client with its own body
	rt, rest, ok := h.match(r.URL.EscapedPath())
	if !ok {
		writeError(w, http.StatusNotFound, ErrNoUpstream)
		return
	}
	if dotSegments(r.URL.Path) {
		// "/cdn/../x" must not reach outside the upstream's base path.
		writeError(w, http.StatusBadRequest, ErrDotSegments)
		return
	}
	s := &serving{h: h, w: w, r: r, q: h.newQuery(rt, rest, r)}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		s.forward()
		return
	}
	s.serve()
}

// Purged is what a purge dropped: the stored objects (a response stored in
// N slices is N objects) and their bytes, records included.
type Purged struct {
	Objects int   `json:"objects"`
	Bytes   int64 `json:"bytes"`
}

func (p *Purged) add(d tier.Dropped) {
	p.Objects += d.Objects
	p.Bytes += d.Bytes
}

// Purge drops the stored responses of a request path (with its query, if
// any): every variant and slice. A path ending in '/' purges every path
// under it too (an upstream's prefix purges all it stored). It returns
// what it dropped once the invalidation is durable; nothing dropped (a
// path never cached) is no error.
func (h *Handler) Purge(path string) (Purged, error) {
	h.stats.purges.Add(1)
	rt, rest, ok := h.match(path)
	if !ok {
		return Purged{}, ErrNoUpstream
	}
	if !strings.Contains(rest, "?") && (rest == "" || strings.HasSuffix(rest, "/")) {
		dirs, _ := splitTarget(rest)
		return h.invalidateCounted(dirKey(rt.key, dirs))
	}
	return h.invalidateCounted(h.objectOf(rt, path, rest))
}

// newQuery returns the query for r, whose escaped path is rt's prefix
// then rest: its cache policy, the first rule's that matches, and its
// object key, with the query string the policy counts.
func (h *Handler) newQuery(rt *route, rest string, r *http.Request) query {
	c := h.rules.Load().policyFor(r.URL.Path)
	q := query{rt: rt, target: rest, header: r.Header, policy: c.policy}
	if r.URL.RawQuery != "" {
		q.target += "?" + r.URL.RawQuery
	}
	q.obj = objectKey(rt.key, c.keyTarget(rest, r.URL.RawQuery))
	return q
}

// objectOf is the object key of a request path (escaped, with its
// query) whose part below rt's prefix is rest, as its policy keys it.
func (h *Handler) objectOf(rt *route, escaped, rest string) string {
	p, _, _ := strings.Cut(escaped, "?")
	if u, err := url.PathUnescape(p); err == nil {
		p = u
	}
	rest, rawQuery, _ := strings.Cut(rest, "?")
	return objectKey(rt.key, h.rules.Load().policyFor(p).keyTarget(rest, rawQuery))
}

// purgeObject drops the stored responses of one request path (escaped,
// with its query).
func (h *Handler) purgeObject(path string) error {
	rt, rest, ok := h.match(path)
	if !ok {
		return ErrNoUpstream
	}
	return h.invalidate(h.objectOf(rt, path, rest))
}

// invalidate drops every tier object under the key directory dir, and the
// refreshed entries of its variants.
func (h *Handler) invalidate(dir string) error {
	_, err := h.invalidateCounted(dir)
	return err
}

// invalidateCounted is invalidate, and says what it dropped.
func (h *Handler) invalidateCounted(dir string) (Purged, error) {
	h.refreshed.Lock()
	for k := range h.refreshed.m {
		if strings.HasPrefix(k, dir) {
			delete(h.refreshed.m, k)
		}
	}
	h.refreshed.Unlock()
	h.streams.Lock()
	for k := range h.streams.m {
		if strings.HasPrefix(k, dir) {
			delete(h.streams.m, k)
		}
	}
	h.streams.Unlock()
	d, err := h.eng.Purge(dir)
	var p Purged
	p.add(d)
	return p, err
}

// current returns the entry to decide with for rec, stored under the
// variant directory v: the one a 304 refreshed, if any, else the stored one.
func (h *Handler) current(v string, rec *record) *httpcache.Entry {
	h.refreshed.Lock()
	defer h.refreshed.Unlock()
	if r, ok := h.refreshed.m[v]; ok && r.id == rec.id {
		return r.entry
	}
	return &rec.entry
}

// setRefreshed remembers e, refreshed by a 304, for the record id under v.
func (h *Handler) setRefreshed(v string, id uint64, e *httpcache.Entry) {
	h.refreshed.Lock()
	defer h.refreshed.Unlock()
	if _, ok := h.refreshed.m[v]; !ok && len(h.refreshed.m) >= h.opts.MaxRefreshed {
		for k := range h.refreshed.m { // forget one, at random
			delete(h.refreshed.m, k)
			break
		}
	}
	h.refreshed.m[v] = refreshedEntry{id: id, entry: e}
}

// tierName names a tier for HeaderTier.
func tierName(t tier.Tier) string {
	switch t {
	case tier.RAM:
		return "ram"
	case tier.SSD:
		return "ssd"
	}
	return "upstream"
}

// dotSegments reports whether the (unescaped) path has a "." or ".."
// segment (RFC 3986 §3.3).
func dotSegments(path string) bool {
	if !strings.HasPrefix(path, ".") && !strings.Contains(path, "/.") {
		return false // no segment starts with a dot
	}
	for seg := range strings.SplitSeq(path, "/") {
		if seg == "." || seg == ".." {
			return true
		}
	}
	return false
}

// itoa formats n for header fields.
func itoa(n int64) string { return strconv.FormatInt(n, 10) }
