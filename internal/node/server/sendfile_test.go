package server

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
	"slices"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/strata-media/strata/internal/core/tier"
	"github.com/strata-media/strata/internal/httpapi"
	"github.com/strata-media/strata/internal/httpapi/front"
	"github.com/strata-media/strata/internal/httpapi/httpapitest"
	"github.com/strata-media/strata/internal/ident"
	"github.com/strata-media/strata/internal/node/engine"
	"github.com/strata-media/strata/internal/storage/device"
	"github.com/strata-media/strata/internal/storage/origin"
	"github.com/strata-media/strata/internal/storage/store"
	"github.com/strata-media/strata/internal/workload"
)

// frontServer serves the videos module through a Front on a plain TCP
// connection, over an engine whose flash is a file (sendfile's case).
func frontServer(t testing.TB, big bool, mod func(*engine.Options)) (addr string, syn *origin.Synthetic, eng *engine.Engine) {
	t.Helper()
	return frontServerOn(t, big, false, mod, nil)
}

// frontServerOn is frontServer whose flash file has a page cache
// descriptor if pc (flash_page_cache), and whose videos route the Front
// asks through sends, if not nil.
func frontServerOn(t testing.TB, big, pc bool, mod func(*engine.Options), sends *fileSends) (addr string, syn *origin.Synthetic, eng *engine.Engine) {
	t.Helper()
	dso := workload.DatasetOptions{Titles: 2, AllRenditions: true, MaxLength: 30 * time.Second, Efficiency: 1, Seed: 5}
	size, opts := int64(64<<20), engine.Options{Tier: tier.Options{RAMBytes: 4 << 20, BlockSize: 4 << 20}}
	if big {
		// Objects of several MiB: more than a loopback socket's buffers
		// take (its MSS is 64 KiB: they grow to MiBs at once).
		dso = workload.DatasetOptions{Titles: 2, AllRenditions: true, MaxLength: 60 * time.Second, SegmentDuration: 30 * time.Second, Efficiency: 1, Seed: 5}
		size, opts = 128<<20, engine.Options{Tier: tier.Options{RAMBytes: 16 << 20, BlockSize: 8 << 20}}
	}
	ds := workload.NewDataset(dso)
	syn, err := origin.NewSynthetic(ds, origin.SyntheticOptions{Seed: 5})
	if err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.DiscardHandler)
	dev, err := device.OpenFile(filepath.Join(t.TempDir(), "flash"), device.FileOptions{Size: size, PageCache: pc})
	if err != nil {
		t.Fatal(err)
	}
	opts.Threshold, opts.NoSync, opts.Logger = 2, true, log
	if mod != nil {
		mod(&opts)
	}
	eng, err = engine.New(opts, dev, syn)
	if err != nil {
		t.Fatal(err)
	}
	videos := NewVideos(eng, syn, Options{Logger: log})
	api := httpapi.New(httpapi.Options{Logger: log})
	if err := api.Mount(videos); err != nil {
		t.Fatal(err)
	}
	var route front.FastHandler = videos
	if sends != nil {
		route = sends.route(videos)
	}
	fo := front.Options{Routes: []front.Route{{Prefix: videosPrefix, Handler: route}}, Write: 30 * time.Second, Logger: log}
	fr := front.New(fo)
	hs := &http.Server{Handler: fr.Wrap(front.FastPath(api.Handler(), fo)), ConnContext: fr.ConnContext}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go fr.Serve(ln)            //nolint:errcheck
	go hs.Serve(fr.Listener()) //nolint:errcheck
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		fr.Shutdown(ctx) //nolint:errcheck
		hs.Shutdown(ctx) //nolint:errcheck
		eng.Close()
		dev.Close()
	})
	return ln.Addr().String(), syn, eng
}

// onFlash requests objects until the largest ones are flash hits, and
// returns them, largest first.
func onFlash(t testing.TB, addr string, syn *origin.Synthetic) []ident.Object {
	t.Helper()
	objs := objectsOf(t, syn)
	size := func(o ident.Object) int { b, _ := syn.Expected(o); return len(b) }
	sort.Slice(objs, func(i, j int) bool { return size(objs[i]) > size(objs[j]) })
	for range 50 {
		var hits []ident.Object
		for _, o := range objs {
			resp, err := http.Get("http://" + addr + "/videos/" + o.Path())
			if err != nil {
				t.Fatal(err)
			}
			io.Copy(io.Discard, resp.Body) //nolint:errcheck
			resp.Body.Close()
			if resp.Header.Get("X-Strata-Tier") == "ssd" {
				hits = append(hits, o)
			}
		}
		if len(hits) > 0 {
			return hits
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatal("no flash hit")
	return nil
}

// A verified flash hit through the Front on plain TCP goes out with
// sendfile(2): the object's bytes, its pin released after. With a page
// cache descriptor (flash_page_cache) it goes from the page cache: its
// pages are cached after, and not without one.
func TestFlashHitSendfile(t *testing.T) {
	t.Run("direct", func(t *testing.T) { testFlashHitSendfile(t, false) })
	t.Run("pagecache", func(t *testing.T) { testFlashHitSendfile(t, true) })
}

func testFlashHitSendfile(t *testing.T, pc bool) {
	addr, syn, eng := frontServerOn(t, false, pc, nil, nil)
	hits := onFlash(t, addr, syn)
	before := eng.Stats().SSD.FileHits
	for _, o := range hits[:min(len(hits), 5)] {
		resp, err := http.Get("http://" + addr + "/videos/" + o.Path())
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		want, _ := syn.Expected(o)
		if resp.StatusCode != 200 || resp.Header.Get("X-Strata-Tier") != "ssd" || !bytes.Equal(body, want) {
			t.Fatalf("%s: %d from %q, %d bytes (want %d, equal %v)", o, resp.StatusCode, resp.Header.Get("X-Strata-Tier"),
				len(body), len(want), bytes.Equal(body, want))
		}
	}
	st := eng.Stats().SSD
	if st.FileHits == before {
		t.Fatalf("no flash hit went out with sendfile: %+v", st)
	}
	// The client may have the last byte before the server's handler has
	// returned and released its pin.
	for stop := time.Now().Add(10 * time.Second); st.Pins.Pinned != 0; st = eng.Stats().SSD {
		if time.Now().After(stop) {
			t.Fatalf("pins held after the answers: %+v", *st.Pins)
		}
		time.Sleep(time.Millisecond)
	}
	if got := pageCached(t, eng, hits[0]); got != pc {
		t.Fatalf("%s: in the page cache after its hits %v, want %v", hits[0], got, pc)
	}
}

// pageCached reports whether the flash bytes of o's hit are all in the
// page cache, as a read that must not wait for the device (RWF_NOWAIT)
// through a buffered descriptor of the flash file finds them.
func pageCached(t *testing.T, eng *engine.Engine, o ident.Object) bool {
	t.Helper()
	seg, ok := eng.FlashSegment(o.Key())
	if !ok {
		t.Fatalf("%s is not on flash", o)
	}
	h := eng.Flash().PinHit(context.Background(), seg, store.NewHits(1<<20, time.Second, 4096))
	if h == nil {
		t.Fatalf("%s: not pinned", o)
	}
	defer h.Release()
	dev := eng.Flash().Device().(*device.File)
	fd, err := syscall.Open(dev.Path(), syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Close(fd)
	for i := range h.Parts() {
		off, n, _, err := h.Part(i)
		if err != nil {
			t.Fatal(err)
		}
		k, err := unix.Preadv2(fd, [][]byte{make([]byte, n)}, off, unix.RWF_NOWAIT)
		if err != nil || int64(k) != n {
			return false
		}
	}
	return true
}

// NoSendfile: every flash hit is read into a hit buffer, as before.
func TestFlashHitNoSendfile(t *testing.T) {
	addr, syn, eng := frontServer(t, false, func(o *engine.Options) { o.NoSendfile = true })
	onFlash(t, addr, syn)
	if st := eng.Stats().SSD; st.FileHits != 0 || st.HitMemory.Hits == 0 {
		t.Fatalf("with sendfile off: %d file hits, %d buffered", st.FileHits, st.HitMemory.Hits)
	}
}

// fileSends watches the Front's sends of file bodies on the videos route
// (front.FileBody): how many slice deadlines they passed, at least.
type fileSends struct {
	mu sync.Mutex
	// yields counts the bodies' Yield calls: the sender asks once per
	// part, once per slice it starts, and once after each slice
	// deadline it passes (then starting a slice again, in a file part).
	// bound is what the parts seen so far ask without a deadline passed:
	// one per part, plus one per SendSlice of a file part; and one for
	// the part asked next, not seen yet.
	yields, bound int
	nparts        int // parts asked for
	laid          int // answers sent with a laid header (front.LaidWriter)
}

// parts is how many parts of file bodies the sends have asked for.
func (s *fileSends) parts() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.nparts
}

// deadlines is a lower bound on the slice deadlines the sends passed.
func (s *fileSends) deadlines() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.yields - s.bound - 1
}

func (s *fileSends) route(h front.FastHandler) front.FastHandler { return sendsRoute{h, s} }

type sendsRoute struct {
	h front.FastHandler
	s *fileSends
}

func (r sendsRoute) ServeFast(w http.ResponseWriter, req *http.Request, c front.CORS) (string, int, *http.Request) {
	if fw, ok := w.(front.FileWriter); ok {
		w = sendsWriter{w, fw, r.s}
	}
	return r.h.ServeFast(w, req, c)
}

type sendsWriter struct {
	http.ResponseWriter
	fw front.FileWriter
	s  *fileSends
}

func (w sendsWriter) CanSendFile() bool { return w.fw.CanSendFile() }

// Laid and SendFileLaid are the Front's (front.LaidWriter), the laid
// answers counted.
func (w sendsWriter) Laid() (*front.Laid, bool) {
	if lw, ok := w.fw.(front.LaidWriter); ok {
		return lw.Laid()
	}
	return nil, false
}

func (w sendsWriter) SendFileLaid(l *front.Laid, b front.FileBody) (int64, error, bool) {
	lw, ok := w.fw.(front.LaidWriter)
	if !ok {
		return 0, nil, false
	}
	n, err, ok := lw.SendFileLaid(l, sendsBody{b, w.s})
	if ok {
		w.s.mu.Lock()
		w.s.laid++
		w.s.mu.Unlock()
	}
	return n, err, ok
}

func (w sendsWriter) SendFile(b front.FileBody) (int64, error) {
	return w.fw.SendFile(sendsBody{b, w.s})
}

type sendsBody struct {
	front.FileBody
	s *fileSends
}

// Buffered and FD are the body's own (a RAM hit's memory file is sent
// without slices: front.BufferedFileBody).
func (b sendsBody) Buffered() bool {
	bb, ok := b.FileBody.(front.BufferedFileBody)
	return ok && bb.Buffered()
}

func (b sendsBody) FD() int { return b.FileBody.(front.BufferedFileBody).FD() }

func (b sendsBody) Yield() bool {
	b.s.mu.Lock()
	b.s.yields++
	b.s.mu.Unlock()
	return b.FileBody.Yield()
}

func (b sendsBody) Part(i int) (off, n int64, mem []byte, err error) {
	off, n, mem, err = b.FileBody.Part(i)
	b.s.mu.Lock()
	b.s.nparts++
	b.s.bound++
	if mem == nil {
		b.s.bound += int((n + front.SendSlice - 1) / front.SendSlice)
	}
	b.s.mu.Unlock()
	return off, n, mem, err
}

// A client that stops reading holds its flash hit's pin, not hit memory
// (the socket's buffers hold what went out): across many slices'
// deadlines the hit holds no more than its chunks' unaligned ends in hit
// buffers (none from the page cache), and the client then reads the
// object whole. The test waits until the send has passed 5 slice
// deadlines, as the Front's sender counts them (its file body's Yield
// calls), however long that takes.
func TestSendfileSlowClientHoldsNoHitMemory(t *testing.T) {
	t.Run("direct", func(t *testing.T) { testSendfileSlowClient(t, false) })
	t.Run("pagecache", func(t *testing.T) { testSendfileSlowClient(t, true) })
}

func testSendfileSlowClient(t *testing.T, pc bool) {
	sends := &fileSends{}
	addr, syn, eng := frontServerOn(t, true, pc, nil, sends)
	// An object more than the socket buffers take (the kernel's send
	// buffer grows to 4 MiB), so that the send stalls: under load the
	// first flash hits may be smaller objects only.
	o := onFlash(t, addr, syn)[0]
	want, _ := syn.Expected(o)
	for i := 0; len(want) < 6<<20; i++ {
		if i == 20 {
			t.Fatalf("no object of 6 MiB or more on flash; the largest is %d bytes", len(want))
		}
		o = onFlash(t, addr, syn)[0]
		want, _ = syn.Expected(o)
	}
	c, before := slowClient(t, addr, eng, o.Path())
	defer c.Close()
	for stop := time.Now().Add(time.Minute); sends.deadlines() < 5; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(stop) || eng.Stats().SSD.Pins.Pinned == 0 {
			t.Fatalf("%d bytes to a client that reads nothing: the send ended or passed %d slice deadlines in a minute; pins %+v",
				len(want), sends.deadlines(), *eng.Stats().SSD.Pins)
		}
	}
	st := eng.Stats().SSD
	if st.Pins.Pinned == 0 || st.Pins.Rests != before.Pins.Rests {
		t.Fatalf("%d bytes to a client that reads nothing: pins %+v; the send ended or left the file", len(want), *st.Pins)
	}
	if st.HitMemory.HeldBytes > 64<<10 || pc && st.HitMemory.HeldBytes != 0 {
		t.Fatalf("a stalled send holds %d bytes of hit memory", st.HitMemory.HeldBytes)
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(resp.Body)
	if err != nil || !bytes.Equal(body, want) || !strings.EqualFold(resp.Header.Get("X-Strata-Tier"), "ssd") {
		t.Fatalf("after the stall: %v, %d bytes of %d, equal %v", err, len(body), len(want), bytes.Equal(body, want))
	}
	for stop := time.Now().Add(10 * time.Second); eng.Stats().SSD.Pins.Pinned != 0; time.Sleep(time.Millisecond) {
		if time.Now().After(stop) {
			t.Fatal("the pin is held after the answer")
		}
	}
}

// slowClient sends a GET of /videos/path on a connection whose receive
// window is small (set before it connects: the socket buffers absorb
// little of the answer) and returns once its hit is being sent from the
// file, with the flash counters from before the request.
func slowClient(t *testing.T, addr string, eng *engine.Engine, path string) (net.Conn, engine.SSDStats) {
	t.Helper()
	d := net.Dialer{Control: func(_, _ string, rc syscall.RawConn) error {
		return rc.Control(func(fd uintptr) { syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4096) }) //nolint:errcheck
	}}
	c, err := d.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	before := eng.Stats().SSD
	fmt.Fprintf(c, "GET /videos/%s HTTP/1.1\r\nHost: x\r\n\r\n", path)
	for stop := time.Now().Add(10 * time.Second); eng.Stats().SSD.FileHits == before.FileHits; {
		if time.Now().After(stop) {
			c.Close()
			t.Fatal("the hit was not sent from the file")
		}
		time.Sleep(time.Millisecond)
	}
	return c, before
}

// A block rewritten while a slow client's flash hit is being sent from
// it (from the O_DIRECT descriptor or the page cache's): the write waits
// for the sender to yield (its rest copied into memory while pinned), and
// the client gets the object, never a byte of the rewritten block. The
// whole answer may be in the socket's buffers before the rewrite (the
// server's send buffer grows to MiBs; more so for spliced page cache
// pages, which take no copy): the rewrite then finds no pin, and drops
// those pages from the page cache without changing them; the client gets
// the object all the same.
func TestSendfileBlockRewrittenDuringSlowSend(t *testing.T) {
	t.Run("direct", func(t *testing.T) { testSendfileBlockRewritten(t, false) })
	t.Run("pagecache", func(t *testing.T) { testSendfileBlockRewritten(t, true) })
}

func testSendfileBlockRewritten(t *testing.T, pc bool) {
	addr, syn, eng := frontServerOn(t, true, pc, nil, nil)
	o := onFlash(t, addr, syn)[0]
	want, _ := syn.Expected(o)
	seg, ok := eng.FlashSegment(o.Key())
	if !ok {
		t.Fatalf("%s is not on flash", o)
	}
	c, before := slowClient(t, addr, eng, o.Path())
	defer c.Close()
	// The feed stopped, so that this is the one writer: every block of
	// the segment rewritten, empty, under a new generation.
	eng.Close()
	fl := eng.Flash()
	for i, ch := range seg.Chunks {
		if i > 0 && ch.Block == seg.Chunks[i-1].Block {
			continue
		}
		if err := fl.WriteBlock(&tier.BlockWrite{Block: ch.Block, Gen: 1<<40 + uint64(i), Used: 4096}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := fl.ReadSegment(seg); err == nil {
		t.Fatal("the segment still reads from its rewritten blocks")
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(resp.Body)
	if err != nil || !bytes.Equal(body, want) {
		t.Fatalf("after the rewrite: %v, %d bytes of %d, equal %v", err, len(body), len(want), bytes.Equal(body, want))
	}
	st := eng.Stats().SSD
	if st.Pins.WriterWaits == before.Pins.WriterWaits && st.Pins.Pinned == 0 {
		t.Logf("the answer was in the socket's buffers before the rewrite: %+v", *st.Pins)
		return
	}
	if st.Pins.Rests == before.Pins.Rests || st.Pins.Pinned != 0 {
		t.Fatalf("the send never yielded: %+v", *st.Pins)
	}
}

// BenchmarkFlashHitFront is a flash hit of a verified segment of about
// 1 MiB through the Front, on a plain TCP connection kept alive, read by
// a client in the same process: "buffered" reads it into a hit buffer and
// writes that (flash_sendfile = false), "sendfile" sends it from the
// device's file. cpu-us/op is the process's CPU time (user + system, the
// client's share included, the same in both) per hit.
// docs/results/2026-11-27-flashhit-sendfile/ has the command.
func BenchmarkFlashHitFront(b *testing.B) {
	for _, c := range []struct {
		name string
		off  bool
	}{{"buffered", true}, {"sendfile", false}} {
		b.Run(c.name, func(b *testing.B) {
			addr, syn, eng := frontServer(b, false, func(o *engine.Options) { o.NoSendfile = c.off })
			// The same object in both: the largest of at most 1 MiB,
			// once it is a flash hit.
			var o ident.Object
			var size int
			for _, h := range objectsOf(b, syn) {
				if w, _ := syn.Expected(h); len(w) <= 1<<20 && len(w) > size {
					o, size = h, len(w)
				}
			}
			for i := 0; !slices.Contains(onFlash(b, addr, syn), o); i++ {
				if i == 20 {
					b.Fatalf("%s is never a flash hit", o)
				}
			}
			want, _ := syn.Expected(o)
			conn, err := net.Dial("tcp", addr)
			if err != nil {
				b.Fatal(err)
			}
			defer conn.Close()
			req := []byte("GET /videos/" + o.Path() + " HTTP/1.1\r\nHost: bench\r\n\r\n")
			get := httpapitest.SpliceClient(b, conn.(*net.TCPConn), req, int64(len(want)), "X-Strata-Tier: ssd")
			get()
			before := eng.Stats().SSD.FileHits
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
			st := eng.Stats().SSD
			if files := st.FileHits - before; c.off != (files == 0) {
				b.Fatalf("%d of %d hits sent from the file", files, b.N)
			}
			b.Logf("%s, %d bytes: %d file hits, pins %+v, checksums %+v", o, len(want), st.FileHits-before, *st.Pins, *st.Checksums)
		})
	}
}
