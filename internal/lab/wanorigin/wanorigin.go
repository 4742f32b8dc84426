// Package wanorigin is a neutral HTTP origin for benchmarking caches side
// by side: it serves a synthetic DASH library generated on the
// fly, with a configurable delay before each response and a configurable
// bandwidth per response and for the whole link, as an origin tens of
// milliseconds away over a WAN would. Its responses carry only standard
// fields (Cache-Control, ETag, Last-Modified, Content-Length, ranges), so
// every cache in front of it sees the same origin; its own counters, read
// at /origin/stats, say how many requests and bytes reached it.
package wanorigin

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/strata-media/strata/internal/ident"
	"github.com/strata-media/strata/internal/storage/origin"
	"github.com/strata-media/strata/internal/workload"
)

// StatsPath is where the origin's counters are read. It is not under
// /videos, so a cache in front never needs to forward it.
const StatsPath = "/origin/stats"

// Options configure a Server. The zero value of a field means its default.
type Options struct {
	// Delay is added before each response's header (the WAN round trip
	// and the origin's own latency). Default 0.
	Delay time.Duration
	// Bandwidth caps each response's body, in bytes/s (one TCP flow over
	// a long path). 0: no cap.
	Bandwidth float64
	// Link caps all responses together, in bytes/s (the origin's uplink).
	// 0: no cap.
	Link float64
	// MaxAge is the Cache-Control max-age of the media. Default 1 day.
	MaxAge time.Duration
	// CatalogMaxAge is the max-age of the catalog (GET /videos).
	// Default 1 s.
	CatalogMaxAge time.Duration
	// MaxInflight bounds the responses being generated at once; more get
	// 503 (bounded memory). Default 512.
	MaxInflight int
}

// Defaults for Options' zero fields.
const (
	defaultMaxAge        = 24 * time.Hour
	defaultCatalogMaxAge = time.Second
	DefaultMaxInflight   = 512
)

// EnsureDefaults fills the zero fields of o.
func (o *Options) EnsureDefaults() {
	if o.MaxAge == 0 {
		o.MaxAge = defaultMaxAge
	}
	if o.CatalogMaxAge == 0 {
		o.CatalogMaxAge = defaultCatalogMaxAge
	}
	if o.MaxInflight == 0 {
		o.MaxInflight = DefaultMaxInflight
	}
}

// A Library is the synthetic DASH library: several datasets (one per
// segment duration) served as one catalog.
type Library struct {
	parts   []*origin.Synthetic
	catalog []origin.Title // interleaved: title i of every part, then i+1
	byID    map[string]*origin.Synthetic
	bytes   int64
}

// LibraryOptions describe a Library.
type LibraryOptions struct {
	// TitlesPerDuration is the number of titles of each segment duration.
	TitlesPerDuration int
	// SegmentDurations, one dataset each (FlashStream's 2-10 s).
	SegmentDurations []time.Duration
	// MaxLength caps each title's length (the sources run 10 to 97 min).
	MaxLength time.Duration
	// Seed selects the library.
	Seed uint64
}

// NewLibrary builds the library: per segment duration d, a dataset of the
// DASH sources (five renditions each) named "d<seconds>s-NNNN".
func NewLibrary(o LibraryOptions) (*Library, error) {
	if o.TitlesPerDuration <= 0 || len(o.SegmentDurations) == 0 {
		return nil, errors.New("wanorigin: a library needs titles and segment durations")
	}
	l := &Library{byID: make(map[string]*origin.Synthetic)}
	var lists [][]origin.Title
	for _, d := range o.SegmentDurations {
		if d <= 0 {
			return nil, fmt.Errorf("wanorigin: segment duration %v must be > 0", d)
		}
		ds := workload.NewDataset(workload.DatasetOptions{
			Titles: o.TitlesPerDuration, AllRenditions: true, SegmentDuration: d,
			MaxLength: o.MaxLength, Seed: o.Seed, Prefix: fmt.Sprintf("d%gs-", d.Seconds()),
		})
		syn, err := origin.NewSynthetic(ds, origin.SyntheticOptions{Seed: o.Seed})
		if err != nil {
			return nil, err
		}
		titles, _ := syn.Catalog(context.Background())
		for _, t := range titles {
			l.byID[t.ID] = syn
		}
		l.parts = append(l.parts, syn)
		lists = append(lists, titles)
		l.bytes += ds.TotalBytes()
	}
	for i := range o.TitlesPerDuration {
		for _, list := range lists {
			l.catalog = append(l.catalog, list[i])
		}
	}
	return l, nil
}

// Titles lists the catalog in its order (the load generator's popularity
// rank).
func (l *Library) Titles() []origin.Title { return slices.Clone(l.catalog) }

// Bytes is the size of every segment of the library.
func (l *Library) Bytes() int64 { return l.bytes }

// get returns the bytes of o and their modification time.
func (l *Library) get(ctx context.Context, o ident.Object) ([]byte, time.Time, error) {
	syn, ok := l.byID[o.Video]
	if !ok {
		return nil, time.Time{}, origin.ErrNotFound
	}
	obj, err := syn.Get(ctx, o)
	return obj.Data, obj.Modified, err
}

// Stats are the origin's counters since it started.
type Stats struct {
	// Requests counts every request answered, catalog and errors included.
	Requests int64 `json:"requests"`
	// Bytes counts the body bytes written.
	Bytes int64 `json:"bytes"`
	// Segments and SegmentBytes count media segment responses (200 and 206).
	Segments     int64 `json:"segments"`
	SegmentBytes int64 `json:"segment_bytes"`
	// SegmentFetches counts the segment responses that start at the first
	// byte (whole, or a range from 0): one per object a cache fetched, even
	// when it fetches an object in slices (nginx's slice module).
	SegmentFetches int64 `json:"segment_fetches"`
	// NotModified counts 304 answers to conditional requests.
	NotModified int64 `json:"not_modified"`
	// Rejected counts 503 answers beyond MaxInflight.
	Rejected int64 `json:"rejected"`
	// LibraryBytes is the size of the library (constant).
	LibraryBytes int64 `json:"library_bytes"`
}

// server is the origin's http.Handler.
type server struct {
	lib      *Library
	opts     Options
	link     *link
	inflight chan struct{}
	catalog  []byte

	requests, bytes, segments, segmentBytes, segmentFetches, notModified, rejected atomic.Int64
}

// New serves lib with opts.
func New(lib *Library, opts Options) (*server, error) {
	opts.EnsureDefaults()
	if opts.Delay < 0 || opts.Bandwidth < 0 || opts.Link < 0 || opts.MaxInflight < 0 {
		return nil, errors.New("wanorigin: negative delay, bandwidth, link or max in flight")
	}
	cat, err := json.Marshal(map[string]any{"titles": lib.catalog})
	if err != nil {
		return nil, err
	}
	return &server{lib: lib, opts: opts, link: newLink(opts.Link), inflight: make(chan struct{}, opts.MaxInflight), catalog: cat}, nil
}

// Stats returns the counters.
func (s *server) Stats() Stats {
	return Stats{
		Requests: s.requests.Load(), Bytes: s.bytes.Load(), Segments: s.segments.Load(),
		SegmentBytes: s.segmentBytes.Load(), SegmentFetches: s.segmentFetches.Load(), NotModified: s.notModified.Load(),
		Rejected: s.rejected.Load(), LibraryBytes: s.lib.bytes,
	}
}

func (s *server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.requests.Add(1)
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	switch {
	case r.URL.Path == StatsPath:
		w.Header().Set("Cache-Control", "no-store")
		writeJSON(w, s.Stats())
	case r.URL.Path == "/videos" || r.URL.Path == "/videos/":
		s.serveCatalog(w, r)
	case strings.HasPrefix(r.URL.Path, "/videos/"):
		s.serveObject(w, r, strings.TrimPrefix(r.URL.Path, "/videos/"))
	default:
		http.NotFound(w, r)
	}
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(v)
}

func (s *server) serveCatalog(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", maxAge(s.opts.CatalogMaxAge))
	w.Header().Set("Content-Length", fmt.Sprint(len(s.catalog)))
	if r.Method == http.MethodGet {
		n, _ := w.Write(s.catalog)
		s.bytes.Add(int64(n))
	}
}

func maxAge(d time.Duration) string {
	return fmt.Sprintf("public, max-age=%d", int64(d/time.Second))
}

// serveObject answers one file of the library after the delay, its body
// paced by the bandwidth and the link.
func (s *server) serveObject(w http.ResponseWriter, r *http.Request, path string) {
	o, err := ident.ParseObject(path)
	if err != nil {
		http.Error(w, "bad object path", http.StatusBadRequest)
		return
	}
	select {
	case s.inflight <- struct{}{}:
		defer func() { <-s.inflight }()
	default:
		s.rejected.Add(1)
		w.Header().Set("Retry-After", "1")
		http.Error(w, "origin busy", http.StatusServiceUnavailable)
		return
	}
	data, modified, err := s.lib.get(r.Context(), o)
	if err != nil {
		if errors.Is(err, origin.ErrNotFound) || errors.Is(err, ident.ErrInvalid) {
			http.NotFound(w, r)
			return
		}
		http.Error(w, "origin error", http.StatusInternalServerError)
		return
	}
	if !sleep(r.Context(), s.opts.Delay) {
		return
	}
	h := w.Header()
	h.Set("Cache-Control", maxAge(s.opts.MaxAge))
	h.Set("ETag", etag(o, len(data), modified))
	h.Set("Content-Type", contentType(o.Name))
	pw := &pacedWriter{ResponseWriter: w, ctx: r.Context(), perFlow: s.opts.Bandwidth, link: s.link, start: time.Now()}
	http.ServeContent(pw, r, "", modified, bytes.NewReader(data))
	s.bytes.Add(pw.n)
	switch {
	case pw.status == http.StatusNotModified:
		s.notModified.Add(1)
	case isSegment(o.Name) && (pw.status == http.StatusOK || pw.status == http.StatusPartialContent):
		s.segments.Add(1)
		s.segmentBytes.Add(pw.n)
		if rg := r.Header.Get("Range"); pw.status == http.StatusOK || strings.HasPrefix(rg, "bytes=0-") {
			s.segmentFetches.Add(1)
		}
	}
}

// etag is a strong validator of one object's bytes: they are a function of
// its path, size and the library's modification time.
func etag(o ident.Object, size int, modified time.Time) string {
	h := uint64(14695981039346656037)
	for _, c := range []byte(o.Path()) {
		h = (h ^ uint64(c)) * 1099511628211
	}
	return fmt.Sprintf(`"%x-%x-%x"`, h, size, modified.Unix())
}

func contentType(name string) string {
	switch {
	case strings.HasSuffix(name, ".m4s"):
		return "video/iso.segment"
	case strings.HasSuffix(name, ".mpd"):
		return "application/dash+xml"
	case strings.HasSuffix(name, ".m3u8"):
		return "application/vnd.apple.mpegurl"
	}
	return "application/octet-stream"
}

// sleep waits d or until ctx ends; it reports whether d passed.
func sleep(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// chunk is the unit the body is paced in.
const chunk = 32 << 10

// pacedWriter writes a body in chunks, each no sooner than the response's
// own bandwidth and the shared link allow.
type pacedWriter struct {
	http.ResponseWriter
	ctx     context.Context
	perFlow float64
	link    *link
	start   time.Time
	n       int64
	status  int
}

func (p *pacedWriter) WriteHeader(code int) {
	if p.status == 0 {
		p.status = code
	}
	p.ResponseWriter.WriteHeader(code)
}

func (p *pacedWriter) Write(b []byte) (int, error) {
	if p.status == 0 {
		p.status = http.StatusOK
	}
	written := 0
	for len(b) > 0 {
		c := b[:min(len(b), chunk)]
		due := p.link.reserve(time.Now(), len(c))
		if p.perFlow > 0 {
			due = later(due, p.start.Add(seconds(float64(p.n+int64(len(c)))/p.perFlow)))
		}
		if !sleep(p.ctx, time.Until(due)) {
			return written, p.ctx.Err()
		}
		n, err := p.ResponseWriter.Write(c)
		written += n
		p.n += int64(n)
		if err != nil {
			return written, err
		}
		b = b[len(c):]
	}
	return written, nil
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

func seconds(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

// link is a shared pipe of a fixed rate: chunks take turns, first come
// first served.
type link struct {
	rate float64 // bytes/s; 0: unlimited
	mu   sync.Mutex
	next time.Time // when the link is free
}

func newLink(rate float64) *link { return &link{rate: rate} }

// reserve books n bytes on the link from now and returns when they will
// have passed.
func (l *link) reserve(now time.Time, n int) time.Time {
	if l.rate <= 0 {
		return now
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.next = later(l.next, now).Add(seconds(float64(n) / l.rate))
	return l.next
}

func isSegment(name string) bool {
	_, ok := ident.SegmentNumber(name)
	return ok
}
