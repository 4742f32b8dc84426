package httpapi

import (
	"bytes"
	"compress/gzip"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"sync"
)

// CompressOptions configure Compress.
type CompressOptions struct {
	// SkipPrefixes are request path prefixes never compressed, whatever
	// their media type: the whole-file tier's /files/, whose files are
	// served as stored (and a .json file there is a file, not an API).
	SkipPrefixes []string
	// MinSize is the smallest body compressed, bytes, when the handler
	// says its length: below it gzip's 18-byte frame and the CPU are not
	// worth it. Default 1024.
	MinSize int64
	// Level is the gzip level, 1-9. Default gzip.BestSpeed: on the
	// bodies compressed here (a few KiB) level 6 saves a few percent
	// more bytes but costs about ten times the CPU, most of it clearing
	// its larger match tables at every response (BENCHMARKS.md).
	Level int
	// PassHeader names a response field that marks a response to send as
	// it is, without compression or Vary: the edge's X-Strata-Cache, on
	// the responses of an upstream it forwards (a cache in the middle
	// does not transform them). Empty: none.
	PassHeader string
}

// GzipSuffix marks the entity tag of a gzip-encoded response: a strong
// tag names bytes, and the compressed bytes are not the identity ones
// (RFC 9110 §8.8.3), so "abc" becomes "abc-strata-gzip" (Apache's
// mod_deflate appends "-gzip"; a suffix of our own leaves the tags of an
// Apache upstream behind the edge alone).
const GzipSuffix = "-strata-gzip"

// compressible are the media types compressed: manifests, playlists,
// JSON (IIIF info.json included) and text. Media (video, audio, images)
// is already compressed and is never in this list.
var compressible = map[string]bool{
	"application/dash+xml":          true,
	"application/vnd.apple.mpegurl": true,
	"application/x-mpegurl":         true,
	"audio/mpegurl":                 true,
	"application/json":              true,
	"application/ld+json":           true,
	"application/problem+json":      true,
	"application/xml":               true,
	"application/javascript":        true,
	"text/html":                     true,
	"text/plain":                    true,
	"text/css":                      true,
	"text/vtt":                      true,
	"text/xml":                      true,
	"text/javascript":               true,
}

// Compressible reports whether responses of the media type ct (a
// Content-Type value) are gzip-compressed for the clients that accept it.
func Compressible(ct string) bool {
	if !strings.ContainsAny(ct, "; \t") && strings.ToLower(ct) == ct {
		// A bare lower-case type, as the server's own responses have:
		// the table decides without parsing (mime.ParseMediaType
		// allocates a map on every call, and every response asks).
		return compressible[ct]
	}
	mt, _, err := mime.ParseMediaType(ct)
	return err == nil && compressible[mt]
}

// Compress wraps h so that its 200 responses of a Compressible media type
// are gzip-encoded for a GET or HEAD whose Accept-Encoding allows gzip and
// which asks for no range; every response of such a type says Vary:
// Accept-Encoding, so that caches in front keep the encodings apart. The
// ETag of an encoded response gets GzipSuffix, and an If-None-Match
// naming it reaches h without it, so that revalidation still ends in a
// 304. A response with a Content-Encoding or a Content-Range is left as
// is.
func Compress(h http.Handler, o CompressOptions) http.Handler {
	if o.MinSize == 0 {
		o.MinSize = 1024
	}
	if o.Level == 0 {
		o.Level = gzip.BestSpeed
	}
	pool := &sync.Pool{New: func() any {
		z, err := gzip.NewWriterLevel(io.Discard, o.Level)
		if err != nil {
			z = gzip.NewWriter(io.Discard)
		}
		return z
	}}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for _, p := range o.SkipPrefixes {
			if strings.HasPrefix(r.URL.Path, p) {
				h.ServeHTTP(w, r)
				return
			}
		}
		if !compressRequest(r) {
			vw := &varyWriter{ResponseWriter: w, o: &o}
			h.ServeHTTP(vw, r)
			if !vw.wrote { // a HEAD answered with headers only
				vw.WriteHeader(http.StatusOK)
			}
			return
		}
		gw := &gzipWriter{ResponseWriter: w, o: &o, pool: pool, head: r.Method == http.MethodHead}
		r, gw.stripped = stripGzipTags(r)
		defer gw.close()
		h.ServeHTTP(gw, r)
		if !gw.wrote { // as net/http does when the handler returns
			gw.WriteHeader(http.StatusOK)
		}
	})
}

// compressRequest reports whether r may get a gzip-encoded answer.
func compressRequest(r *http.Request) bool {
	if r.Method != http.MethodGet && r.Method != http.MethodHead || r.Header.Get("Range") != "" {
		return false
	}
	return AcceptsGzip(r.Header.Values("Accept-Encoding"))
}

// AcceptsGzip reports whether Accept-Encoding values allow gzip: "gzip"
// (or "x-gzip", or "*" when gzip is not named) with a q-value above 0
// (RFC 9110 §12.5.3).
func AcceptsGzip(values []string) bool {
	star := false
	for _, v := range values {
		for item := range strings.SplitSeq(v, ",") {
			name, params, _ := strings.Cut(item, ";")
			name = strings.ToLower(strings.TrimSpace(name))
			ok := qAbove0(params)
			switch name {
			case "gzip", "x-gzip":
				return ok
			case "*":
				star = ok
			}
		}
	}
	return star
}

// qAbove0 reports whether an Accept-Encoding item's parameters leave its
// q-value above 0.
func qAbove0(params string) bool {
	for p := range strings.SplitSeq(params, ";") {
		k, v, _ := strings.Cut(strings.TrimSpace(p), "=")
		if strings.EqualFold(strings.TrimSpace(k), "q") {
			q, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			return err == nil && q > 0
		}
	}
	return true
}

// stripGzipTags returns r with GzipSuffix taken off the entity tags of
// its If-None-Match, and whether there was one.
func stripGzipTags(r *http.Request) (*http.Request, bool) {
	inm := r.Header.Get("If-None-Match")
	if !strings.Contains(inm, GzipSuffix+`"`) {
		return r, false
	}
	r2 := new(http.Request)
	*r2 = *r
	r2.Header = r.Header.Clone()
	r2.Header.Set("If-None-Match", strings.ReplaceAll(inm, GzipSuffix+`"`, `"`))
	return r2, true
}

// gzipTag is the entity tag of the gzip encoding of the bytes tag names.
func gzipTag(tag string) string {
	if !strings.HasSuffix(tag, `"`) || strings.HasSuffix(tag, GzipSuffix+`"`) {
		return tag
	}
	return tag[:len(tag)-1] + GzipSuffix + `"`
}

// passed reports whether h marks a response to send as it is.
func (o *CompressOptions) passed(h http.Header) bool {
	return o.PassHeader != "" && h.Get(o.PassHeader) != ""
}

// addVary adds Accept-Encoding to h's Vary if a compressible response
// does not name it yet.
func addVary(h http.Header) {
	if !Compressible(h.Get("Content-Type")) {
		return
	}
	for _, v := range h.Values("Vary") {
		for f := range strings.SplitSeq(v, ",") {
			if f = strings.TrimSpace(f); f == "*" || strings.EqualFold(f, "Accept-Encoding") {
				return
			}
		}
	}
	h.Add("Vary", "Accept-Encoding")
}

// varyWriter answers a request that cannot be compressed: as is, but with
// the Vary of a compressible response.
type varyWriter struct {
	http.ResponseWriter
	o     *CompressOptions
	wrote bool
}

func (v *varyWriter) WriteHeader(code int) {
	if !v.wrote && code >= 200 {
		v.wrote = true
		if !v.o.passed(v.Header()) {
			addVary(v.Header())
		}
	}
	v.ResponseWriter.WriteHeader(code)
}

func (v *varyWriter) Write(p []byte) (int, error) {
	if !v.wrote {
		v.WriteHeader(http.StatusOK)
	}
	return v.ResponseWriter.Write(p)
}

// ReadFrom keeps the connection's sendfile path.
func (v *varyWriter) ReadFrom(r io.Reader) (int64, error) {
	if !v.wrote {
		v.WriteHeader(http.StatusOK)
	}
	return readFrom(v.ResponseWriter, r)
}

func (v *varyWriter) Flush() {
	if !v.wrote {
		v.WriteHeader(http.StatusOK)
	}
	http.NewResponseController(v.ResponseWriter).Flush() //nolint:errcheck // as http.Flusher
}

// Unwrap lets http.ResponseController reach the connection's writer.
func (v *varyWriter) Unwrap() http.ResponseWriter { return v.ResponseWriter }

// readFrom copies r to w, through w's ReadFrom if it has one.
func readFrom(w io.Writer, r io.Reader) (int64, error) {
	if rf, ok := w.(io.ReaderFrom); ok {
		return rf.ReadFrom(r)
	}
	return io.Copy(struct{ io.Writer }{w}, r)
}

// maxBufferedGzip is the largest identity body (its Content-Length)
// whose encoding is held whole, to be sent with its Content-Length: a
// manifest or a playlist. Chunked, the answer would end only with its
// last chunk (after the handler returns), which keeps a connection from
// going back to the Front (Front.Wrap); with a length, clients also see
// its size. Larger or unknown bodies are streamed.
const maxBufferedGzip = 1 << 20

// gzipBuffers are the buffers of the encodings held whole.
var gzipBuffers = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// gzipWriter decides at the response's header whether to compress it.
type gzipWriter struct {
	http.ResponseWriter
	o        *CompressOptions
	pool     *sync.Pool
	head     bool
	stripped bool // If-None-Match named a gzip tag
	wrote    bool
	gz       *gzip.Writer // nil: the body goes as is
	// held is the encoding so far, with the header not sent yet (code),
	// while the whole body may be held (maxBufferedGzip); nil once
	// streaming.
	held *bytes.Buffer
	code int
}

func (g *gzipWriter) WriteHeader(code int) {
	if g.wrote || code < 200 {
		g.ResponseWriter.WriteHeader(code)
		return
	}
	g.wrote = true
	g.decide(code)
	if g.held == nil {
		g.ResponseWriter.WriteHeader(code)
	}
}

// gzipSink is where the compressor writes: the held buffer, or the
// response once streaming.
type gzipSink struct{ g *gzipWriter }

func (s gzipSink) Write(p []byte) (int, error) {
	if s.g.held != nil {
		return s.g.held.Write(p)
	}
	return s.g.ResponseWriter.Write(p)
}

// stream sends the header and what is held, and streams from then on.
func (g *gzipWriter) stream() {
	if g.held == nil {
		return
	}
	b := g.held
	g.held = nil
	g.ResponseWriter.WriteHeader(g.code)
	g.ResponseWriter.Write(b.Bytes()) //nolint:errcheck // a write error shows in the next Write
	b.Reset()
	gzipBuffers.Put(b)
}

// decide sets the headers of an encoded response, or of one sent as is.
func (g *gzipWriter) decide(code int) {
	h := g.Header()
	if g.o.passed(h) {
		return
	}
	addVary(h)
	if code == http.StatusNotModified {
		if g.stripped { // the client holds the gzip encoding
			if et := h.Get("ETag"); et != "" {
				h.Set("ETag", gzipTag(et))
			}
		}
		return
	}
	if code != http.StatusOK || !Compressible(h.Get("Content-Type")) || h.Get("Content-Encoding") != "" ||
		h.Get("Content-Range") != "" || g.small(h.Get("Content-Length")) {
		return
	}
	n, err := strconv.ParseInt(h.Get("Content-Length"), 10, 64)
	hold := err == nil && n <= maxBufferedGzip
	h.Del("Content-Length")
	h.Del("Accept-Ranges") // ranges are of the identity bytes only
	h.Set("Content-Encoding", "gzip")
	if et := h.Get("ETag"); et != "" {
		h.Set("ETag", gzipTag(et))
	}
	if !g.head {
		g.gz = g.pool.Get().(*gzip.Writer)
		g.gz.Reset(gzipSink{g})
		if hold {
			g.held, g.code = gzipBuffers.Get().(*bytes.Buffer), code
		}
	}
}

// small reports whether a Content-Length is below MinSize.
func (g *gzipWriter) small(cl string) bool {
	n, err := strconv.ParseInt(cl, 10, 64)
	return err == nil && n < g.o.MinSize
}

func (g *gzipWriter) Write(p []byte) (int, error) {
	if !g.wrote {
		if g.Header().Get("Content-Type") == "" {
			g.Header().Set("Content-Type", http.DetectContentType(p))
		}
		g.WriteHeader(http.StatusOK)
	}
	if g.head && g.Header().Get("Content-Encoding") == "gzip" {
		return len(p), nil // net/http discards a HEAD's body too
	}
	if g.gz != nil {
		return g.gz.Write(p)
	}
	return g.ResponseWriter.Write(p)
}

// ReadFrom keeps the connection's sendfile path for what is not encoded.
func (g *gzipWriter) ReadFrom(r io.Reader) (int64, error) {
	if !g.wrote {
		g.WriteHeader(http.StatusOK)
	}
	if g.gz != nil {
		return io.Copy(g.gz, r)
	}
	return readFrom(g.ResponseWriter, r)
}

// Flush sends what the compressor holds, then flushes the response.
func (g *gzipWriter) Flush() {
	if !g.wrote {
		g.WriteHeader(http.StatusOK)
	}
	if g.gz != nil {
		g.gz.Flush() //nolint:errcheck // a write error shows in the next Write
	}
	g.stream()                                           // a flush sends what there is: no length then
	http.NewResponseController(g.ResponseWriter).Flush() //nolint:errcheck // as http.Flusher
}

// Unwrap lets http.ResponseController reach the connection's writer.
func (g *gzipWriter) Unwrap() http.ResponseWriter { return g.ResponseWriter }

// close ends the gzip stream.
func (g *gzipWriter) close() {
	if g.gz == nil {
		return
	}
	g.gz.Close() //nolint:errcheck // the handler has returned; nobody to tell
	g.gz.Reset(io.Discard)
	g.pool.Put(g.gz)
	g.gz = nil
	if b := g.held; b != nil {
		g.Header().Set("Content-Length", strconv.Itoa(b.Len()))
		g.stream()
	}
}
