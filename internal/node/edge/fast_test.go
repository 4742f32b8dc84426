package edge

import (
	"bytes"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"reflect"
	"runtime"
	"slices"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/strata-media/strata/internal/core/tier"
	"github.com/strata-media/strata/internal/httpapi"
	"github.com/strata-media/strata/internal/httpapi/httpapitest"
	"github.com/strata-media/strata/internal/node/engine"
	"github.com/strata-media/strata/internal/storage/device"
	"github.com/strata-media/strata/internal/storage/ramfile"
)

// fastStep is one request of TestFastPathAnswersAsServeHTTP.
type fastStep struct {
	name, method, path string
	hdr                []string      // name, value, ...
	advance            time.Duration // the clock moves on first
	fast               bool          // the fast path answers it alone
}

// fastSteps go through the cases the fast path takes (a fresh hit, HEAD,
// a Vary'd response's variants, a query, a refreshed entry, a
// Last-Modified to reformat, no Content-Type) and the ones it must leave
// to the general path (misses, ranges, conditionals, request
// Cache-Control, Pragma, Authorization, stale entries, no-store, a
// sliced object, a gzip body, an upstream 404, bad paths).
func fastSteps(etag string) []fastStep {
	seg := "/cdn/seg.m4s"
	return []fastStep{
		{"miss", "GET", seg, nil, 0, false},
		{"hit", "GET", seg, nil, 0, true},
		{"hit head", "HEAD", seg, nil, 0, true},
		{"hit origin", "GET", seg, []string{"Origin", "https://player.example", "Accept-Encoding", "gzip"}, 0, true},
		{"hit if-range alone", "GET", seg, []string{"If-Range", etag}, 0, false},
		{"range", "GET", seg, []string{"Range", "bytes=0-99"}, 0, false},
		{"if-none-match", "GET", seg, []string{"If-None-Match", etag}, 0, false},
		{"if-none-match head", "HEAD", seg, []string{"If-None-Match", etag}, 0, false},
		{"if-modified-since", "GET", seg, []string{"If-Modified-Since", "Mon, 23 Nov 2026 13:00:00 GMT"}, 0, false},
		{"request no-cache", "GET", seg, []string{"Cache-Control", "no-cache"}, 0, false},
		{"request max-age=0", "GET", seg, []string{"Cache-Control", "max-age=0"}, time.Second, false},
		{"request max-age=3600", "GET", seg, []string{"Cache-Control", "max-age=3600"}, 0, true},
		{"pragma", "GET", seg, []string{"Pragma", "no-cache"}, 0, false},
		{"authorization", "GET", seg, []string{"Authorization", "Bearer x"}, 0, false},
		{"query miss", "GET", seg + "?a=1", nil, 0, false},
		{"query hit", "GET", seg + "?a=1", nil, 0, true},
		{"vary miss", "GET", "/cdn/vary.bin", []string{"Accept-Language", "en"}, 0, false},
		{"vary hit", "GET", "/cdn/vary.bin", []string{"Accept-Language", "en"}, 0, true},
		{"vary other miss", "GET", "/cdn/vary.bin", []string{"Accept-Language", "fr"}, 0, false},
		{"vary other hit", "GET", "/cdn/vary.bin", []string{"Accept-Language", "fr"}, 0, true},
		{"vary none miss", "GET", "/cdn/vary.bin", nil, 0, false},
		{"vary none hit", "HEAD", "/cdn/vary.bin", nil, 0, true},
		{"short miss", "GET", "/cdn/short.m4s", nil, 0, false},
		{"short hit", "GET", "/cdn/short.m4s", nil, 0, true},
		{"short stale", "GET", "/cdn/short.m4s", nil, 5 * time.Second, false},
		{"short refreshed", "GET", "/cdn/short.m4s", nil, 0, true},
		{"old date format", "GET", "/cdn/old.m4s", nil, 0, false},
		{"old date format hit", "GET", "/cdn/old.m4s", nil, 0, true},
		{"no type", "GET", "/cdn/untyped", nil, 0, false},
		{"no type hit", "GET", "/cdn/untyped", nil, 0, true},
		{"no-store", "GET", "/cdn/private", nil, 0, false},
		{"no-store again", "GET", "/cdn/private", nil, 0, false},
		{"sliced", "GET", "/cdn/big.mp4", nil, 0, false},
		{"sliced again", "GET", "/cdn/big.mp4", nil, 0, false},
		{"gzip", "GET", "/cdn/page.gz", nil, 0, false},
		{"gzip again", "GET", "/cdn/page.gz", nil, 0, false},
		{"upstream 404", "GET", "/cdn/missing", nil, 0, false},
		{"upstream 404 again", "GET", "/cdn/missing", nil, 0, false},
		{"only-if-cached miss", "GET", "/cdn/never", []string{"Cache-Control", "only-if-cached"}, 0, false},
		{"dot segment", "GET", "/cdn/x/../seg.m4s", nil, 0, false},
		{"empty segment", "GET", "/cdn//seg.m4s", nil, 0, false},
		{"expired", "GET", seg, nil, 2 * time.Hour, false},
		{"expired then hit", "GET", seg, nil, 0, true},
	}
}

// fastSide is one edge (its own engine) behind an API, as a node mounts
// it, served on 127.0.0.1.
type fastSide struct {
	edge    *Handler
	eng     *engine.Engine
	srv     *httptest.Server
	general atomic.Int64 // requests that reached the general path
}

func newFastSide(t *testing.T, up *upstream, c *clock, fast bool) *fastSide {
	t.Helper()
	eng := testEngine(t, device.NewMem(64*testBlock, 4096))
	h, err := New(eng, Options{
		Upstreams: []Upstream{{Prefix: "/cdn/", URL: up.srv.URL + "/media/"}},
		SliceSize: 64 << 10, MaxWhole: 64 << 10, Now: c.Now, Logger: slog.New(slog.DiscardHandler),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	api := httpapi.New(httpapi.Options{CORSOrigins: []string{"*"}, Logger: slog.New(slog.DiscardHandler)})
	if err := api.Mount(h); err != nil {
		t.Fatal(err)
	}
	s := &fastSide{edge: h, eng: eng}
	general := api.Handler()
	counted := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.general.Add(1)
		general.ServeHTTP(w, r)
	})
	root := http.Handler(counted)
	if fast {
		root = api.FastPath(counted, nil)
	}
	s.srv = httptest.NewServer(root)
	t.Cleanup(s.srv.Close)
	return s
}

func (s *fastSide) send(t *testing.T, st fastStep) *result {
	t.Helper()
	req, err := http.NewRequest(st.method, s.srv.URL+st.path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.URL.Opaque = st.path // as written: no cleaning by the client
	for i := 0; i+1 < len(st.hdr); i += 2 {
		req.Header.Set(st.hdr[i], st.hdr[i+1])
	}
	if req.Header.Get("Accept-Encoding") == "" {
		req.Header.Set("Accept-Encoding", "identity")
	}
	resp, err := httpapitest.Wire.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return &result{status: resp.StatusCode, header: resp.Header, body: body, err: err}
}

// TestFastPathAnswersAsServeHTTP: two edges with engines of their own, in
// front of the same upstream and clock, get the same requests in the same
// order, one through the API with its fast path, the other through the
// general path alone: every answer is the same (status, header fields,
// body), the fast path answers the fresh hits alone and never the rest,
// and the edges' and engines' counters agree.
func TestFastPathAnswersAsServeHTTP(t *testing.T) {
	c := newClock()
	up := newUpstream(t, c)
	const etag = `"s1"`
	up.put("/media/seg.m4s", payload(50<<10, 1), "Cache-Control", "max-age=3600", "Etag", etag,
		"Last-Modified", "Mon, 23 Nov 2026 10:00:00 GMT", "Content-Type", "video/iso.segment")
	up.put("/media/vary.bin", payload(3000, 2), "Cache-Control", "max-age=3600", "Vary", "Accept-Language")
	up.put("/media/short.m4s", payload(2000, 3), "Cache-Control", "max-age=2", "Etag", `"short"`)
	up.put("/media/old.m4s", payload(1000, 4), "Cache-Control", "max-age=3600",
		"Last-Modified", "Monday, 23-Nov-26 10:00:00 GMT")
	up.handle("/media/untyped", func(w http.ResponseWriter, r *http.Request) {
		w.Header()["Content-Type"] = nil
		w.Write([]byte("<html>no type</html>"))
	}, "Cache-Control", "max-age=3600")
	up.put("/media/private", payload(1000, 5), "Cache-Control", "no-store")
	up.put("/media/big.mp4", payload(3*(64<<10)+7, 6), "Cache-Control", "max-age=3600", "Etag", `"big"`)
	up.put("/media/page.gz", payload(1000, 7), "Cache-Control", "max-age=3600", "Content-Encoding", "gzip")

	fast, general := newFastSide(t, up, c, true), newFastSide(t, up, c, false)
	served := 0
	for _, st := range fastSteps(etag) {
		c.Advance(st.advance)
		fast.general.Store(0)
		got, want := fast.send(t, st), general.send(t, st)
		got.header.Del("Date") // the server's when the upstream sent none (its 404)
		want.header.Del("Date")
		if got.cache() == CacheMiss && want.cache() == CacheMiss {
			// A streamed miss has a length or not depending on whether
			// the whole body had arrived when the answer began: a race
			// on both sides, not a difference of the paths.
			got.header.Del("Content-Length")
			want.header.Del("Content-Length")
		}
		if got.status != want.status || !bytes.Equal(got.body, want.body) || !sameFields(got.header, want.header) {
			t.Errorf("%s: fast path %d %v (%d bytes), general path %d %v (%d bytes)", st.name,
				got.status, got.header, len(got.body), want.status, want.header, len(want.body))
		}
		if alone := fast.general.Load() == 0; alone != st.fast {
			t.Errorf("%s: answered by the fast path alone: %v, want %v (%d %s)", st.name, alone, st.fast, got.status, got.cache())
		}
		if st.fast && got.cache() == CacheHit {
			served++
		}
	}
	if want := countFast(fastSteps(etag)); served != want {
		t.Errorf("%d fast answers were HITs, want %d", served, want)
	}
	a, b := fast.edge.Stats(), general.edge.Stats()
	a.Upstreams, b.Upstreams = nil, nil // their URLs and times differ
	if !reflect.DeepEqual(a, b) {
		t.Errorf("edge counters: with the fast path %+v, without %+v", a, b)
	}
	// The fast path's lookups are the general path's: it hands its
	// engine answers on, and the tiers are asked once per key. (Whether
	// the lookup that follows a streamed miss, settle, finds the record
	// inserted yet, or whether a miss joins a stream or finds the record,
	// is a race on both sides: the sums are compared, within 2, and the
	// inserts exactly. Asking twice would add a lookup per fast step.)
	if a, b := fast.eng.Stats(), general.eng.Stats(); absDiff(a.RAM.Hits+a.RAM.Misses, b.RAM.Hits+b.RAM.Misses) > 2 || a.RAM.Inserts != b.RAM.Inserts {
		t.Errorf("engine lookups: with the fast path %+v, without %+v", a.RAM, b.RAM)
	}
}

func countFast(steps []fastStep) int {
	n := 0
	for _, s := range steps {
		if s.fast {
			n++
		}
	}
	return n
}

// sameFields compares two responses' fields, each field's values in order.
func sameFields(a, b http.Header) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if !slices.Equal(v, b[k]) {
			return false
		}
	}
	return true
}

// BenchmarkEdgeHit compares, side by side, a fresh RAM hit through the
// API's general path and through its fast path, into a writer that drops
// the body: what the layers and the decisions cost per request, without
// the socket's cost. go test ./internal/node/edge -run XXX -bench EdgeHit
func BenchmarkEdgeHit(b *testing.B) {
	c := newClock()
	up := newUpstream(b, c)
	for _, size := range []int{100 << 10, 1 << 20} {
		path := "/media/" + strconv.Itoa(size)
		up.put(path, payload(size, 9), "Cache-Control", "max-age=3600", "Etag", `"e"`,
			"Last-Modified", "Mon, 23 Nov 2026 10:00:00 GMT", "Content-Type", "video/iso.segment")
	}
	eng, err := engine.New(engine.Options{
		Tier:   tier.Options{RAMBytes: 8 << 20, BlockSize: testBlock, MonitorRoom: 1},
		Logger: slog.New(slog.DiscardHandler),
	}, device.NewMem(64*testBlock, 4096), nil)
	if err != nil {
		b.Fatal(err)
	}
	defer eng.Close()
	h, err := New(eng, Options{Upstreams: []Upstream{{Prefix: "/cdn/", URL: up.srv.URL + "/media/"}},
		Now: c.Now, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		b.Fatal(err)
	}
	defer h.Close()
	api := httpapi.New(httpapi.Options{CORSOrigins: []string{"*"}, Logger: slog.New(slog.DiscardHandler)})
	if err := api.Mount(h); err != nil {
		b.Fatal(err)
	}
	general := api.Handler()
	fast := api.FastPath(general, nil)
	for _, size := range []int{100 << 10, 1 << 20} {
		r := httptest.NewRequest("GET", "/cdn/"+strconv.Itoa(size), nil)
		general.ServeHTTP(httpapitest.NewDiscard(), r) // the miss
		for _, p := range []struct {
			name string
			h    http.Handler
		}{{"general", general}, {"fast", fast}} {
			b.Run(fmt.Sprintf("%dKiB/%s", size>>10, p.name), func(b *testing.B) {
				b.ReportAllocs()
				b.SetBytes(int64(size))
				for b.Loop() {
					w := httpapitest.NewDiscard()
					p.h.ServeHTTP(w, r)
					if w.Status != 200 || w.H.Get(HeaderCache) != CacheHit {
						b.Fatalf("%d %s", w.Status, w.H.Get(HeaderCache))
					}
				}
			})
		}
	}
}

// decodedRecords: a record decoded from RAM bytes once is the same record
// the next time, without its bytes being kept alive; flash bytes are
// decoded every time, without the record's checksum (the engine verified
// them: TestDamagedFlashNeverServed); bytes of no tier's verifying are
// checked, and a damaged copy is refused.
func TestDecodedRecords(t *testing.T) {
	var d decodedRecords
	rec := &record{id: 7, complete: 5, body: []byte("hello")}
	rec.entry.Status = 200
	rec.entry.Header = http.Header{"Etag": {`"h"`}}
	data := rec.encode()
	for i := range 3 {
		got, _, err := d.decode(data, nil, tier.RAM, new(record))
		if err != nil || got.id != 7 || string(got.body) != "hello" || got.entry.Header.Get("Etag") != `"h"` || &got.body[0] != &data[len(data)-recordSumLen-5] {
			t.Fatalf("decode %d: %+v, %v", i, got, err)
		}
	}
	if n := d.len(); n != 1 {
		t.Fatalf("%d records remembered, want 1", n)
	}
	bad := append([]byte(nil), data...)
	bad[len(bad)-recordSumLen-1] ^= 1
	if _, _, err := d.decode(bad, nil, tier.Miss, new(record)); err == nil {
		t.Fatal("a damaged copy decoded")
	}
	if got, _, err := d.decode(bad, nil, tier.SSD, new(record)); err != nil || got.id != 7 {
		t.Fatalf("flash bytes (verified by the engine) checked again: %v", err)
	}
	if n := d.len(); n != 1 {
		t.Fatalf("%d records remembered after a flash decode, want 1", n)
	}
	runtime.KeepAlive(data)
	data = nil
	for i := 0; i < 100 && d.len() > 0; i++ { // the cleanup runs after a GC, in its own goroutine
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
	}
	if n := d.len(); n != 0 {
		t.Fatalf("%d records remembered after their bytes were collected", n)
	}
	// A record in a memory file (ram_sendfile) is remembered by the file
	// itself: decoded once, the same record after, nothing in the map.
	a, err := ramfile.New(ramfile.Options{Live: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	rec.body = bytes.Repeat([]byte("x"), 40<<10)
	rec.complete = int64(len(rec.body))
	f, ok := a.Put(rec.encode())
	if !ok {
		t.Fatal("no memory file")
	}
	var first *decodedRecord
	for i := range 3 {
		got, dr, err := d.decode(f.Bytes(), f, tier.RAM, new(record))
		if err != nil || got.id != 7 || len(got.body) != 40<<10 || dr == nil || first != nil && dr != first {
			t.Fatalf("decode %d from a file: %v", i, err)
		}
		first = dr
	}
	if f.Memo() != first || d.len() != 0 {
		t.Fatalf("the file keeps %v, the map %d records; want the record in the file", f.Memo(), d.len())
	}
	runtime.KeepAlive(f)
}

func absDiff(a, b uint64) uint64 {
	if a > b {
		return a - b
	}
	return b - a
}

// TestFastHitAge: the fast path's hits on a record it remembers from RAM
// (its fields and initial age made once) send the entry's current age,
// second by second as the clock moves, as the general path computes it
// from the stored Date and Age; the origin's Age counts.
func TestFastHitAge(t *testing.T) {
	c := newClock()
	up := newUpstream(t, c)
	up.put("/media/seg.m4s", payload(1000, 1), "Cache-Control", "max-age=3600", "Age", "7")
	fast := newFastSide(t, up, c, true)
	st := fastStep{name: "hit", method: "GET", path: "/cdn/seg.m4s"}
	fast.send(t, st) // the miss
	var elapsed time.Duration
	for _, step := range []time.Duration{0, 0, time.Second, 0, 2 * time.Second, 500 * time.Millisecond, 500 * time.Millisecond, 10 * time.Minute} {
		c.Advance(step)
		elapsed += step
		fast.general.Store(0)
		got := fast.send(t, st)
		if fast.general.Load() != 0 || got.cache() != CacheHit {
			t.Fatalf("after %v: not a fast hit (%d %s)", step, got.status, got.cache())
		}
		if want := strconv.Itoa(7 + int(elapsed/time.Second)); got.header.Get("Age") != want {
			t.Errorf("after %v: Age %q, want %q", step, got.header.Get("Age"), want)
		}
	}
}
