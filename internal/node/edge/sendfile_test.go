package edge

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"path/filepath"
	"reflect"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/strata-media/strata/internal/core/tier"
	"github.com/strata-media/strata/internal/httpapi"
	"github.com/strata-media/strata/internal/httpapi/front"
	"github.com/strata-media/strata/internal/httpapi/httpapitest"
	"github.com/strata-media/strata/internal/node/engine"
	"github.com/strata-media/strata/internal/storage/device"
)

// fileEdge is an edge on an engine whose flash is a file (the zero-copy
// send's case), served through a Front on plain TCP.
type fileEdge struct {
	addr string
	eng  *engine.Engine
	h    *Handler
	up   *upstream
	stop func()
	laid *laidCount // answers the Front sent with a laid header
}

type laidCount struct{ atomic.Int64 }

func (c *laidCount) Inc() { c.Add(1) }

// edgeObjects are the upstream's objects of the file edge tests: a small
// one in one flash chunk, one over several blocks (chunks), one larger
// than the socket buffers take, all whole in their first slice; and one
// sliced (the general path's).
var edgeObjects = map[string][]byte{
	"small.m4s": payload(100<<10, 1),
	"seg.m4s":   payload(700<<10, 2),
	"large.mp4": payload(6<<20, 3),
	"big.mp4":   payload(9<<20, 4),
	"mib.m4s":   payload(1<<20, 5),
	"pad.m4s":   payload(300<<10, 6), // its stored header longer than fileHead (padField)
}

// padField is a response field of pad.m4s, so long that the record's
// header is not in fileRecord's first read.
var padField = strings.Repeat("p", 3*fileHead)

const fileSlice = 8 << 20

// newFileEdge stores edgeObjects on a file device in blocks of block
// bytes, then reopens the engine (with mod's options) on it so that every
// hit is a flash hit.
func newFileEdge(t testing.TB, block int, mod func(*engine.Options)) *fileEdge {
	t.Helper()
	return newFileEdgeOn(t, block, device.FileOptions{}, mod)
}

// newFileEdgeOn is newFileEdge on a device with a page cache descriptor
// as pc asks (its PageCache: flash_page_cache; its PageCacheReads:
// flash_page_cache_ends).
func newFileEdgeOn(t testing.TB, block int, pc device.FileOptions, mod func(*engine.Options)) *fileEdge {
	t.Helper()
	c := newClock()
	up := newUpstream(t, c)
	for name, body := range edgeObjects {
		kv := []string{"Cache-Control", "max-age=3600", "Etag", `"` + name + `"`}
		if name == "pad.m4s" {
			kv = append(kv, "X-Pad", padField)
		}
		up.put("/media/"+name, body, kv...)
	}
	dev, err := device.OpenFile(filepath.Join(t.TempDir(), "flash"), device.FileOptions{Size: max(160*testBlock, 12*int64(block)), PageCache: pc.PageCache, PageCacheReads: pc.PageCacheReads})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { dev.Close() })
	open := func(mod func(*engine.Options)) *fileEdge {
		o := engine.Options{
			Tier:          tier.Options{RAMBytes: 32 << 20, BlockSize: int64(block), MonitorRoom: 1},
			MonitorPeriod: 10 * time.Millisecond, FeedPeriod: 10 * time.Millisecond, NoSync: true,
			Logger: slog.New(slog.DiscardHandler),
		}
		if mod != nil {
			mod(&o)
		}
		eng, err := engine.New(o, dev, nil)
		if err != nil {
			t.Fatal(err)
		}
		log := slog.New(slog.DiscardHandler)
		h, err := New(eng, Options{
			Upstreams: []Upstream{{Prefix: "/cdn/", URL: up.srv.URL + "/media/"}},
			SliceSize: fileSlice, MaxWhole: fileSlice, Now: c.Now, Logger: log,
		})
		if err != nil {
			t.Fatal(err)
		}
		api := httpapi.New(httpapi.Options{Logger: log})
		if err := api.Mount(h); err != nil {
			t.Fatal(err)
		}
		laid := &laidCount{}
		fo := front.Options{Routes: []front.Route{{Prefix: "/cdn/", Handler: fastRoute{h, "GET /cdn/"}}}, Write: 30 * time.Second, Logger: log,
			Counters: front.Counters{Laid: laid}}
		fr := front.New(fo)
		hs := &http.Server{Handler: fr.Wrap(front.FastPath(api.Handler(), fo)), ConnContext: fr.ConnContext}
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		go fr.Serve(ln)            //nolint:errcheck
		go hs.Serve(fr.Listener()) //nolint:errcheck
		stop := func() {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			defer cancel()
			fr.Shutdown(ctx) //nolint:errcheck
			hs.Shutdown(ctx) //nolint:errcheck
			h.Close()
			eng.Close()
		}
		return &fileEdge{addr: ln.Addr().String(), eng: eng, h: h, up: up, stop: stop, laid: laid}
	}
	fe := open(nil)
	for name := range edgeObjects {
		if code, _, _ := fe.get(t, "GET", name, ""); code != 200 {
			t.Fatalf("%s: %d", name, code)
		}
	}
	time.Sleep(time.Second) // the monitor queues the objects for flash
	fe.stop()
	fe = open(mod)
	t.Cleanup(fe.stop)
	return fe
}

// get sends method of /cdn/name (with rng as Range, if set) on a new
// connection and returns the answer.
func (fe *fileEdge) get(t testing.TB, method, name, rng string) (int, http.Header, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, "http://"+fe.addr+"/cdn/"+name, nil)
	if err != nil {
		t.Fatal(err)
	}
	if rng != "" {
		req.Header.Set("Range", rng)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s %s: %v after %d bytes", method, name, err, len(body))
	}
	return resp.StatusCode, resp.Header, body
}

// key is the tier key of the whole response of name.
func (fe *fileEdge) key(name string) string { return TierKey("/cdn/", fe.up.srv.URL+"/media/", name) }

// An edge flash hit of a verified record, whole in its slice, through the
// Front on plain TCP goes out from the device (ssd.file_hits), its body
// only, exact, from a record of one chunk or of many; HEAD, ranges and a
// sliced object (the general path, which reads the pinned hit into
// memory) are answered as ever, and no pin or hit memory is held after;
// from the O_DIRECT descriptor or the page cache's (the record's header
// read from it too).
func TestEdgeFlashHitSendfile(t *testing.T) {
	t.Run("direct", func(t *testing.T) { testEdgeFlashHitSendfile(t, device.FileOptions{}) })
	t.Run("pagecache", func(t *testing.T) { testEdgeFlashHitSendfile(t, device.FileOptions{PageCache: true}) })
	t.Run("pagecache-ends", func(t *testing.T) { testEdgeFlashHitSendfile(t, device.FileOptions{PageCacheReads: true}) })
}

func testEdgeFlashHitSendfile(t *testing.T, pc device.FileOptions) {
	fe := newFileEdgeOn(t, testBlock, pc, nil)
	if dev := fe.eng.Flash().Device().(*device.File); dev.PageCache() != pc.PageCache || dev.PageCacheReads() != (pc.PageCache || pc.PageCacheReads) {
		t.Fatalf("page cache descriptor for sends %v, reads %v; want %+v", dev.PageCache(), dev.PageCacheReads(), pc)
	}
	if seg, ok := fe.eng.FlashSegment(fe.key("seg.m4s")); !ok || len(seg.Chunks) < 2 {
		t.Fatalf("seg.m4s is not on flash in several chunks: %v %+v", ok, seg.Chunks)
	}
	for name := range edgeObjects { // the first flash hit verifies the records
		if code, hdr, _ := fe.get(t, "GET", name, ""); code != 200 || hdr.Get(HeaderTier) != "ssd" {
			t.Fatalf("%s: %d from %q", name, code, hdr.Get(HeaderTier))
		}
	}
	for _, name := range []string{"small.m4s", "seg.m4s", "large.mp4", "pad.m4s"} {
		want := edgeObjects[name]
		before := fe.eng.Stats().SSD
		code, hdr, body := fe.get(t, "GET", name, "")
		if code != 200 || hdr.Get(HeaderTier) != "ssd" || hdr.Get(HeaderCache) != CacheHit || !bytes.Equal(body, want) {
			t.Fatalf("%s: %d from %q (%s), %d bytes of %d, equal %v", name, code, hdr.Get(HeaderTier), hdr.Get(HeaderCache),
				len(body), len(want), bytes.Equal(body, want))
		}
		if hdr.Get("Content-Length") != fmt.Sprint(len(want)) || hdr.Get("Etag") != `"`+name+`"` ||
			name == "pad.m4s" && hdr.Get("X-Pad") != padField {
			t.Fatalf("%s: fields %v", name, hdr)
		}
		// Pinned, and not read into memory after (a fallback).
		st := fe.eng.Stats().SSD
		if st.FileHits == before.FileHits || st.Pins.Rests != before.Pins.Rests {
			t.Fatalf("%s: the flash hit was not sent from the file: %d file hits, pins %+v", name, st.FileHits-before.FileHits, *st.Pins)
		}
		// One hit of the hit memory, however many buffers it took (its
		// header read, its unaligned ends).
		if hits, acq := st.HitMemory.Hits-before.HitMemory.Hits, st.HitMemory.Acquired-before.HitMemory.Acquired; hits != 1 || acq < hits {
			t.Fatalf("%s: one zero-copy hit counted %d hits of hit memory, %d acquisitions", name, hits, acq)
		}
		code, hdr, body = fe.get(t, "HEAD", name, "")
		if code != 200 || len(body) != 0 || hdr.Get("Content-Length") != fmt.Sprint(len(want)) || hdr.Get(HeaderTier) != "ssd" {
			t.Fatalf("HEAD %s: %d, %d bytes, fields %v", name, code, len(body), hdr)
		}
		code, _, body = fe.get(t, "GET", name, "bytes=1000-70999")
		if code != 206 || !bytes.Equal(body, want[1000:71000]) {
			t.Fatalf("range of %s: %d, %d bytes, equal %v", name, code, len(body), bytes.Equal(body, want[1000:min(71000, len(want))]))
		}
	}
	// Its first slice pinned, then read into memory for the general
	// path (Rest).
	rests := fe.eng.Stats().SSD.Pins.Rests
	code, _, body := fe.get(t, "GET", "big.mp4", "")
	if want := edgeObjects["big.mp4"]; code != 200 || !bytes.Equal(body, want) {
		t.Fatalf("big.mp4 (sliced): %d, %d bytes of %d", code, len(body), len(want))
	}
	st := fe.eng.Stats().SSD
	if st.Pins.Rests == rests {
		t.Fatalf("big.mp4's first slice was not handed over from a pin: %+v", *st.Pins)
	}
	if st.Pins.Pinned != 0 || st.HitMemory.HeldBytes != 0 {
		t.Fatalf("after the answers: pins %+v, hit memory %+v", *st.Pins, st.HitMemory)
	}
}

// A flash hit of a record pinned before is answered from what was decoded
// of it then (flashDecoded: no header read from the device, none parsed)
// and with the header the Front laid out for that hit: the same answer
// as the first hit's, field for field, and the same body.
func TestEdgeFlashHitRemembered(t *testing.T) {
	fe := newFileEdgeOn(t, testBlock, device.FileOptions{PageCacheReads: true}, nil)
	names := []string{"small.m4s", "seg.m4s", "large.mp4", "pad.m4s"}
	first := map[string]http.Header{}
	for range 2 { // the first flash hit verifies the records, the second is pinned
		for _, name := range names {
			code, hdr, body := fe.get(t, "GET", name, "")
			if code != 200 || hdr.Get(HeaderTier) != "ssd" || !bytes.Equal(body, edgeObjects[name]) {
				t.Fatalf("%s: %d from %q, %d bytes", name, code, hdr.Get(HeaderTier), len(body))
			}
			first[name] = hdr
		}
	}
	for _, name := range names {
		// pad.m4s's stored header is larger than a record remembered
		// may have: it is decoded at each hit.
		if want := name != "pad.m4s"; fe.h.flashDecoded.has(keyOfSegment(t, fe, name)) != want {
			t.Fatalf("%s: remembered after a flash hit %v, want %v", name, !want, want)
		}
	}
	for round := range 3 {
		laid := fe.laid.Load()
		for i := range 2 * len(names) {
			name := names[i/2] // each name twice in a row: the second within the first's second, even under -race
			code, hdr, body := fe.get(t, "GET", name, "")
			if code != 200 || hdr.Get(HeaderTier) != "ssd" || !bytes.Equal(body, edgeObjects[name]) {
				t.Fatalf("round %d, %s: %d from %q, %d bytes", round, name, code, hdr.Get(HeaderTier), len(body))
			}
			for _, h := range []http.Header{hdr, first[name]} {
				h.Del("Date")
				h.Del("Age")
			}
			if !reflect.DeepEqual(hdr, first[name]) {
				t.Fatalf("round %d, %s: fields %v, the first hit's %v", round, name, hdr, first[name])
			}
		}
		// A hit within the second of the same record's last one sends
		// the header laid out for it (one pair crossing a second's turn
		// lays it out again; not all four).
		if fe.laid.Load() == laid {
			t.Errorf("round %d: no flash hit sent with a laid header", round)
		}
	}
}

// keyOfSegment is the flashDecoded key of name's record on fe's flash.
func keyOfSegment(t *testing.T, fe *fileEdge, name string) flashKey {
	t.Helper()
	seg, ok := fe.eng.FlashSegment(fe.key(name))
	if !ok {
		t.Fatalf("%s is not on flash", name)
	}
	return flashKey{seg.Key, seg.Gen, seg.Size}
}

// With flash_sendfile off, the edge's flash hits are read into hit
// buffers, as before.
func TestEdgeFlashHitNoSendfile(t *testing.T) {
	fe := newFileEdge(t, testBlock, func(o *engine.Options) { o.NoSendfile = true })
	for range 2 {
		for _, name := range []string{"small.m4s", "seg.m4s"} {
			if code, hdr, body := fe.get(t, "GET", name, ""); code != 200 || hdr.Get(HeaderTier) != "ssd" || !bytes.Equal(body, edgeObjects[name]) {
				t.Fatalf("%s: %d from %q, %d bytes", name, code, hdr.Get(HeaderTier), len(body))
			}
		}
	}
	if st := fe.eng.Stats().SSD; st.FileHits != 0 || st.HitMemory.Hits == 0 {
		t.Fatalf("with sendfile off: %d file hits, %d buffered", st.FileHits, st.HitMemory.Hits)
	}
}

// A block rewritten while a slow client's edge flash hit is being sent
// from it: the write waits for the sender to yield (the rest read into
// memory while pinned), and the client gets the body, never a byte of
// the rewritten block.
func TestEdgeSendfileBlockRewrittenDuringSlowSend(t *testing.T) {
	fe := newFileEdge(t, testBlock, nil)
	const name = "large.mp4"
	want := edgeObjects[name]
	if code, _, _ := fe.get(t, "GET", name, ""); code != 200 { // verifies the records
		t.Fatal(code)
	}
	seg, ok := fe.eng.FlashSegment(fe.key(name))
	if !ok {
		t.Fatalf("%s is not on flash", name)
	}
	d := net.Dialer{Control: func(_, _ string, rc syscall.RawConn) error {
		return rc.Control(func(fd uintptr) { syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4096) }) //nolint:errcheck
	}}
	c, err := d.Dial("tcp", fe.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	before := fe.eng.Stats().SSD
	fmt.Fprintf(c, "GET /cdn/%s HTTP/1.1\r\nHost: x\r\n\r\n", name)
	for stop := time.Now().Add(10 * time.Second); fe.eng.Stats().SSD.FileHits == before.FileHits; {
		if time.Now().After(stop) {
			t.Fatal("the hit was not sent from the file")
		}
		time.Sleep(time.Millisecond)
	}
	// The feed stopped, so that this is the one writer: every block of
	// the record rewritten, empty, under a new generation.
	fe.eng.Close()
	fl := fe.eng.Flash()
	for i, ch := range seg.Chunks {
		if i > 0 && ch.Block == seg.Chunks[i-1].Block {
			continue
		}
		if err := fl.WriteBlock(&tier.BlockWrite{Block: ch.Block, Gen: 1<<40 + uint64(i), Used: 4096}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := fl.ReadSegment(seg); err == nil {
		t.Fatal("the record still reads from its rewritten blocks")
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(resp.Body)
	if err != nil || !bytes.Equal(body, want) {
		t.Fatalf("after the rewrite: %v, %d bytes of %d, equal %v", err, len(body), len(want), bytes.Equal(body, want))
	}
	if st := fe.eng.Stats().SSD; st.Pins.Rests == before.Pins.Rests || st.Pins.Pinned != 0 {
		t.Fatalf("the send never yielded: %+v", *st.Pins)
	}
}

// BenchmarkEdgeFlashHitFront is an edge flash hit of a verified 1 MiB
// slice (a whole segment) through the Front, on a plain TCP connection
// kept alive, read by a client in the same process that splices the body
// to /dev/null: "buffered" reads the record into a hit buffer and writes
// its body (flash_sendfile = false), "sendfile" sends the body from the
// device's file. cpu-us/op is the process's CPU time (user + system, the
// client's share included, the same in both) per hit.
// docs/results/2026-11-27-flashhit-sendfile/ has the command.
func BenchmarkEdgeFlashHitFront(b *testing.B) {
	for _, c := range []struct {
		name string
		off  bool
	}{{"buffered", true}, {"sendfile", false}} {
		b.Run(c.name, func(b *testing.B) {
			fe := newFileEdge(b, 4<<20, func(o *engine.Options) { o.NoSendfile = c.off })
			const name = "mib.m4s"
			want := edgeObjects[name]
			if code, hdr, body := fe.get(b, "GET", name, ""); code != 200 || hdr.Get(HeaderTier) != "ssd" || !bytes.Equal(body, want) {
				b.Fatalf("%s: %d from %q", name, code, hdr.Get(HeaderTier)) // and verified
			}
			conn, err := net.Dial("tcp", fe.addr)
			if err != nil {
				b.Fatal(err)
			}
			defer conn.Close()
			req := []byte("GET /cdn/" + name + " HTTP/1.1\r\nHost: bench\r\n\r\n")
			get := httpapitest.SpliceClient(b, conn.(*net.TCPConn), req, int64(len(want)), HeaderTier+": ssd")
			get()
			before := fe.eng.Stats().SSD.FileHits
			b.SetBytes(int64(len(want)))
			b.ReportAllocs()
			var r0, r1 syscall.Rusage
			syscall.Getrusage(syscall.RUSAGE_SELF, &r0) //nolint:errcheck
			for b.Loop() {
				get()
			}
			syscall.Getrusage(syscall.RUSAGE_SELF, &r1) //nolint:errcheck
			cpu := time.Duration(r1.Utime.Nano() - r0.Utime.Nano() + r1.Stime.Nano() - r0.Stime.Nano())
			b.ReportMetric(float64(cpu.Microseconds())/float64(b.N), "cpu-us/op")
			st := fe.eng.Stats().SSD
			if files := st.FileHits - before; c.off != (files == 0) {
				b.Fatalf("%d of %d hits sent from the file", files, b.N)
			}
			seg, _ := fe.eng.FlashSegment(fe.key(name))
			b.Logf("%s, %d bytes in %d chunks: %d file hits, pins %+v, hit memory %+v", name, len(want), len(seg.Chunks),
				st.FileHits-before, *st.Pins, st.HitMemory)
		})
	}
}

// A pinned flash hit whose header finds the hit memory full past its
// queue wait is a 503 from the general path, which waits once more, not
// twice (reading the whole record into the same full memory first).
func TestEdgeSendfileHitMemoryFull(t *testing.T) {
	fe := newFileEdge(t, testBlock, func(o *engine.Options) {
		o.HitMemory, o.HitQueueWait = 64<<10, 50*time.Millisecond // small.m4s holds all of it
	})
	if code, _, _ := fe.get(t, "GET", "small.m4s", ""); code != 200 { // verifies the records
		t.Fatal(code)
	}
	held := fe.eng.FindHeld(context.Background(), fe.key("small.m4s"))
	defer held.Release()
	if held.Tier != tier.SSD || held.Data == nil {
		t.Fatalf("small.m4s is not a buffered flash hit: %v", held.Tier)
	}
	before := fe.eng.Stats().SSD
	code, hdr, _ := fe.get(t, "GET", "small.m4s", "")
	st := fe.eng.Stats().SSD
	if code != http.StatusServiceUnavailable || hdr.Get("Retry-After") == "" {
		t.Fatalf("%d (Retry-After %q) while the hit memory is held, want 503", code, hdr.Get("Retry-After"))
	}
	if st.FileHits == before.FileHits || st.HitMemory.Busy-before.HitMemory.Busy != 2 {
		t.Fatalf("%d file hits, %d waits past the queue's deadline (want the header's and the general path's)",
			st.FileHits-before.FileHits, st.HitMemory.Busy-before.HitMemory.Busy)
	}
}
