// Package server is Strata's HTTP API: objects with ranges and conditional
// requests, the catalog, statistics, Prometheus metrics and the admin
// endpoints, over the engine and the capacity tier.
package server

import (
	"bytes"
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"mime"
	"net/http"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/strata-media/strata/internal/core/tier"
	"github.com/strata-media/strata/internal/ident"
	"github.com/strata-media/strata/internal/node/engine"
	"github.com/strata-media/strata/internal/node/httpapi"
	"github.com/strata-media/strata/internal/storage/origin"
)

// Options configure a Server.
type Options struct {
	// AdminToken is the bearer token of the write and admin endpoints.
	// Empty disables them.
	AdminToken string
	// SegmentMaxAge is the Cache-Control max-age of media segments and
	// init segments. Default 24 h.
	SegmentMaxAge time.Duration
	// ManifestMaxAge is the Cache-Control max-age of manifests and
	// playlists. Default 60 s.
	ManifestMaxAge time.Duration
	// Logger receives request errors. Nil: slog.Default().
	Logger *slog.Logger
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

// Server serves Strata's HTTP API.
type Server struct {
	opts    Options
	log     *slog.Logger
	eng     *engine.Engine
	origin  origin.Origin
	metrics *metrics
	mux     *http.ServeMux
	extra   map[string]func() any // more sections of /stats
}

// New returns a server over the engine and the capacity tier it reads.
func New(eng *engine.Engine, org origin.Origin, opts Options) *Server {
	opts.EnsureDefaults()
	s := &Server{opts: opts, log: opts.Logger, eng: eng, origin: org, mux: http.NewServeMux()}
	s.metrics = newMetrics(eng)
	s.routes()
	return s
}

// Handle registers an extra route (uploads, images) on the server's mux.
func (s *Server) Handle(pattern string, h http.Handler) { s.mux.Handle(pattern, h) }

// AddStats adds a section to GET /stats, filled by fn at each request.
func (s *Server) AddStats(name string, fn func() any) {
	if s.extra == nil {
		s.extra = make(map[string]func() any)
	}
	s.extra[name] = fn
}

// RegisterMetrics adds a Prometheus collector to GET /metrics.
func (s *Server) RegisterMetrics(c prometheus.Collector) error { return s.metrics.reg.Register(c) }

// Handler returns the server's root handler.
func (s *Server) Handler() http.Handler { return s.mux }

func (s *Server) routes() {
	s.mux.HandleFunc("GET /{$}", s.dashboard)
	s.mux.HandleFunc("GET /videos", s.catalog)
	s.mux.HandleFunc("GET /videos/{video}/{name}", s.object)
	s.mux.HandleFunc("GET /videos/{video}/{rendition}/{name}", s.object)
	s.mux.HandleFunc("GET /stats", s.stats)
	s.mux.Handle("GET /metrics", s.metrics.handler())
	s.mux.Handle("POST /admin/invalidate/{video}", s.RequireToken(http.HandlerFunc(s.invalidate)))
}

// object serves a file of a video with ranges, ETag and Last-Modified
// (http.ServeContent), from whichever tier holds it.
func (s *Server) object(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	o, err := objectOf(r)
	if err != nil {
		httpError(w, http.StatusBadRequest, err)
		return
	}
	res, err := s.eng.Get(r.Context(), o)
	if err != nil {
		s.objectError(w, r, o, err)
		return
	}
	h := w.Header()
	h.Set("Content-Type", contentType(o.Name))
	h.Set("Cache-Control", s.cacheControl(o.Name))
	h.Set("X-Strata-Tier", tierName(res.Tier))
	modified := s.modified(r.Context(), o.Video)
	h.Set("ETag", etag(res.Sum, len(res.Data)))
	// Last-Modified is the title's version, which need not be these
	// bytes' (a request racing a re-ingest), so it is informational:
	// preconditions are decided by the ETag alone. ServeContent gets no
	// time, so If-Modified-Since and a date in If-Range are ignored (a
	// full response, never a 304 or a range spliced onto other bytes).
	if !modified.IsZero() {
		h.Set("Last-Modified", modified.UTC().Format(http.TimeFormat))
	}
	if plain(r) {
		// The common case, a whole object: one write of the bytes, no
		// intermediate copies.
		h.Set("Accept-Ranges", "bytes")
		h.Set("Content-Length", strconv.Itoa(len(res.Data)))
		if r.Method != http.MethodHead {
			w.Write(res.Data)
		}
	} else {
		http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(res.Data))
	}
	s.metrics.observe(res.Tier, time.Since(start))
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

func (s *Server) objectError(w http.ResponseWriter, r *http.Request, o ident.Object, err error) {
	switch {
	case errors.Is(err, origin.ErrNotFound):
		httpError(w, http.StatusNotFound, fmt.Errorf("%s not found", o))
	case r.Context().Err() != nil:
		// The client went away; nobody reads the answer.
	default:
		s.log.Warn("capacity tier read failed", "object", o.String(), "err", err)
		httpError(w, http.StatusBadGateway, fmt.Errorf("capacity tier: %v", err))
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
func (s *Server) modified(ctx context.Context, video string) time.Time {
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
	return fmt.Sprintf(`"%016x-%x"`, sum, n)
}

var contentTypes = map[string]string{
	".m4s":  "video/iso.segment",
	".mp4":  "video/mp4",
	".m4a":  "audio/mp4",
	".m4v":  "video/mp4",
	".mpd":  "application/dash+xml",
	".m3u8": "application/vnd.apple.mpegurl",
	".ts":   "video/mp2t",
	".json": "application/json",
	".vtt":  "text/vtt",
}

func contentType(name string) string {
	ext := strings.ToLower(path.Ext(name))
	if ct, ok := contentTypes[ext]; ok {
		return ct
	}
	if ct := mime.TypeByExtension(ext); ct != "" {
		return ct
	}
	return "application/octet-stream"
}

func (s *Server) cacheControl(name string) string {
	switch strings.ToLower(path.Ext(name)) {
	case ".mpd", ".m3u8", ".json":
		return fmt.Sprintf("public, max-age=%d", int(s.opts.ManifestMaxAge.Seconds()))
	}
	return fmt.Sprintf("public, max-age=%d", int(s.opts.SegmentMaxAge.Seconds()))
}

// catalog lists the titles as strata bench reads them.
func (s *Server) catalog(w http.ResponseWriter, r *http.Request) {
	titles, err := s.origin.Catalog(r.Context())
	if err != nil {
		httpError(w, http.StatusBadGateway, err)
		return
	}
	if titles == nil {
		titles = []origin.Title{}
	}
	writeJSON(w, http.StatusOK, struct {
		Titles []origin.Title `json:"titles"`
	}{titles})
}

func (s *Server) stats(w http.ResponseWriter, r *http.Request) {
	if len(s.extra) == 0 {
		writeJSON(w, http.StatusOK, s.eng.Stats())
		return
	}
	out := map[string]any{}
	b, _ := json.Marshal(s.eng.Stats())
	json.Unmarshal(b, &out)
	for name, fn := range s.extra {
		out[name] = fn()
	}
	writeJSON(w, http.StatusOK, out)
}

// invalidate makes every cached object of a video unservable, durably: a
// new version of the title replaces the old one (FlashStream §3.2.1).
func (s *Server) invalidate(w http.ResponseWriter, r *http.Request) {
	video := r.PathValue("video")
	if err := ident.ValidName(video); err != nil {
		httpError(w, http.StatusBadRequest, err)
		return
	}
	if err := s.eng.Invalidate(ident.VideoPrefix(video)); err != nil {
		httpError(w, http.StatusInternalServerError, err)
		return
	}
	s.log.Info("invalidated", "video", video)
	writeJSON(w, http.StatusOK, map[string]string{"invalidated": video})
}

// RequireToken wraps h so that it runs only for requests bearing the admin
// token ("Authorization: Bearer <token>").
func (s *Server) RequireToken(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.opts.AdminToken == "" {
			httpError(w, http.StatusForbidden, errors.New("admin endpoints are disabled: no token configured"))
			return
		}
		got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		if !ok || subtle.ConstantTimeCompare([]byte(got), []byte(s.opts.AdminToken)) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="strata"`)
			httpError(w, http.StatusUnauthorized, errors.New("missing or wrong bearer token"))
			return
		}
		h.ServeHTTP(w, r)
	})
}

// writeJSON writes v as indented JSON, never cached.
func writeJSON(w http.ResponseWriter, code int, v any) {
	httpapi.Write(w, code, "no-store", v) //nolint:errcheck // the status is sent
}

// httpError writes err as a JSON error body with status code.
func httpError(w http.ResponseWriter, code int, err error) {
	writeJSON(w, code, map[string]string{"error": err.Error()})
}
