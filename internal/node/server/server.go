// Package server holds the segment engine's HTTP modules: videos (catalog and objects), admin and the dashboard.
package server

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"github.com/strata-media/strata/internal/core/tier"
	"github.com/strata-media/strata/internal/httpapi"
	"github.com/strata-media/strata/internal/ident"
	"github.com/strata-media/strata/internal/node/engine"
	"github.com/strata-media/strata/internal/storage/origin"
)

// Options configure the videos module.
type Options struct {
	// SegmentMaxAge is the Cache-Control max-age of media segments and
	// init segments. Default 24 h.
	SegmentMaxAge time.Duration
	// ManifestMaxAge is the Cache-Control max-age of manifests and
	// playlists. Default 60 s.
	ManifestMaxAge time.Duration
	// Logger receives request errors. Nil: slog.Default().
	Logger *slog.Logger
	// Fallback, if set, answers the object requests the capacity tier
	// does not hold (or whose path is not a valid object) when it
	// handles their path: the edge, for titles an upstream holds.
	Fallback Fallback
}

// A Fallback answers requests of the paths it handles.
type Fallback interface {
	http.Handler
	// Handles reports whether the fallback answers the (escaped) path.
	Handles(path string) bool
}

// EnsureDefaults fills zero fields with defaults and returns o.
func (o *Options) EnsureDefaults() *Options {
	if o.SegmentMaxAge == 0 {
		o.SegmentMaxAge = 24 * time.Hour
	}
	if o.ManifestMaxAge == 0 {
		o.ManifestMaxAge = time.Minute
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	return o
}

// Videos is the segment engine's module: the catalog and the objects of
// its titles, the engine's counters at the top level of GET /stats (where
// they have always been) and its metrics with the request latencies.
type Videos struct {
	opts    Options
	log     *slog.Logger
	eng     *engine.Engine
	origin  origin.Origin
	metrics *metrics
	hdr     headerCache
}

// NewVideos returns the videos module over the engine and the capacity
// tier it reads.
func NewVideos(eng *engine.Engine, org origin.Origin, opts Options) *Videos {
	opts.EnsureDefaults()
	return &Videos{opts: opts, log: opts.Logger, eng: eng, origin: org, metrics: newMetrics(eng), hdr: newHeaderCache(opts)}
}

// Mount registers GET /videos, a title's details, the object routes, the engine's stats
// and metrics.
func (s *Videos) Mount(m *httpapi.Mounter) {
	m.Handle("GET /videos", http.HandlerFunc(s.catalog))
	m.Handle(routeTitle, http.HandlerFunc(s.title)) // title.go
	m.Handle(routeTitleFile, http.HandlerFunc(s.object))
	m.Handle(routeObject, http.HandlerFunc(s.object))
	m.HandleFast(videosPrefix, s, routeTitleFile, routeObject) // fast.go
	m.Stats("", func() any { return s.eng.Stats() })
	m.Metrics(s.metrics)
}

// object serves a file of a video with ranges, ETag and Last-Modified
// (http.ServeContent), from whichever tier holds it.
func (s *Videos) object(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	o, err := objectOf(r)
	if err != nil {
		if s.fallBack(w, r) {
			return
		}
		httpapi.Error(w, http.StatusBadRequest, err.Error())
		return
	}
	res, err := s.get(r, o)
	// A flash hit's buffer goes back once the answer is written.
	defer res.Release()
	if (err != nil || res.Tier == tier.Miss) && !hasPrior(r) { // ServeFast noted it
		httpapi.NoteUpstream(r.Context(), time.Since(start)) // for the access log
	}
	if err != nil {
		if errors.Is(err, origin.ErrNotFound) && s.fallBack(w, r) {
			return
		}
		if errors.Is(err, engine.ErrBusy) && r.Context().Err() == nil {
			hitsBusy(w)
			return
		}
		s.objectError(w, r, o, err)
		return
	}
	// The headers are set by direct assignment of shared, immutable
	// values (headers.go): a RAM hit is mostly per-request overhead.
	h := w.Header()
	h["Content-Type"] = s.hdr.contentType(o.Name)
	s.setHeaders(h, r.Context(), o, res)
	h["Etag"] = []string{etag(res.Sum, len(res.Data))}
	if !httpapi.CheckRange(w, r, int64(len(res.Data))) {
		return
	}
	if plain(r) {
		// The common case, a whole object: one write of the bytes, no
		// intermediate copies.
		h["Accept-Ranges"] = acceptRanges
		h["Etag"], h["Content-Length"] = entityFields(res.Sum, len(res.Data))
		if r.Method != http.MethodHead {
			w.Write(res.Data)
		}
	} else {
		body := &engine.GuardedReader{R: bytes.NewReader(res.Data)}
		defer body.Close() // before the Release above
		http.ServeContent(w, r, "", time.Time{}, body)
	}
	s.metrics.observe(res.Tier, time.Since(start))
}

// hitsBusy answers a flash hit that waited in vain for a hit buffer: 503
// with Retry-After (httpapi.Error's).
func hitsBusy(w http.ResponseWriter) {
	httpapi.Error(w, http.StatusServiceUnavailable, "too many answers from flash are being sent; retry later")
}

// setHeaders sets the header fields of an object's answer that depend on
// neither the request's range nor its preconditions: Cache-Control,
// X-Strata-Tier and Last-Modified. The values are shared, immutable ones
// (headers.go): a RAM hit is mostly per-request overhead.
func (s *Videos) setHeaders(h http.Header, ctx context.Context, o ident.Object, res engine.Result) {
	s.setFields(h, o, res, s.hdr.lastModified(s.modified(ctx, o.Video)))
}

// setFields is setHeaders with the Last-Modified field's value lm (nil:
// none).
func (s *Videos) setFields(h http.Header, o ident.Object, res engine.Result, lm []string) {
	h["Cache-Control"] = s.hdr.cacheControl(o.Name)
	h["X-Strata-Tier"] = tierHeader(res.Tier)
	// Last-Modified is the title's version, which need not be these
	// bytes' (a request racing a re-ingest), so it is informational:
	// preconditions are decided by the ETag alone. ServeContent gets no
	// time, so If-Modified-Since and a date in If-Range are ignored (a
	// full response, never a 304 or a range spliced onto other bytes).
	if lm != nil {
		h["Last-Modified"] = lm
	}
}

// fallBack hands r to the fallback if it handles r's path.
func (s *Videos) fallBack(w http.ResponseWriter, r *http.Request) bool {
	if s.opts.Fallback == nil || !s.opts.Fallback.Handles(r.URL.EscapedPath()) {
		return false
	}
	s.opts.Fallback.ServeHTTP(w, r)
	return true
}

// plain reports whether r asks for a whole object unconditionally, so that
// http.ServeContent's range and precondition handling is not needed.
func plain(r *http.Request) bool {
	h := r.Header
	return h.Get("Range") == "" && h.Get("If-None-Match") == "" && h.Get("If-Modified-Since") == "" &&
		h.Get("If-Match") == "" && h.Get("If-Unmodified-Since") == ""
}

// objectOf validates the path's ids.
func objectOf(r *http.Request) (ident.Object, error) {
	p := r.PathValue("video") + "/" + r.PathValue("name")
	if rend := r.PathValue("rendition"); rend != "" {
		p = r.PathValue("video") + "/" + rend + "/" + r.PathValue("name")
	}
	return ident.ParseObject(p)
}

// objectError answers a failed read of o, or aborts the answer when the
// client has gone (never net/http's implicit empty 200).
func (s *Videos) objectError(w http.ResponseWriter, r *http.Request, o ident.Object, err error) {
	httpapi.AbortIfGone(r)
	if hasPrior(r) && errors.Is(err, context.Canceled) {
		// The fast path's read (ServeFast), under the Front's context,
		// was canceled: the client hung up on the Front. The request
		// handed over with that answer has net/http's context, which may
		// not have seen the hang-up yet.
		panic(http.ErrAbortHandler)
	}
	if CapacityError(w, httpapi.ClipID(o.String()), err) != http.StatusNotFound {
		s.log.Warn("capacity tier read failed", "object", o.String(), "err", err)
	}
}

// tierName is the X-Strata-Tier header: ram, ssd or origin.
func tierName(t tier.Tier) string {
	if t == tier.Miss {
		return "origin"
	}
	return t.String()
}

// modified is the title's modification time, the zero time if unknown.
func (s *Videos) modified(ctx context.Context, video string) time.Time {
	t, err := s.origin.Title(ctx, video)
	if err != nil {
		return time.Time{}
	}
	return t.Modified
}

// etag names an object's bytes: their digest (engine.Digest, computed
// when they entered RAM or were read from flash) and length. Deriving it
// from the title's version instead would let a request that races a
// re-ingest pair the old bytes still cached with the new version's tag,
// and a client revalidating those bytes would keep them for max-age.
func etag(sum uint64, n int) string {
	var b [40]byte
	return string(appendETag(b[:0], sum, n))
}

// appendETag appends etag(sum, n) to t.
func appendETag(t []byte, sum uint64, n int) []byte {
	t = append(t, '"')
	const zeros = "0000000000000000"
	if sum < 1<<60 { // %016x: pad to 16 hex digits
		w := 1
		for v := sum >> 4; v != 0; v >>= 4 {
			w++
		}
		t = append(t, zeros[:16-w]...)
	}
	t = strconv.AppendUint(t, sum, 16)
	t = append(t, '-')
	t = strconv.AppendUint(t, uint64(n), 16)
	return append(t, '"')
}

// catalog lists the titles as strata bench reads them.
func (s *Videos) catalog(w http.ResponseWriter, r *http.Request) {
	titles, err := s.origin.Catalog(r.Context())
	if err != nil {
		httpapi.AbortIfGone(r)
		s.log.Warn("capacity tier catalog failed", "err", err)
		CapacityError(w, "the catalog", err)
		return
	}
	if titles == nil {
		titles = []origin.Title{}
	}
	writeJSON(w, http.StatusOK, struct {
		Titles []origin.Title `json:"titles"`
	}{titles})
}

// writeJSON writes v as indented JSON, never cached.
func writeJSON(w http.ResponseWriter, code int, v any) {
	httpapi.Write(w, code, "no-store", v) //nolint:errcheck // the status is sent
}
