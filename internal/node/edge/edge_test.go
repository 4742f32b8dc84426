package edge

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/strata-media/strata/internal/core/httpcache"
	"github.com/strata-media/strata/internal/core/tier"
	"github.com/strata-media/strata/internal/node/engine"
	"github.com/strata-media/strata/internal/storage/device"
)

const testBlock = 256 << 10

// clock is the test's time, read by the edge's decisions and the
// upstream's Date.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *clock { return &clock{t: time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// object is a file the test upstream serves.
type object struct {
	body   []byte
	header http.Header // set on every answer; Date comes from the clock
	// handler, if set, answers instead.
	handler http.HandlerFunc
}

// upstream is a real HTTP origin on 127.0.0.1 serving objects with ranges
// and conditionals (http.ServeContent), counting requests.
type upstream struct {
	t     testing.TB
	clock *clock
	srv   *httptest.Server

	mu      sync.Mutex
	objects map[string]*object
	count   map[string]int
	ranges  map[string][]string // Range of each request, by path
	conds   []string            // If-None-Match of each request
	gate    chan struct{}       // if set, requests wait for it to close
	arrived chan struct{}       // gets a value when a request arrives, if set
}

func newUpstream(t testing.TB, c *clock) *upstream {
	u := &upstream{t: t, clock: c, objects: map[string]*object{}, count: map[string]int{}, ranges: map[string][]string{}}
	u.srv = httptest.NewServer(http.HandlerFunc(u.serve))
	t.Cleanup(u.srv.Close)
	return u
}

// put serves body at path with the header fields kv (name, value, ...).
func (u *upstream) put(path string, body []byte, kv ...string) {
	u.handle(path, nil, kv...)
	u.mu.Lock()
	u.objects[path].body = body
	u.mu.Unlock()
}

// handle answers requests for path with fn, after setting the fields kv.
func (u *upstream) handle(path string, fn http.HandlerFunc, kv ...string) {
	o := &object{header: http.Header{}, handler: fn}
	for i := 0; i+1 < len(kv); i += 2 {
		o.header.Add(kv[i], kv[i+1])
	}
	u.mu.Lock()
	u.objects[path] = o
	u.mu.Unlock()
}

func (u *upstream) requests(path string) int {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.count[path]
}

func (u *upstream) rangesOf(path string) []string {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]string(nil), u.ranges[path]...)
}

func (u *upstream) serve(w http.ResponseWriter, r *http.Request) {
	u.mu.Lock()
	u.count[r.URL.Path]++
	u.ranges[r.URL.Path] = append(u.ranges[r.URL.Path], r.Header.Get("Range"))
	u.conds = append(u.conds, r.Header.Get("If-None-Match"))
	o, gate, arrived := u.objects[r.URL.Path], u.gate, u.arrived
	u.mu.Unlock()
	if arrived != nil {
		arrived <- struct{}{}
	}
	if gate != nil {
		<-gate
	}
	if o == nil {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Date", u.clock.Now().Format(http.TimeFormat))
	for k, v := range o.header {
		w.Header()[k] = v
	}
	if o.handler != nil {
		o.handler(w, r)
		return
	}
	if _, ok := w.Header()["Content-Type"]; !ok {
		w.Header().Set("Content-Type", "application/octet-stream")
	}
	http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(o.body))
}

// fixture is an edge handler over a real engine, served on 127.0.0.1.
type fixture struct {
	t     *testing.T
	clock *clock
	up    *upstream
	eng   *engine.Engine
	edge  *Handler
	srv   *httptest.Server
}

func testEngine(t testing.TB, dev device.Device) *engine.Engine {
	t.Helper()
	e, err := engine.New(engine.Options{
		Tier:          tier.Options{RAMBytes: 8 << 20, BlockSize: testBlock, MonitorRoom: 1},
		MonitorPeriod: 10 * time.Millisecond,
		FeedPeriod:    10 * time.Millisecond,
		Logger:        slog.New(slog.DiscardHandler),
	}, dev, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return e
}

func newFixture(t *testing.T, mod func(*Options)) *fixture {
	c := newClock()
	f := &fixture{t: t, clock: c, up: newUpstream(t, c)}
	f.eng = testEngine(t, device.NewMem(64*testBlock, 4096))
	o := Options{
		Upstreams: []Upstream{{Prefix: "/cdn/", URL: f.up.srv.URL + "/media/"}},
		SliceSize: 64 << 10,
		Now:       c.Now,
		Logger:    slog.New(slog.DiscardHandler),
	}
	if mod != nil {
		mod(&o)
	}
	h, err := New(f.eng, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	f.edge = h
	f.srv = httptest.NewServer(h)
	t.Cleanup(f.srv.Close)
	return f
}

// result is a response as the client read it.
type result struct {
	status int
	header http.Header
	body   []byte
	err    error // reading the body
}

func (r *result) cache() string { return r.header.Get(HeaderCache) }
func (r *result) tier() string  { return r.header.Get(HeaderTier) }

func (f *fixture) get(path string, kv ...string) *result {
	f.t.Helper()
	req, err := http.NewRequest(http.MethodGet, f.srv.URL+path, nil)
	if err != nil {
		f.t.Fatal(err)
	}
	for i := 0; i+1 < len(kv); i += 2 {
		req.Header.Add(kv[i], kv[i+1])
	}
	resp, err := f.srv.Client().Do(req)
	if err != nil {
		f.t.Fatalf("GET %s: %v", path, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return &result{status: resp.StatusCode, header: resp.Header, body: body, err: err}
}

// want checks a response's status, cache status and body.
func (f *fixture) want(r *result, status int, cache string, body []byte) {
	f.t.Helper()
	if r.err != nil || r.status != status || r.cache() != cache || (body != nil && !bytes.Equal(r.body, body)) {
		f.t.Fatalf("got %d %s (%s, %d bytes, err %v), want %d %s (%d bytes)",
			r.status, r.cache(), r.tier(), len(r.body), r.err, status, cache, len(body))
	}
}

func payload(n int, seed uint64) []byte {
	r := rand.New(rand.NewPCG(seed, seed))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

// A second GET is a hit from RAM, with the stored headers and an Age.
func TestHitAfterMiss(t *testing.T) {
	f := newFixture(t, nil)
	body := payload(3000, 1)
	f.up.put("/media/a/seg1.m4s", body, "Cache-Control", "max-age=60", "Etag", `"s1"`, "Content-Type", "video/iso.segment")
	r := f.get("/cdn/a/seg1.m4s")
	f.want(r, 200, CacheMiss, body)
	if r.tier() != "upstream" {
		t.Fatalf("miss served from %q", r.tier())
	}
	f.clock.Advance(7 * time.Second)
	r = f.get("/cdn/a/seg1.m4s")
	f.want(r, 200, CacheHit, body)
	if r.tier() != "ram" || r.header.Get("Age") != "7" || r.header.Get("Etag") != `"s1"` ||
		r.header.Get("Content-Type") != "video/iso.segment" {
		t.Fatalf("hit headers %v", r.header)
	}
	if n := f.up.requests("/media/a/seg1.m4s"); n != 1 {
		t.Fatalf("upstream asked %d times, want 1", n)
	}
	if st := f.edge.Stats(); st.Hits != 1 || st.Misses != 1 || st.UpstreamRequests != 1 {
		t.Fatalf("stats %+v", st)
	}
	if r := f.get("/elsewhere"); r.status != 404 {
		t.Fatalf("path of no upstream: %d", r.status)
	}
}

// N concurrent clients of one object cause one upstream request.
func TestCoalescing(t *testing.T) {
	f := newFixture(t, nil)
	body := payload(20000, 2)
	f.up.put("/media/hot.m4s", body, "Cache-Control", "max-age=60")
	const n = 8
	seen := map[string]int{}
	for _, r := range f.concurrently(n, "/cdn/hot.m4s") {
		if r.status != 200 || !bytes.Equal(r.body, body) {
			t.Fatalf("client got %d, %d bytes", r.status, len(r.body))
		}
		seen[r.cache()]++
	}
	if got := f.up.requests("/media/hot.m4s"); got != 1 || seen[CacheMiss] != 1 {
		t.Fatalf("upstream asked %d times for %d clients; cache statuses %v; ranges %q", got, n, seen, f.up.rangesOf("/media/hot.m4s"))
	}
}

// A stale entry is revalidated with If-None-Match; the 304 refreshes it.
func TestMaxAgeRevalidation(t *testing.T) {
	f := newFixture(t, nil)
	body := payload(5000, 3)
	f.up.put("/media/m.mpd", body, "Cache-Control", "max-age=60", "Etag", `"m1"`)
	f.want(f.get("/cdn/m.mpd"), 200, CacheMiss, body)
	f.clock.Advance(30 * time.Second)
	f.want(f.get("/cdn/m.mpd"), 200, CacheHit, body)
	f.clock.Advance(60 * time.Second)
	r := f.get("/cdn/m.mpd")
	f.want(r, 200, CacheRevalidated, body)
	if r.header.Get("Age") != "0" {
		t.Fatalf("revalidated Age %q", r.header.Get("Age"))
	}
	f.clock.Advance(30 * time.Second)
	f.want(f.get("/cdn/m.mpd"), 200, CacheHit, body)
	if n := f.up.requests("/media/m.mpd"); n != 2 || f.up.conds[1] != `"m1"` {
		t.Fatalf("upstream asked %d times, conditionals %q", n, f.up.conds)
	}
	// A changed representation replaces the stored one.
	f.clock.Advance(2 * time.Minute)
	body2 := payload(4000, 4)
	f.up.put("/media/m.mpd", body2, "Cache-Control", "max-age=60", "Etag", `"m2"`)
	f.want(f.get("/cdn/m.mpd"), 200, CacheExpired, body2)
	f.want(f.get("/cdn/m.mpd"), 200, CacheHit, body2)
	if st := f.edge.Stats(); st.Revalidations != 2 || st.Revalidated != 1 {
		t.Fatalf("stats %+v", st)
	}
}

// stale-while-revalidate serves the stale entry at once and revalidates
// in the background.
func TestStaleWhileRevalidate(t *testing.T) {
	f := newFixture(t, nil)
	body := payload(1000, 5)
	f.up.put("/media/live.m3u8", body, "Cache-Control", "max-age=10, stale-while-revalidate=60", "Etag", `"l1"`)
	f.want(f.get("/cdn/live.m3u8"), 200, CacheMiss, body)
	f.clock.Advance(20 * time.Second)
	f.want(f.get("/cdn/live.m3u8"), 200, CacheStale, body)
	f.edge.life.wg.Wait() // the background revalidation
	if st := f.edge.Stats(); st.Revalidated != 1 || st.StaleServed != 1 {
		t.Fatalf("stats %+v", st)
	}
	f.want(f.get("/cdn/live.m3u8"), 200, CacheHit, body)
	if n := f.up.requests("/media/live.m3u8"); n != 2 {
		t.Fatalf("upstream asked %d times, want 2", n)
	}
	// Past the window the request waits for the revalidation.
	f.clock.Advance(2 * time.Minute)
	f.want(f.get("/cdn/live.m3u8"), 200, CacheRevalidated, body)
}

// stale-if-error serves the stale entry while the upstream is down, within
// its window; past it, the edge answers 502.
func TestStaleIfError(t *testing.T) {
	f := newFixture(t, nil)
	body := payload(1000, 6)
	f.up.put("/media/s.m4s", body, "Cache-Control", "max-age=10, stale-if-error=60", "Etag", `"e1"`)
	f.want(f.get("/cdn/s.m4s"), 200, CacheMiss, body)
	f.up.srv.Close() // connection refused from now on
	f.clock.Advance(20 * time.Second)
	f.want(f.get("/cdn/s.m4s"), 200, CacheStale, body)
	f.clock.Advance(time.Minute)
	f.want(f.get("/cdn/s.m4s"), 502, CacheExpired, nil)
	if r := f.get("/cdn/never-seen"); r.status != 502 || r.cache() != CacheMiss {
		t.Fatalf("miss with the upstream down: %d %q", r.status, r.cache())
	}
}

// Vary: each variant is stored under its own key and served to matching
// requests only.
func TestVary(t *testing.T) {
	f := newFixture(t, nil)
	f.up.handle("/media/v.json", func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "encoding="+r.Header.Get("Accept-Encoding"))
	}, "Cache-Control", "max-age=60", "Vary", "Accept-Encoding")
	f.want(f.get("/cdn/v.json", "Accept-Encoding", "gzip"), 200, CacheMiss, []byte("encoding=gzip"))
	f.want(f.get("/cdn/v.json", "Accept-Encoding", "br"), 200, CacheMiss, []byte("encoding=br"))
	f.want(f.get("/cdn/v.json", "Accept-Encoding", "GZIP"), 200, CacheHit, []byte("encoding=gzip"))
	f.want(f.get("/cdn/v.json", "Accept-Encoding", "br"), 200, CacheHit, []byte("encoding=br"))
	if n := f.up.requests("/media/v.json"); n != 2 {
		t.Fatalf("upstream asked %d times, want 2", n)
	}
}

// no-store, private and Vary: * responses are never stored.
func TestNotStored(t *testing.T) {
	f := newFixture(t, nil)
	for i, kv := range [][]string{
		{"Cache-Control", "no-store"},
		{"Cache-Control", "private, max-age=60"},
		{"Cache-Control", "max-age=60", "Vary", "*"},
	} {
		path := fmt.Sprintf("/media/n%d", i)
		body := payload(500, uint64(i))
		f.up.put(path, body, kv...)
		f.want(f.get("/cdn/"+path[7:]), 200, CachePass, body)
		f.want(f.get("/cdn/"+path[7:]), 200, CachePass, body)
		if n := f.up.requests(path); n != 2 {
			t.Fatalf("%v: upstream asked %d times, want 2", kv, n)
		}
	}
	// A large no-store object is forwarded with the client's Range.
	big := payload(200<<10, 9)
	f.up.put("/media/big", big, "Cache-Control", "no-store", "Etag", `"b"`)
	r := f.get("/cdn/big", "Range", "bytes=100000-100009")
	f.want(r, 206, CachePass, big[100000:100010])
}

// Range over a sliced object pulls only the slices it covers; the rest
// come when asked, and the whole object is then served from the cache.
func TestRangeSlices(t *testing.T) {
	f := newFixture(t, nil)
	const s = 64 << 10
	body := payload(5*s+1234, 7)
	f.up.put("/media/movie.mp4", body, "Cache-Control", "max-age=600", "Etag", `"mv1"`)
	r := f.get("/cdn/movie.mp4", "Range", "bytes=200000-210000")
	f.want(r, 206, CacheMiss, body[200000:210001])
	if got := r.header.Get("Content-Range"); got != fmt.Sprintf("bytes 200000-210000/%d", len(body)) {
		t.Fatalf("Content-Range %q", got)
	}
	want := []string{"bytes=0-65535", "bytes=196608-262143"}
	if got := f.up.rangesOf("/media/movie.mp4"); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("upstream ranges %q, want %q", got, want)
	}
	f.want(f.get("/cdn/movie.mp4"), 200, CacheHit, body)
	if n := f.up.requests("/media/movie.mp4"); n != 6 {
		t.Fatalf("upstream asked %d times, want 6 (one per slice)", n)
	}
	r = f.get("/cdn/movie.mp4", "Range", "bytes=-100")
	f.want(r, 206, CacheHit, body[len(body)-100:])
	f.want(f.get("/cdn/movie.mp4"), 200, CacheHit, body)
	if n := f.up.requests("/media/movie.mp4"); n != 6 {
		t.Fatalf("upstream asked %d times after full hits, want 6", n)
	}
}

// A slice whose ETag differs from the first slice's is not stored: the
// representation changed, and the edge drops the object.
func TestSliceChanged(t *testing.T) {
	f := newFixture(t, nil)
	const s = 64 << 10
	body := payload(3*s, 8)
	f.up.put("/media/c.mp4", body, "Cache-Control", "max-age=600", "Etag", `"c1"`)
	f.want(f.get("/cdn/c.mp4", "Range", "bytes=0-9"), 206, CacheMiss, body[:10])
	f.up.put("/media/c.mp4", body, "Cache-Control", "max-age=600", "Etag", `"c2"`)
	r := f.get("/cdn/c.mp4", "Range", "bytes=150000-150009")
	if r.err == nil && bytes.Equal(r.body, body[150000:150010]) {
		t.Fatalf("a slice of another representation was served")
	}
	f.want(f.get("/cdn/c.mp4", "Range", "bytes=150000-150009"), 206, CacheMiss, body[150000:150010])
}

// A truncated upstream body is an error, is not stored and is never served
// later. A plain GET is answered as the body arrives, so its client sees
// the status and then its body cut short; a ranged one gets a 502.
func TestTruncatedBody(t *testing.T) {
	f := newFixture(t, nil)
	f.up.handle("/media/t.bin", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "1000")
		w.WriteHeader(200)
		w.Write(make([]byte, 500)) // the server closes the connection short
	}, "Cache-Control", "max-age=60")
	if r := f.get("/cdn/t.bin"); r.err == nil || len(r.body) >= 1000 {
		t.Fatalf("a truncated body reached the client whole: %d, %d bytes, err %v", r.status, len(r.body), r.err)
	}
	f.want(f.get("/cdn/t.bin", "Range", "bytes=0-9"), 502, CacheMiss, nil)
	body := payload(1000, 10)
	f.up.put("/media/t.bin", body, "Cache-Control", "max-age=60")
	f.want(f.get("/cdn/t.bin"), 200, CacheMiss, body)
	f.want(f.get("/cdn/t.bin"), 200, CacheHit, body)
	if st := f.edge.Stats(); st.UpstreamErrors == 0 || st.Errors != 2 {
		t.Fatalf("stats %+v", st)
	}
}

// A refused connection answers 502, a timeout 504; neither is stored.
func TestUpstreamErrors(t *testing.T) {
	f := newFixture(t, func(o *Options) { o.HeaderTimeout = 50 * time.Millisecond })
	f.up.put("/media/slow", []byte("late"), "Cache-Control", "max-age=60")
	gate := make(chan struct{})
	f.up.mu.Lock()
	f.up.gate = gate
	f.up.mu.Unlock()
	f.want(f.get("/cdn/slow"), 504, CacheMiss, nil)
	close(gate)
	f.want(f.get("/cdn/slow"), 200, CacheMiss, []byte("late"))
	f.up.srv.Close()
	f.want(f.get("/cdn/other"), 502, CacheMiss, nil)
	f.want(f.get("/cdn/slow", "Cache-Control", "only-if-cached"), 200, CacheHit, []byte("late"))
	f.want(f.get("/cdn/nope", "Cache-Control", "only-if-cached"), 504, CacheMiss, nil)
}

// Purge drops one path, or every path under a prefix.
func TestPurge(t *testing.T) {
	f := newFixture(t, nil)
	for _, p := range []string{"a/1", "a/2", "a/sub/3", "b/1"} {
		f.up.put("/media/"+p, []byte(p), "Cache-Control", "max-age=600")
		f.want(f.get("/cdn/"+p), 200, CacheMiss, []byte(p))
	}
	if _, err := f.edge.Purge("/cdn/a/1"); err != nil {
		t.Fatal(err)
	}
	f.want(f.get("/cdn/a/1"), 200, CacheMiss, []byte("a/1"))
	f.want(f.get("/cdn/a/2"), 200, CacheHit, []byte("a/2"))
	if _, err := f.edge.Purge("/cdn/a/"); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"a/1", "a/2", "a/sub/3"} {
		f.want(f.get("/cdn/"+p), 200, CacheMiss, []byte(p))
	}
	f.want(f.get("/cdn/b/1"), 200, CacheHit, []byte("b/1"))
	if _, err := f.edge.Purge("/other/x"); err != ErrNoUpstream {
		t.Fatalf("purge of no upstream's path: %v", err)
	}
}

// The longest prefix picks the upstream.
func TestLongestPrefix(t *testing.T) {
	c := newClock()
	a, b := newUpstream(t, c), newUpstream(t, c)
	a.put("/x/deep/f", []byte("from a"), "Cache-Control", "max-age=60")
	b.put("/f", []byte("from b"), "Cache-Control", "max-age=60")
	h, err := New(testEngine(t, nil), Options{Now: c.Now, Upstreams: []Upstream{
		{Prefix: "/", URL: a.srv.URL + "/x/"},
		{Prefix: "/deep/", URL: b.srv.URL},
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	srv := httptest.NewServer(h)
	defer srv.Close()
	resp, err := srv.Client().Get(srv.URL + "/deep/f")
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(got) != "from b" || !strings.Contains(resp.Header.Get(HeaderCache), CacheMiss) {
		t.Fatalf("got %q %s", got, resp.Header.Get(HeaderCache))
	}
}

// serveDirect answers one GET with h, without a client connection.
func serveDirect(h http.Handler, path string) *result {
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, path, nil))
	return &result{status: w.Code, header: w.Result().Header, body: w.Body.Bytes()}
}

// Stored responses reach flash and survive a restart: a new engine on the
// same device serves them from flash, verified, without asking upstream.
func TestFlashRoundTrip(t *testing.T) {
	c := newClock()
	up := newUpstream(t, c)
	small, big := payload(50<<10, 11), payload(3*(64<<10)+7, 12)
	up.put("/media/keep.m4s", small, "Cache-Control", "max-age=3600", "Etag", `"k"`)
	up.put("/media/big.mp4", big, "Cache-Control", "max-age=3600", "Etag", `"b"`)
	mem := device.NewMem(64*testBlock, 4096)
	synctest.Test(t, func(t *testing.T) {
		open := func() (*engine.Engine, *Handler) {
			eng := testEngine(t, mem)
			h, err := New(eng, Options{
				Upstreams: []Upstream{{Prefix: "/cdn/", URL: up.srv.URL + "/media/"}},
				SliceSize: 64 << 10, MaxWhole: 64 << 10, Now: c.Now, Logger: slog.New(slog.DiscardHandler),
				// No idle connections: their goroutines would keep
				// the bubble's clock from advancing.
				Transport: &http.Transport{DisableKeepAlives: true},
			})
			if err != nil {
				t.Fatal(err)
			}
			return eng, h
		}
		eng, h := open()
		for _, p := range []string{"/cdn/keep.m4s", "/cdn/big.mp4"} {
			if r := serveDirect(h, p); r.status != 200 || r.cache() != CacheMiss {
				t.Fatalf("%s: %d %s", p, r.status, r.cache())
			}
		}
		time.Sleep(time.Second) // virtual: the monitor queues the objects for flash
		h.Close()
		if err := eng.Close(); err != nil { // writes the ring's last block
			t.Fatal(err)
		}
		eng, h = open()
		defer h.Close()
		for p, want := range map[string][]byte{"/cdn/keep.m4s": small, "/cdn/big.mp4": big} {
			r := serveDirect(h, p)
			if r.status != 200 || r.cache() != CacheHit || r.tier() != "ssd" || !bytes.Equal(r.body, want) {
				t.Fatalf("%s after restart: %d %s from %q, %d bytes", p, r.status, r.cache(), r.tier(), len(r.body))
			}
		}
		if n := up.requests("/media/keep.m4s") + up.requests("/media/big.mp4"); n != 1+4 {
			t.Fatalf("upstream asked %d times, want 5: %q %q", n, up.rangesOf("/media/keep.m4s"), up.rangesOf("/media/big.mp4"))
		}
		if st := eng.Stats(); st.SSD.ReadBytes == 0 {
			t.Fatalf("engine stats %+v", st.SSD)
		}
	})
}

// A tier object under an edge key that is not a record is dropped and
// fetched again.
func TestCorruptRecordRefetched(t *testing.T) {
	f := newFixture(t, nil)
	body := payload(2000, 13)
	f.up.put("/media/x", body, "Cache-Control", "max-age=60")
	key := sliceKey(variantKey(objectKey((*f.edge.routes.Load())[0].key, "x"), ""), 0)
	garbage := func(context.Context) ([]byte, error) { return []byte("not a record"), nil }
	if _, err := f.eng.GetWith(context.Background(), key, garbage); err != nil {
		t.Fatal(err)
	}
	f.want(f.get("/cdn/x"), 200, CacheMiss, body)
	f.want(f.get("/cdn/x"), 200, CacheHit, body)
	if st := f.edge.Stats(); st.Corrupt != 1 {
		t.Fatalf("stats %+v", st)
	}
}

// Client conditionals and HEAD are answered from the stored response; a
// HEAD miss is fetched as a GET and stored.
func TestClientConditionalsAndHead(t *testing.T) {
	f := newFixture(t, nil)
	body := payload(3000, 14)
	f.up.put("/media/h", body, "Cache-Control", "max-age=60", "Etag", `"h1"`)
	req, _ := http.NewRequest(http.MethodHead, f.srv.URL+"/cdn/h", nil)
	resp, err := f.srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 || resp.ContentLength != 3000 || resp.Header.Get(HeaderCache) != CacheMiss {
		t.Fatalf("HEAD: %d, length %d, %s", resp.StatusCode, resp.ContentLength, resp.Header.Get(HeaderCache))
	}
	// The HEAD's fetch of the whole object may still be storing it: the
	// GET then joins it (COALESCED). Either way the upstream is asked once.
	if r := f.get("/cdn/h"); r.cache() == CacheCoalesced {
		f.want(r, 200, CacheCoalesced, body)
	} else {
		f.want(r, 200, CacheHit, body)
	}
	f.want(f.get("/cdn/h", "If-None-Match", `"h1"`), 304, CacheHit, []byte{})
	if n := f.up.requests("/media/h"); n != 1 {
		t.Fatalf("upstream asked %d times, want 1", n)
	}
}

// Objects larger than the maximum cacheable size are passed through.
func TestMaxObjectSize(t *testing.T) {
	f := newFixture(t, func(o *Options) { o.Cache.MaxObjectSize = 100 << 10 })
	small, big := payload(60<<10, 15), payload(150<<10, 16)
	f.up.put("/media/small", small, "Cache-Control", "max-age=60", "Etag", `"s"`)
	f.up.put("/media/big", big, "Cache-Control", "max-age=60", "Etag", `"b"`)
	f.want(f.get("/cdn/small"), 200, CacheMiss, small)
	f.want(f.get("/cdn/small"), 200, CacheHit, small)
	f.want(f.get("/cdn/big"), 200, CachePass, big)
	f.want(f.get("/cdn/big", "Range", "bytes=140000-140099"), 206, CachePass, big[140000:140100])
}

// Other methods are forwarded with their body, and a successful answer
// invalidates the stored response of the target (RFC 9111 §4.4).
func TestUnsafeMethodInvalidates(t *testing.T) {
	f := newFixture(t, nil)
	body := payload(700, 17)
	var posted []byte // written by the upstream before it answers
	f.up.handle("/media/doc", func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			posted, _ = io.ReadAll(r.Body)
			w.WriteHeader(http.StatusNoContent)
			return
		}
		w.Write(body)
	}, "Cache-Control", "max-age=600")
	f.want(f.get("/cdn/doc"), 200, CacheMiss, body)
	f.want(f.get("/cdn/doc"), 200, CacheHit, body)
	resp, err := f.srv.Client().Post(f.srv.URL+"/cdn/doc", "text/plain", strings.NewReader("update"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent || string(posted) != "update" {
		t.Fatalf("POST: %d, upstream got %q", resp.StatusCode, posted)
	}
	f.want(f.get("/cdn/doc"), 200, CacheMiss, body)
}

// An upstream answering 503 counts as an error for stale-if-error; without
// it, or with must-revalidate, the 503 reaches the client and the stored
// response stays.
func TestStaleIfErrorStatus(t *testing.T) {
	f := newFixture(t, nil)
	ok, strict := payload(900, 18), payload(900, 19)
	f.up.put("/media/ok", ok, "Cache-Control", "max-age=10, stale-if-error=60", "Etag", `"o"`)
	f.up.put("/media/strict", strict, "Cache-Control", "max-age=10, must-revalidate, stale-if-error=60", "Etag", `"s"`)
	f.want(f.get("/cdn/ok"), 200, CacheMiss, ok)
	f.want(f.get("/cdn/strict"), 200, CacheMiss, strict)
	for _, p := range []string{"/media/ok", "/media/strict"} {
		f.up.handle(p, func(w http.ResponseWriter, r *http.Request) {
			http.Error(w, "down for maintenance", http.StatusServiceUnavailable)
		})
	}
	f.clock.Advance(20 * time.Second)
	f.want(f.get("/cdn/ok"), 200, CacheStale, ok)
	f.want(f.get("/cdn/strict"), 503, CachePass, nil)
}

// Dot segments cannot climb out of an upstream's base path.
func TestDotSegments(t *testing.T) {
	f := newFixture(t, nil)
	if r := serveDirect(f.edge, "/cdn/%2e%2e/secret"); r.status != http.StatusBadRequest {
		t.Fatalf("dot segment: %d", r.status)
	}
	if n := f.up.requests("/secret") + f.up.requests("/media/secret"); n != 0 {
		t.Fatalf("upstream asked %d times", n)
	}
}

// concurrently runs n GETs of path while the upstream holds its first
// request, and returns them once all are answered.
func (f *fixture) concurrently(n int, path string, kv ...string) []*result {
	gate, arrived := make(chan struct{}), make(chan struct{}, n)
	f.up.mu.Lock()
	f.up.gate, f.up.arrived = gate, arrived
	f.up.mu.Unlock()
	results := make([]*result, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { results[i] = f.get(path, kv...) })
	}
	<-arrived // one request is upstream; let the others pile up on it
	close(gate)
	wg.Wait()
	f.up.mu.Lock()
	f.up.gate, f.up.arrived = nil, nil
	f.up.mu.Unlock()
	return results
}

// Concurrent requests needing the same revalidation send one conditional
// request.
func TestCoalescedRevalidation(t *testing.T) {
	f := newFixture(t, nil)
	body := payload(4000, 20)
	f.up.put("/media/r", body, "Cache-Control", "max-age=10", "Etag", `"r1"`)
	f.want(f.get("/cdn/r"), 200, CacheMiss, body)
	f.clock.Advance(time.Minute)
	for _, r := range f.concurrently(6, "/cdn/r") {
		if r.status != 200 || !bytes.Equal(r.body, body) {
			t.Fatalf("client got %d %s, %d bytes", r.status, r.cache(), len(r.body))
		}
	}
	if n := f.up.requests("/media/r"); n != 2 {
		t.Fatalf("upstream asked %d times, want 2", n)
	}
}

// A response that is not stored is never handed to a concurrent request:
// each client gets the answer to its own request.
func TestUncachedNotShared(t *testing.T) {
	f := newFixture(t, nil)
	var mu sync.Mutex
	next := 0
	f.up.handle("/media/me", func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		next++
		n := next
		mu.Unlock()
		w.Header().Set("Set-Cookie", fmt.Sprintf("session=%d", n))
		fmt.Fprintf(w, "user %d", n)
	}, "Cache-Control", "private, max-age=60")
	seen := map[string]bool{}
	for _, r := range f.concurrently(5, "/cdn/me") {
		if r.status != 200 || r.cache() != CachePass || seen[string(r.body)] {
			t.Fatalf("client got %d %s %q; seen %v", r.status, r.cache(), r.body, seen)
		}
		seen[string(r.body)] = true
	}
}

// BenchmarkHit measures a RAM hit of a 64 KiB object, decoding and all,
// without a client connection.
func BenchmarkHit(b *testing.B) {
	c := newClock()
	up := newUpstream(b, c)
	body := payload(64<<10, 21)
	up.put("/media/hit", body, "Cache-Control", "max-age=3600", "Etag", `"h"`)
	eng, err := engine.New(engine.Options{Tier: tier.Options{RAMBytes: 8 << 20}, Logger: slog.New(slog.DiscardHandler)}, nil, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer eng.Close()
	h, err := New(eng, Options{Upstreams: []Upstream{{Prefix: "/cdn/", URL: up.srv.URL + "/media/"}}, Now: c.Now})
	if err != nil {
		b.Fatal(err)
	}
	defer h.Close()
	if r := serveDirect(h, "/cdn/hit"); r.cache() != CacheMiss {
		b.Fatalf("first request: %s", r.cache())
	}
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		if r := serveDirect(h, "/cdn/hit"); r.cache() != CacheHit {
			b.Fatalf("request: %s", r.cache())
		}
	}
}

// An upstream that ignores Range: a 200 up to MaxWhole is stored whole,
// a larger one passed through; an empty object (416 to the first slice's
// range) is stored as an empty 200.
func TestUpstreamWithoutRanges(t *testing.T) {
	f := newFixture(t, func(o *Options) { o.MaxWhole = 200 << 10 })
	whole, huge := payload(150<<10, 22), payload(300<<10, 23)
	for p, body := range map[string][]byte{"/media/whole": whole, "/media/huge": huge} {
		f.up.handle(p, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Length", fmt.Sprint(len(body)))
			w.Write(body)
		}, "Cache-Control", "max-age=60")
	}
	f.want(f.get("/cdn/whole"), 200, CacheMiss, whole)
	f.want(f.get("/cdn/whole", "Range", "bytes=100-199"), 206, CacheHit, whole[100:200])
	f.want(f.get("/cdn/huge"), 200, CachePass, huge)
	f.up.put("/media/empty", []byte{}, "Cache-Control", "max-age=60")
	f.want(f.get("/cdn/empty"), 200, CacheMiss, []byte{})
	f.want(f.get("/cdn/empty"), 200, CacheHit, []byte{})
}

// A multipart Range request over several slices reads each from its slice.
func TestMultipartRange(t *testing.T) {
	f := newFixture(t, nil)
	body := payload(4*(64<<10), 24)
	f.up.put("/media/mp", body, "Cache-Control", "max-age=60", "Etag", `"mp"`)
	r := f.get("/cdn/mp", "Range", "bytes=10-19,200000-200009")
	if r.status != 206 || !strings.HasPrefix(r.header.Get("Content-Type"), "multipart/byteranges") ||
		!bytes.Contains(r.body, body[10:20]) || !bytes.Contains(r.body, body[200000:200010]) {
		t.Fatalf("multipart: %d %s, %d bytes", r.status, r.header.Get("Content-Type"), len(r.body))
	}
	if got := f.up.rangesOf("/media/mp"); len(got) != 2 {
		t.Fatalf("upstream ranges %q, want the first and the fourth slice", got)
	}
}

// The upstream transport keeps as many idle connections per host as the
// cache path runs upstream exchanges at once (the engine's loads plus the
// background revalidations), unless told otherwise: a burst of misses
// does not close the connections the next burst would dial again.
func TestIdlePoolSizedByLoads(t *testing.T) {
	for _, tc := range []struct {
		idle, background, want int
	}{
		{0, 0, engine.DefaultMaxLoads + DefaultMaxBackground},
		{0, 4, engine.DefaultMaxLoads + 4},
		{7, 0, 7},
	} {
		f := newFixture(t, func(o *Options) { o.MaxIdleConns, o.MaxBackground = tc.idle, tc.background })
		c := (*f.edge.routes.Load())[0].servers[0].client
		tr, ok := c.Transport.(*http.Transport)
		if !ok {
			t.Fatalf("transport %T", c.Transport)
		}
		if tr.MaxIdleConnsPerHost != tc.want || f.edge.opts.MaxIdleConns != tc.want {
			t.Errorf("MaxIdleConns %d, MaxBackground %d: %d idle per host (option %d), want %d",
				tc.idle, tc.background, tr.MaxIdleConnsPerHost, f.edge.opts.MaxIdleConns, tc.want)
		}
	}
}

// An upstream that stops (connection refused), times out or answers 5xx
// does not take down what the edge holds: without any stale-if-error or
// configuration, an expired copy answers, marked STALE, for the default
// keep-on-error window (a day past freshness); past it, or for a response
// that forbids stale use (s-maxage, must-revalidate), the error reaches
// the client.
func TestKeepOnErrorByDefault(t *testing.T) {
	f := newFixture(t, func(o *Options) { o.HeaderTimeout = 50 * time.Millisecond })
	seg, strict, slow, sick := payload(2000, 31), payload(900, 32), payload(700, 33), payload(500, 34)
	f.up.put("/media/seg.m4s", seg, "Cache-Control", "max-age=10", "Etag", `"g"`)
	f.up.put("/media/strict.mpd", strict, "Cache-Control", "s-maxage=10", "Etag", `"s"`)
	f.up.put("/media/slow.m4s", slow, "Cache-Control", "max-age=10", "Etag", `"l"`)
	f.up.put("/media/sick.m4s", sick, "Cache-Control", "max-age=10", "Etag", `"k"`)
	for _, p := range []string{"/cdn/seg.m4s", "/cdn/strict.mpd", "/cdn/slow.m4s", "/cdn/sick.m4s"} {
		f.get(p)
	}
	f.clock.Advance(time.Hour)

	// 5xx from the upstream.
	f.up.handle("/media/sick.m4s", func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "origin broken", http.StatusInternalServerError)
	})
	f.want(f.get("/cdn/sick.m4s"), 200, CacheStale, sick)
	// A timeout waiting for the upstream's header.
	gate := make(chan struct{})
	f.up.mu.Lock()
	f.up.gate = gate
	f.up.mu.Unlock()
	f.want(f.get("/cdn/slow.m4s"), 200, CacheStale, slow)
	close(gate)

	// The upstream stopped.
	f.up.srv.Close()
	f.want(f.get("/cdn/seg.m4s"), 200, CacheStale, seg)
	if r := f.get("/cdn/strict.mpd"); r.status != http.StatusBadGateway {
		t.Fatalf("s-maxage response served with the upstream down: %d %s", r.status, r.cache())
	}
	if r := f.get("/cdn/never-seen.m4s"); r.status != http.StatusBadGateway {
		t.Fatalf("uncached path with the upstream down: %d", r.status)
	}
	// A client asking for a validated answer gets the error.
	if r := f.get("/cdn/seg.m4s", "Cache-Control", "no-cache"); r.status != http.StatusBadGateway {
		t.Fatalf("no-cache request served stale: %d %s", r.status, r.cache())
	}
	f.clock.Advance(httpcache.DefaultKeepOnError - time.Hour)
	f.want(f.get("/cdn/seg.m4s"), 200, CacheStale, seg)
	f.clock.Advance(time.Minute)
	if r := f.get("/cdn/seg.m4s"); r.status != http.StatusBadGateway {
		t.Fatalf("past the keep-on-error window: %d %s", r.status, r.cache())
	}
	if st := f.edge.Stats(); st.StaleServed != 4 {
		t.Fatalf("stale served %d, want 4", st.StaleServed)
	}
}

// KeepOnError < 0 restores RFC 5861 alone: no stale-if-error, no stale.
func TestKeepOnErrorOff(t *testing.T) {
	f := newFixture(t, func(o *Options) { o.Cache.KeepOnError = -1 })
	body := payload(1000, 35)
	f.up.put("/media/s.m4s", body, "Cache-Control", "max-age=10", "Etag", `"e"`)
	f.want(f.get("/cdn/s.m4s"), 200, CacheMiss, body)
	f.up.srv.Close()
	f.clock.Advance(time.Minute)
	f.want(f.get("/cdn/s.m4s"), 502, CacheExpired, nil)
}

// A revalidation whose stored copy answers if the upstream fails does not
// retry the same server after a backoff: the client gets the copy at once
// (the upstream is asked once); a miss gets the upstream's 503 as it came
// (asked once too: a status is the server's answer, retried only on a
// backup).
func TestStaleCopyDoesNotWaitForRetries(t *testing.T) {
	f := newFixture(t, nil)
	body := payload(1200, 36)
	f.up.put("/media/r.m4s", body, "Cache-Control", "max-age=10", "Etag", `"r"`)
	f.want(f.get("/cdn/r.m4s"), 200, CacheMiss, body)
	f.clock.Advance(time.Minute)
	sick := func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "origin broken", http.StatusServiceUnavailable)
	}
	f.up.handle("/media/r.m4s", sick)
	f.up.handle("/media/new.m4s", sick)
	before := f.up.requests("/media/r.m4s")
	f.want(f.get("/cdn/r.m4s"), 200, CacheStale, body)
	if n := f.up.requests("/media/r.m4s") - before; n != 1 {
		t.Errorf("the upstream was asked %d times for a revalidation a stored copy answers for, want 1", n)
	}
	if r := f.get("/cdn/new.m4s"); r.status/100 != 5 {
		t.Fatalf("a miss with the upstream failing: %d", r.status)
	}
	if n := f.up.requests("/media/new.m4s"); n != 1 {
		t.Errorf("the upstream was asked %d times for a miss, want 1 (its 503 relayed)", n)
	}
}
