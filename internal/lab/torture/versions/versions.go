// Package versions is an HTTP origin whose objects change while it
// runs, and the check of an answer against it, for the edge's crash
// torture and soak. Every version of an object has bytes derived from
// (path, version) alone: a first line naming the path, the version and
// the size, then bytes of a keyed hash of the offset, so that any answer,
// whole or a range, can be checked byte for byte against the version its
// ETag names, and a body made of two versions, or cut, cannot pass.
//
// The origin remembers when each version was published, so that a check
// can also tell how stale an answer is: the version served must have
// been the current one at some moment of the window the cache was
// allowed (max-age, grace, keep-on-error).
package versions

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Options configure an origin.
type Options struct {
	// Objects is the number of objects, named /v/o000.bin, ... Default 48.
	Objects int
	// Sizes are the objects' base sizes, used in turn (object i has base
	// Sizes[i%len(Sizes)]); a version's size is its base plus up to an
	// eighth more, drawn from the version. Default: 3 KiB, 40 KiB,
	// 300 KiB, 700 KiB, 1.5 MiB.
	Sizes []int64
	// MaxAge is the Cache-Control max-age of every answer, whole seconds.
	// Default 2 s.
	MaxAge time.Duration
	// Seed keys the bytes.
	Seed uint64
}

func (o *Options) ensureDefaults() {
	if o.Objects <= 0 {
		o.Objects = 48
	}
	if len(o.Sizes) == 0 {
		o.Sizes = []int64{3 << 10, 40 << 10, 300 << 10, 700 << 10, 1536 << 10}
	}
	if o.MaxAge <= 0 {
		o.MaxAge = 2 * time.Second
	}
	o.MaxAge = o.MaxAge.Truncate(time.Second)
}

// An Origin serves the objects' current versions over HTTP (GET and HEAD,
// ranges and conditional requests through http.ServeContent) and
// publishes new versions when asked. Its methods are safe for concurrent
// use.
type Origin struct {
	opts  Options
	paths []string

	mu      sync.Mutex // protects objects, srv, addr
	objects map[string]*object
	srv     *http.Server
	addr    string

	// Requests counts the requests answered, NotModified the 304s among
	// them.
	Requests, NotModified atomic.Int64
}

// An object is one path's versions.
type object struct {
	base int64
	// pub[v-1] is when version v was published.
	pub []time.Time
	// body is the current version's bytes.
	body []byte
}

// New returns an origin, every object at version 1, not listening.
func New(opts Options) *Origin {
	opts.ensureDefaults()
	o := &Origin{opts: opts, objects: map[string]*object{}}
	now := time.Now()
	for i := range opts.Objects {
		p := fmt.Sprintf("/v/o%03d.bin", i)
		ob := &object{base: opts.Sizes[i%len(opts.Sizes)], pub: []time.Time{now}}
		o.paths = append(o.paths, p)
		o.objects[p] = ob
		ob.body = o.Body(p, 1)
	}
	return o
}

// Paths are the objects' paths.
func (o *Origin) Paths() []string { return o.paths }

// MaxAge is the max-age every answer carries.
func (o *Origin) MaxAge() time.Duration { return o.opts.MaxAge }

// Start listens on addr ("127.0.0.1:0" for a free port the first time;
// empty: the address of the previous Start) and serves.
func (o *Origin) Start(addr string) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.srv != nil {
		return errors.New("versions: the origin is already serving")
	}
	if addr == "" {
		addr = o.addr
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	o.addr = ln.Addr().String()
	o.srv = &http.Server{Handler: http.HandlerFunc(o.serveHTTP), ReadHeaderTimeout: 10 * time.Second}
	go o.srv.Serve(ln)
	return nil
}

// Stop closes the listener and every connection at once: an outage.
func (o *Origin) Stop() {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.srv != nil {
		o.srv.Close()
		o.srv = nil
	}
}

// URL is the origin's base URL, without a trailing slash.
func (o *Origin) URL() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return "http://" + o.addr
}

// Publish makes a new version of path the current one and returns it.
func (o *Origin) Publish(path string) int {
	o.mu.Lock()
	ob := o.objects[path]
	v := len(ob.pub) + 1
	o.mu.Unlock()
	body := o.Body(path, v) // outside the lock: up to a few MiB
	o.mu.Lock()
	defer o.mu.Unlock()
	if len(ob.pub)+1 != v { // published concurrently: this one is next again
		v = len(ob.pub) + 1
		body = o.Body(path, v)
	}
	ob.pub = append(ob.pub, time.Now())
	ob.body = body
	return v
}

// Churn publishes a new version of a random object every interval
// until ctx is done, and returns the number published.
func (o *Origin) Churn(ctx context.Context, every time.Duration, seed uint64) int {
	rng := rand.New(rand.NewPCG(seed, 0x43485552))
	tick := time.NewTicker(every)
	defer tick.Stop()
	n := 0
	for {
		select {
		case <-ctx.Done():
			return n
		case <-tick.C:
			o.Publish(o.paths[rng.IntN(len(o.paths))])
			n++
		}
	}
}

// Versions is the number of versions published, all objects.
func (o *Origin) Versions() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	n := 0
	for _, ob := range o.objects {
		n += len(ob.pub)
	}
	return n
}

func (o *Origin) serveHTTP(w http.ResponseWriter, r *http.Request) {
	o.mu.Lock()
	ob := o.objects[r.URL.Path]
	var body []byte
	var v int
	var mod time.Time
	if ob != nil {
		body, v, mod = ob.body, len(ob.pub), ob.pub[len(ob.pub)-1]
	}
	o.mu.Unlock()
	o.Requests.Add(1)
	if ob == nil {
		http.NotFound(w, r)
		return
	}
	h := w.Header()
	h.Set("ETag", o.ETag(r.URL.Path, v))
	h.Set("Cache-Control", fmt.Sprintf("max-age=%d", int(o.opts.MaxAge/time.Second)))
	h.Set("Content-Type", "application/octet-stream")
	cw := &codeWriter{ResponseWriter: w}
	http.ServeContent(cw, r, "", mod, bytes.NewReader(body))
	if cw.code == http.StatusNotModified {
		o.NotModified.Add(1)
	}
}

// codeWriter remembers the status written.
type codeWriter struct {
	http.ResponseWriter
	code int
}

func (c *codeWriter) WriteHeader(code int) {
	c.code = code
	c.ResponseWriter.WriteHeader(code)
}

// key is the hash of (seed, path, version) that keys a version's bytes.
func (o *Origin) key(path string, v int) uint64 {
	h := fnv.New64a()
	fmt.Fprintf(h, "%d\x00%s\x00%d", o.opts.Seed, path, v)
	return h.Sum64()
}

// Size is the size of version v of path.
func (o *Origin) Size(path string, v int) int64 {
	o.mu.Lock()
	ob := o.objects[path]
	o.mu.Unlock()
	if ob == nil {
		return 0
	}
	return ob.base + int64(splitmix(o.key(path, v))%uint64(ob.base/8+1))
}

// MinSize is the least size of path's versions.
func (o *Origin) MinSize(path string) int64 {
	o.mu.Lock()
	defer o.mu.Unlock()
	if ob := o.objects[path]; ob != nil {
		return ob.base
	}
	return 0
}

// ETag is version v's entity tag: "v<version>-<key>".
func (o *Origin) ETag(path string, v int) string {
	return fmt.Sprintf(`"v%d-%016x"`, v, o.key(path, v))
}

// Body is the bytes of version v of path.
func (o *Origin) Body(path string, v int) []byte {
	size := o.Size(path, v)
	b := make([]byte, size)
	o.fill(path, v, 0, b)
	return b
}

// head is a version's first line.
func head(path string, v int, size int64) string {
	return fmt.Sprintf("strata-versions %s version %d size %d\n", path, v, size)
}

// fill writes the bytes of version v of path at off into b.
func (o *Origin) fill(path string, v int, off int64, b []byte) {
	k := o.key(path, v)
	hd := head(path, v, o.Size(path, v))
	word, w := int64(-1), uint64(0)
	for i := range b {
		p := off + int64(i)
		if p < int64(len(hd)) {
			b[i] = hd[p]
			continue
		}
		if p/8 != word {
			word, w = p/8, splitmix(k^uint64(p/8))
		}
		b[i] = byte(w >> (8 * (p % 8)))
	}
}

// splitmix is SplitMix64's finalizer.
func splitmix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// ErrWrong marks an answer whose bytes, size or validators are not those
// of one version.
var ErrWrong = errors.New("versions: wrong answer")

func wrongf(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrWrong, fmt.Sprintf(format, args...))
}

// Answer is what a client received for a GET or HEAD of an object.
type Answer struct {
	Path   string
	Method string
	Status int
	Header http.Header
	// ContentLength is the response's (-1 if unknown).
	ContentLength int64
	Body          []byte
}

// Check checks an answer: 200 (the whole body of the version its ETag
// names, or for HEAD its size) or 206 (one range of it), the version's
// Last-Modified, and returns the version.
func (o *Origin) Check(a Answer) (int, error) {
	v, err := o.version(a.Path, a.Header.Get("ETag"))
	if err != nil {
		return 0, err
	}
	o.mu.Lock()
	pub := o.objects[a.Path].pub[v-1]
	o.mu.Unlock()
	if lm := a.Header.Get("Last-Modified"); lm != pub.UTC().Format(http.TimeFormat) {
		return v, wrongf("%s %s: Last-Modified %q, version %d was published %s", a.Method, a.Path, lm, v,
			pub.UTC().Format(http.TimeFormat))
	}
	size := o.Size(a.Path, v)
	switch {
	case a.Status == http.StatusOK && a.Method == http.MethodHead:
		if a.ContentLength != size {
			return v, wrongf("HEAD %s: Content-Length %d, version %d has %d bytes", a.Path, a.ContentLength, v, size)
		}
		return v, nil
	case a.Status == http.StatusOK:
		if int64(len(a.Body)) != size || (a.ContentLength >= 0 && a.ContentLength != size) {
			return v, wrongf("GET %s: 200 with %d bytes (Content-Length %d), version %d has %d", a.Path, len(a.Body),
				a.ContentLength, v, size)
		}
		return v, o.compare(a, v, 0)
	case a.Status == http.StatusPartialContent:
		first, last, total, err := contentRange(a.Header.Get("Content-Range"))
		if err != nil {
			return v, wrongf("GET %s: 206: %v", a.Path, err)
		}
		if total != size || last >= size || int64(len(a.Body)) != last-first+1 {
			return v, wrongf("GET %s: 206 %s with %d bytes, version %d has %d", a.Path,
				a.Header.Get("Content-Range"), len(a.Body), v, size)
		}
		return v, o.compare(a, v, first)
	}
	return v, wrongf("%s %s: status %d", a.Method, a.Path, a.Status)
}

// compare checks a.Body against version v's bytes at off, naming the
// first difference and the version the body's first line names.
func (o *Origin) compare(a Answer, v int, off int64) error {
	want := make([]byte, len(a.Body))
	o.fill(a.Path, v, off, want)
	if bytes.Equal(want, a.Body) {
		return nil
	}
	i := 0
	for i < len(want) && want[i] == a.Body[i] {
		i++
	}
	named := ""
	if off == 0 {
		if line, _, ok := bytes.Cut(a.Body, []byte("\n")); ok && len(line) < 200 {
			named = fmt.Sprintf(" (its first line: %q)", line)
		}
	}
	return wrongf("%s %s: ETag %s (version %d) but byte %d of the %d from offset %d differs%s",
		a.Method, a.Path, a.Header.Get("ETag"), v, off+int64(i), len(a.Body), off, named)
}

// version parses the version out of an ETag of path and checks it is one
// the origin published.
func (o *Origin) version(path, etag string) (int, error) {
	o.mu.Lock()
	ob := o.objects[path]
	n := 0
	if ob != nil {
		n = len(ob.pub)
	}
	o.mu.Unlock()
	if ob == nil {
		return 0, wrongf("%s: not an object of the origin", path)
	}
	s, ok := strings.CutPrefix(etag, `"v`)
	num, _, _ := strings.Cut(s, "-")
	v, err := strconv.Atoi(num)
	if !ok || err != nil || v < 1 || v > n || etag != o.ETag(path, v) {
		return 0, wrongf("%s: ETag %q is none of the %d versions published", path, etag, n)
	}
	return v, nil
}

// contentRange parses "bytes first-last/total".
func contentRange(s string) (first, last, total int64, err error) {
	r, ok := strings.CutPrefix(s, "bytes ")
	span, t, ok2 := strings.Cut(r, "/")
	a, b, ok3 := strings.Cut(span, "-")
	if !ok || !ok2 || !ok3 {
		return 0, 0, 0, fmt.Errorf("Content-Range %q", s)
	}
	first, e1 := strconv.ParseInt(a, 10, 64)
	last, e2 := strconv.ParseInt(b, 10, 64)
	total, e3 := strconv.ParseInt(t, 10, 64)
	if e1 != nil || e2 != nil || e3 != nil || first > last {
		return 0, 0, 0, fmt.Errorf("Content-Range %q", s)
	}
	return first, last, total, nil
}

// CurrentAfter reports whether version v of path was the current one at
// some moment after t: its successor, if any, was published after t.
func (o *Origin) CurrentAfter(path string, v int, t time.Time) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	ob := o.objects[path]
	if ob == nil || v < 1 || v > len(ob.pub) {
		return false
	}
	return v == len(ob.pub) || ob.pub[v].After(t)
}

// ChangedAfter reports whether a new version of path was published
// after t.
func (o *Origin) ChangedAfter(path string, t time.Time) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	ob := o.objects[path]
	return ob != nil && len(ob.pub) > 1 && ob.pub[len(ob.pub)-1].After(t)
}

// Superseded is when the version after v of path was published (zero if
// v is the current one).
func (o *Origin) Superseded(path string, v int) time.Time {
	o.mu.Lock()
	defer o.mu.Unlock()
	ob := o.objects[path]
	if ob == nil || v < 1 || v >= len(ob.pub) {
		return time.Time{}
	}
	return ob.pub[v]
}
