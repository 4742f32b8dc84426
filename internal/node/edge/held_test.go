package edge

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/strata-media/strata/internal/core/tier"
	"github.com/strata-media/strata/internal/node/engine"
	"github.com/strata-media/strata/internal/storage/device"
)

// noCORS is a front.CORS that sets no field.
type noCORS struct{}

func (noCORS) Apply(http.Header, *http.Request) {}

// heldWriter records an answer and, at each write of its body, the bytes
// the engine's flash hits hold: a hit served from its read buffer (no
// copy) holds it while it is written.
type heldWriter struct {
	*httptest.ResponseRecorder
	eng        *engine.Engine
	heldAtBody int64 // the least held at a body write; -1 before one
}

func (w *heldWriter) Write(p []byte) (int, error) {
	if h := heldBytes(w.eng); w.heldAtBody < 0 || h < w.heldAtBody {
		w.heldAtBody = h
	}
	return w.ResponseRecorder.Write(p)
}

func heldBytes(e *engine.Engine) int64 { return e.Stats().SSD.HitMemory.HeldBytes }

// flashUpstream serves small (whole) and big (sliced) under /media/; it
// is made outside the synctest bubble (its listener's goroutines would
// keep the bubble's clock from advancing).
func flashUpstream(t testing.TB, small, big []byte) (*clock, *upstream) {
	c := newClock()
	up := newUpstream(t, c)
	up.put("/media/small.m4s", small, "Cache-Control", "max-age=3600", "Etag", `"s"`)
	up.put("/media/big.mp4", big, "Cache-Control", "max-age=3600", "Etag", `"b"`)
	return c, up
}

// flashEdge stores up's small and big objects (in slices of sliceSize
// bytes), then reopens the engine on the same device so that every hit is
// a flash hit (RAM starts empty; a flash hit is not copied back to RAM).
// In a synctest bubble the monitor's period is virtual.
func flashEdge(t testing.TB, c *clock, up *upstream, sliceSize int64) (*engine.Engine, *Handler) {
	eng, h, _ := flashEdgeWith(t, c, up, sliceSize, nil)
	return eng, h
}

// flashEdgeWith is flashEdge, the engine it reopens with mod's options;
// it returns the flash device too.
func flashEdgeWith(t testing.TB, c *clock, up *upstream, sliceSize int64, mod func(*engine.Options)) (*engine.Engine, *Handler, *device.Mem) {
	t.Helper()
	mem := device.NewMem(64*testBlock, 4096)
	eng, h := flashEdgeOn(t, c, up, sliceSize, mem, mem, mod)
	return eng, h, mem
}

// flashEdgeOn is flashEdgeWith storing on mem, then reopening the engine
// on reopen (mem, or a device over it: device.Fault).
func flashEdgeOn(t testing.TB, c *clock, up *upstream, sliceSize int64, mem *device.Mem, reopen device.Device, mod func(*engine.Options)) (*engine.Engine, *Handler) {
	t.Helper()
	open := func(dev device.Device, mod func(*engine.Options)) (*engine.Engine, *Handler) {
		eng := testEngine(t, dev)
		if mod != nil {
			eng.Close()
			o := engine.Options{
				Tier:          tier.Options{RAMBytes: 8 << 20, BlockSize: testBlock, MonitorRoom: 1},
				MonitorPeriod: 10 * time.Millisecond, FeedPeriod: 10 * time.Millisecond,
				Logger: slog.New(slog.DiscardHandler),
			}
			mod(&o)
			var err error
			if eng, err = engine.New(o, dev, nil); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { eng.Close() })
		}
		h, err := New(eng, Options{
			Upstreams: []Upstream{{Prefix: "/cdn/", URL: up.srv.URL + "/media/"}},
			SliceSize: sliceSize, MaxWhole: sliceSize, Now: c.Now, Logger: slog.New(slog.DiscardHandler),
			Transport: &http.Transport{DisableKeepAlives: true}, // no idle goroutines in the bubble
		})
		if err != nil {
			t.Fatal(err)
		}
		return eng, h
	}
	eng, h := open(mem, nil)
	for _, p := range []string{"/cdn/small.m4s", "/cdn/big.mp4"} {
		if r := serveDirect(h, p); r.status != 200 || r.cache() != CacheMiss {
			t.Fatalf("%s: %d %s", p, r.status, r.cache())
		}
	}
	time.Sleep(time.Second) // virtual: the monitor queues the objects for flash
	h.Close()
	if err := eng.Close(); err != nil {
		t.Fatal(err)
	}
	eng, h = open(reopen, mod)
	t.Cleanup(func() { h.Close() })
	return eng, h
}

// TestFlashHitsHeldAndReturned: every kind of edge hit on flash (a plain
// GET and a HEAD by the fast path and by the general path, a range, a
// 304, a sliced object whole and a range across its slices) carries the
// right bytes, written from the hit's read buffer (held while the body
// is written: no copy), and returns the buffer once answered.
func TestFlashHitsHeldAndReturned(t *testing.T) {
	small, big := payload(50<<10, 21), payload(3*(64<<10)+7, 22)
	c, up := flashUpstream(t, small, big)
	synctest.Test(t, func(t *testing.T) {
		eng, h := flashEdge(t, c, up, 64<<10)
		for _, c := range []struct {
			name, method, path string
			hdr                []string
			fast               bool // through ServeFast first, as the API mounts the edge
			status             int
			body               []byte
			parts              [][]byte // of a multipart answer (body nil)
		}{
			{"plain, fast path", "GET", "/cdn/small.m4s", nil, true, 200, small, nil},
			{"plain, general path", "GET", "/cdn/small.m4s", nil, false, 200, small, nil},
			{"HEAD, fast path", "HEAD", "/cdn/small.m4s", nil, true, 200, nil, nil},
			{"HEAD, general path", "HEAD", "/cdn/small.m4s", nil, false, 200, nil, nil},
			{"range", "GET", "/cdn/small.m4s", []string{"Range", "bytes=1000-40999"}, true, 206, small[1000:41000], nil},
			{"304", "GET", "/cdn/small.m4s", []string{"If-None-Match", `"s"`}, true, 304, nil, nil},
			{"sliced, whole", "GET", "/cdn/big.mp4", nil, true, 200, big, nil},
			{"sliced, range across slices", "GET", "/cdn/big.mp4", []string{"Range", "bytes=60000-140000"}, true, 206, big[60000:140001], nil},
			{"sliced, general path", "GET", "/cdn/big.mp4", nil, false, 200, big, nil},
			{"multipart ranges", "GET", "/cdn/small.m4s", []string{"Range", "bytes=0-99,30000-30999"}, true, 206, nil,
				[][]byte{small[:100], small[30000:31000]}},
			{"sliced, multipart ranges", "GET", "/cdn/big.mp4", []string{"Range", "bytes=10-19,70000-140000"}, true, 206, nil,
				[][]byte{big[10:20], big[70000:140001]}},
		} {
			before := eng.Stats().SSD.HitMemory.Hits
			r := httptest.NewRequest(c.method, c.path, nil)
			for i := 0; i+1 < len(c.hdr); i += 2 {
				r.Header.Set(c.hdr[i], c.hdr[i+1])
			}
			w := &heldWriter{ResponseRecorder: httptest.NewRecorder(), eng: eng, heldAtBody: -1}
			if c.fast {
				if _, _, next := h.ServeFast(w, r, noCORS{}); next != nil {
					h.ServeHTTP(w, next)
				}
			} else {
				h.ServeHTTP(w, r)
			}
			res := w.Result()
			if res.StatusCode != c.status || res.Header.Get(HeaderTier) != "ssd" || res.Header.Get(HeaderCache) != CacheHit {
				t.Fatalf("%s: %d %s from %q, want %d hit from ssd", c.name, res.StatusCode, res.Header.Get(HeaderCache), res.Header.Get(HeaderTier), c.status)
			}
			if c.parts == nil && !bytes.Equal(w.Body.Bytes(), c.body) {
				t.Fatalf("%s: %d bytes, not the %d stored", c.name, w.Body.Len(), len(c.body))
			}
			for _, p := range c.parts {
				if !bytes.Contains(w.Body.Bytes(), p) || !strings.HasPrefix(res.Header.Get("Content-Type"), "multipart/byteranges") {
					t.Fatalf("%s: a part of %d bytes missing from the %s answer", c.name, len(p), res.Header.Get("Content-Type"))
				}
			}
			if eng.Stats().SSD.HitMemory.Hits == before {
				t.Fatalf("%s: not read from flash into a hit buffer", c.name)
			}
			if c.body != nil && c.parts == nil && w.heldAtBody <= 0 {
				t.Fatalf("%s: the body was written from a copy (%d bytes held by hits at its writes)", c.name, w.heldAtBody)
			}
			if n := heldBytes(eng); n != 0 {
				t.Fatalf("%s: %d bytes of hit buffers still held after the answer", c.name, n)
			}
		}
	})
}

// A request ServeFast looked up from flash and handed back returns the
// buffers it holds even if the general path never serves it (its
// connection closed first): when it is collected.
func TestHandedBackFindsReleasedUnserved(t *testing.T) {
	small, big := payload(50<<10, 23), payload(3*(64<<10)+7, 24)
	c, up := flashUpstream(t, small, big)
	// Outside a bubble: the cleanup runs on the runtime's own goroutine,
	// in real time (flashEdge's wait for the monitor is a real second).
	eng, h := flashEdge(t, c, up, 64<<10)
	r := httptest.NewRequest("GET", "/cdn/big.mp4", nil) // sliced: handed back
	if _, _, next := h.ServeFast(httptest.NewRecorder(), r, noCORS{}); next == nil || heldBytes(eng) == 0 {
		t.Fatalf("ServeFast answered a sliced object, or holds no buffer (%d bytes)", heldBytes(eng))
	}
	for i := 0; i < 500 && heldBytes(eng) != 0; i++ { // the handed-back request is garbage now
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
	}
	if n := heldBytes(eng); n != 0 {
		t.Fatalf("%d bytes still held by a request nobody serves", n)
	}
}

// discard is a ResponseWriter that keeps nothing of the body.
type discard struct{ h http.Header }

func (d *discard) Header() http.Header         { return d.h }
func (d *discard) Write(p []byte) (int, error) { return len(p), nil }
func (d *discard) WriteHeader(int)             {}

// BenchmarkEdgeFlashHit is an edge hit on a 400 KiB object on flash (the
// in-memory device: the device's own time, a copy there, is not the
// figure), a plain GET through ServeFast ("fast", as the API mounts the
// edge) and through ServeHTTP ("general"). Its allocs/op and B/op show
// whether the hit's bytes are copied out of the read buffer.
func BenchmarkEdgeFlashHit(b *testing.B) {
	seg := payload(400<<10, 25)
	c, up := flashUpstream(b, seg, payload(1000, 26))
	eng, h := flashEdge(b, c, up, 1<<20)
	r := httptest.NewRequest("GET", "/cdn/small.m4s", nil)
	w := &discard{h: http.Header{}}
	for _, bc := range []struct {
		name  string
		serve func()
	}{
		{"fast", func() {
			if _, _, next := h.ServeFast(w, r, noCORS{}); next != nil {
				b.Fatal("not answered by the fast path")
			}
		}},
		{"general", func() { h.ServeHTTP(w, r) }},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(int64(len(seg)))
			b.ReportAllocs()
			hits := eng.Stats().SSD.HitMemory.Hits
			for b.Loop() {
				clear(w.h)
				bc.serve()
			}
			if w.h.Get(HeaderTier) != "ssd" || eng.Stats().SSD.HitMemory.Hits == hits {
				b.Fatalf("not flash hits: tier %q", w.h.Get(HeaderTier))
			}
		})
	}
}

// A flash hit that waits past HitQueueWait for the hits in flight to give
// back flash_hit_memory is a 503 with Retry-After (not the upstream's
// failure), and a hit once they did is served.
func TestFlashHitsBusy(t *testing.T) {
	small, big := payload(50<<10, 27), payload(1000, 28)
	c, up := flashUpstream(t, small, big)
	synctest.Test(t, func(t *testing.T) {
		eng, h, _ := flashEdgeWith(t, c, up, 64<<10, func(o *engine.Options) {
			o.HitMemory, o.HitQueueWait = 64<<10, 100*time.Millisecond
		})
		key := sliceKey(variantKey(objectKey((*h.routes.Load())[0].key, "small.m4s"), ""), 0)
		held := eng.FindHeld(context.Background(), key)
		if held.Tier != tier.SSD || heldBytes(eng) == 0 {
			t.Fatalf("the object is not on flash (%v)", held.Tier)
		}
		for _, fast := range []bool{true, false} {
			w, r := httptest.NewRecorder(), httptest.NewRequest("GET", "/cdn/small.m4s", nil)
			if !fast {
				h.ServeHTTP(w, r)
			} else if _, _, next := h.ServeFast(w, r, noCORS{}); next != nil {
				h.ServeHTTP(w, next)
			}
			if w.Code != http.StatusServiceUnavailable || w.Header().Get("Retry-After") == "" {
				t.Fatalf("fast %v: %d (Retry-After %q) while the hit memory is held, want 503", fast, w.Code, w.Header().Get("Retry-After"))
			}
		}
		held.Release()
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest("GET", "/cdn/small.m4s", nil))
		if w.Code != 200 || !bytes.Equal(w.Body.Bytes(), small) || heldBytes(eng) != 0 {
			t.Fatalf("after release: %d, %d bytes, %d held", w.Code, w.Body.Len(), heldBytes(eng))
		}
	})
}

// A byte damaged on the flash device is never served: the engine's read
// does not verify (the edge no longer checks the record's own checksum of
// a flash hit, TestDecodedRecords), the copy is dropped, and the edge
// fetches the object again, whole or in slices.
func TestDamagedFlashNeverServed(t *testing.T) {
	small, big := payload(50<<10, 29), payload(3*(64<<10)+7, 30)
	c, up := flashUpstream(t, small, big)
	synctest.Test(t, func(t *testing.T) {
		_, h, mem := flashEdgeWith(t, c, up, 64<<10, nil)
		for _, obj := range [][]byte{small, big[2*(64<<10)+100:]} {
			img := make([]byte, mem.Size())
			if _, err := mem.ReadAt(img, 0); err != nil {
				t.Fatal(err)
			}
			at := bytes.Index(img, obj[1000:1100])
			if at < 0 {
				t.Fatal("the object is not on the device")
			}
			block := img[at/4096*4096:][:4096]
			block[at%4096] ^= 0x40
			if _, err := mem.WriteAt(block, int64(at/4096*4096)); err != nil {
				t.Fatal(err)
			}
		}
		before := up.requests("/media/small.m4s") + up.requests("/media/big.mp4")
		for _, p := range []struct {
			path string
			body []byte
		}{{"/cdn/small.m4s", small}, {"/cdn/big.mp4", big}} {
			for _, fast := range []bool{true, false} {
				w, r := httptest.NewRecorder(), httptest.NewRequest("GET", p.path, nil)
				if !fast {
					h.ServeHTTP(w, r)
				} else if _, _, next := h.ServeFast(w, r, noCORS{}); next != nil {
					h.ServeHTTP(w, next)
				}
				if w.Code != 200 || !bytes.Equal(w.Body.Bytes(), p.body) {
					t.Fatalf("%s (fast %v): %d, %d bytes, not the object's", p.path, fast, w.Code, w.Body.Len())
				}
			}
		}
		if up.requests("/media/small.m4s")+up.requests("/media/big.mp4") == before {
			t.Fatal("the damaged copies were not fetched again")
		}
	})
}
