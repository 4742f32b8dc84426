package files

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/strata-media/strata/internal/httpapi"
	"github.com/strata-media/strata/internal/httpapi/httpapitest"
	"github.com/strata-media/strata/internal/storage/device"
)

const testBlock = 256 << 10

// wholeBlocks fails writes that are not whole, aligned blocks.
type wholeBlocks struct {
	device.Device
	bad, ok atomic.Int64
}

func (w *wholeBlocks) WriteAt(p []byte, off int64) (int, error) {
	if len(p) != testBlock || off%testBlock != 0 {
		w.bad.Add(1)
	} else {
		w.ok.Add(1)
	}
	return w.Device.WriteAt(p, off)
}

func content(n int, seed byte) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*31) ^ seed
	}
	return b
}

// pipeListener is a net.Listener whose connections are net.Pipe ends, so
// that a server and its clients run inside a synctest bubble, where
// blocking on a pipe is durable and time is fake.
type pipeListener struct {
	conns chan net.Conn
	done  chan struct{}
	once  sync.Once
}

func newPipeListener() *pipeListener {
	return &pipeListener{conns: make(chan net.Conn), done: make(chan struct{})}
}

func (l *pipeListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

func (l *pipeListener) Close() error { l.once.Do(func() { close(l.done) }); return nil }

func (l *pipeListener) Addr() net.Addr { return pipeAddr{} }

// dial connects a client to the listener's server.
func (l *pipeListener) dial(ctx context.Context, _, _ string) (net.Conn, error) {
	client, server := net.Pipe()
	select {
	case l.conns <- server:
		return client, nil
	case <-l.done:
		return nil, net.ErrClosed
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

type pipeAddr struct{}

func (pipeAddr) Network() string { return "pipe" }
func (pipeAddr) String() string  { return "pipe" }

// server is a Tier's routes served over pipes, and a client of them.
type server struct {
	client *http.Client
}

// serve serves tr's routes until the test ends, when it also closes tr.
// Call it inside a synctest bubble.
func serve(t *testing.T, tr *Tier) *server {
	t.Helper()
	l := newPipeListener()
	srv := &http.Server{Handler: mountTier(t, tr)}
	go srv.Serve(l)
	tp := &http.Transport{DialContext: l.dial}
	t.Cleanup(func() {
		tp.CloseIdleConnections()
		srv.Close()
		tr.Close()
	})
	return &server{client: &http.Client{Transport: tp}}
}

const base = "http://strata.test"

// testToken is the admin token of the test servers' PUT.
const testToken = "tok"

// mountTier serves tr's module on the real HTTP edge.
func mountTier(t *testing.T, tr *Tier) http.Handler {
	t.Helper()
	api := httpapi.New(httpapi.Options{AdminToken: testToken, Logger: slog.New(slog.DiscardHandler)})
	if err := api.Mount(tr); err != nil {
		t.Fatal(err)
	}
	return api.Handler()
}

func testTier(t *testing.T, o Options) (*Tier, *server) {
	t.Helper()
	o.Dir, o.BlockSize, o.Logger = t.TempDir(), testBlock, slog.New(slog.DiscardHandler)
	tr, err := Open(o)
	if err != nil {
		t.Fatal(err)
	}
	return tr, serve(t, tr)
}

func put(t *testing.T, ts *server, id string, data []byte) {
	t.Helper()
	if resp, body := httpapitest.DoWith(t, ts.client, "PUT", base+"/files/"+id, bytes.NewReader(data), httpapitest.Bearer(testToken)...); resp.StatusCode != 201 {
		t.Fatalf("PUT %s: %s %s", id, resp.Status, body)
	}
}

// get reads file id, or its range rng if not empty.
func get(t *testing.T, ts *server, id, rng string) (*http.Response, []byte) {
	t.Helper()
	return httpapitest.DoWith(t, ts.client, "GET", base+"/files/"+id, nil, rangeField(rng)...)
}

// rangeField is the Range field rng as header pairs: none if empty.
func rangeField(rng string) []string {
	if rng == "" {
		return nil
	}
	return []string{"Range", rng}
}

// A popular file moves to flash while it is served, written in whole
// blocks, and is then served from flash with the right bytes and ranges.
func TestPopularFileMovesToFlash(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		dev := &wholeBlocks{Device: device.NewMem(64*testBlock, 4096)}
		tr, ts := testTier(t, Options{Flash: dev})
		hot, cold := content(3*testBlock+1234, 1), content(testBlock, 2)
		put(t, ts, "hot.mp4", hot)
		put(t, ts, "cold.bin", cold)
		if _, body := get(t, ts, "hot.mp4", ""); !bytes.Equal(body, hot) {
			t.Fatal("wrong bytes from disk")
		}
		synctest.Wait() // the copier and the feed run without time passing
		st := tr.Stats()
		if st.ResidentFiles != 1 || st.Installed != 1 || st.BlocksWritten != 4 {
			t.Fatalf("not copied to flash in 4 blocks: %+v", st)
		}
		resp, body := get(t, ts, "hot.mp4", "")
		if resp.Header.Get("X-Strata-Tier") != "flash" || !bytes.Equal(body, hot) {
			t.Fatalf("served from %s, %d bytes", resp.Header.Get("X-Strata-Tier"), len(body))
		}
		for _, r := range [][2]int{{0, 9}, {testBlock - 10, testBlock + 10}, {len(hot) - 5, len(hot) - 1}} {
			resp, body := get(t, ts, "hot.mp4", fmt.Sprintf("bytes=%d-%d", r[0], r[1]))
			if resp.StatusCode != 206 || !bytes.Equal(body, hot[r[0]:r[1]+1]) {
				t.Fatalf("range %v: %d", r, resp.StatusCode)
			}
		}
		if dev.bad.Load() != 0 || dev.ok.Load() == 0 {
			t.Fatalf("flash writes: %d whole blocks, %d others", dev.ok.Load(), dev.bad.Load())
		}
		if _, body := get(t, ts, "cold.bin", ""); !bytes.Equal(body, cold) {
			t.Fatal("cold file")
		}
	})
}

// A stream that would overload the disk is refused with 503 and
// Retry-After before any byte is sent; its slot frees when a stream ends.
func TestAdmissionRefusesOverload(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tr, ts := testTier(t, Options{DiskBandwidth: 1000e3, DefaultBitrate: 400e3})
		data := content(4<<20, 3) // a pipe buffers nothing: unread, the handlers block
		put(t, ts, "a.bin", data)
		// Two slow readers hold 800 kB/s of the disk's 1000 kB/s.
		ctx, cancel := context.WithCancel(context.Background())
		var bodies []io.ReadCloser
		for range 2 {
			req, _ := http.NewRequestWithContext(ctx, "GET", base+"/files/a.bin", nil)
			resp, err := ts.client.Do(req)
			if err != nil || resp.StatusCode != 200 {
				t.Fatalf("stream: %v", err)
			}
			bodies = append(bodies, resp.Body)
		}
		resp, _ := get(t, ts, "a.bin", "")
		if resp.StatusCode != 503 || resp.Header.Get("Retry-After") == "" {
			t.Fatalf("third stream: %d, Retry-After %q", resp.StatusCode, resp.Header.Get("Retry-After"))
		}
		if st := tr.Stats(); st.Rejected != 1 || st.Reserved["disk"] != 800e3 {
			t.Fatalf("stats %+v", st)
		}
		cancel()
		for _, b := range bodies {
			b.Close()
		}
		synctest.Wait() // the handlers see their clients gone and release
		if st := tr.Stats(); st.Reserved["disk"] != 0 {
			t.Fatalf("%d B/s still reserved after the streams ended", st.Reserved["disk"])
		}
		if resp, body := get(t, ts, "a.bin", ""); resp.StatusCode != 200 || !bytes.Equal(body, data) {
			t.Fatalf("after the streams ended: %d", resp.StatusCode)
		}
	})
}

// An admitted stream read at its bitrate is served at that rate: a player
// consuming 1 MiB/s (in the bubble's fake time) gets 2 MiB within its 2 s
// play-out time, never waiting on the server.
func TestAdmittedStreamKeepsItsRate(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		_, ts := testTier(t, Options{DefaultBitrate: 1 << 20})
		data := content(2<<20, 4)
		put(t, ts, "v.bin", data)
		resp, err := ts.client.Get(base + "/files/v.bin")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		start := time.Now()
		buf := make([]byte, 64<<10)
		var got []byte
		for {
			n, err := resp.Body.Read(buf)
			got = append(got, buf[:n]...)
			if err != nil {
				break
			}
			// Never ahead of its play-out clock.
			time.Sleep(time.Duration(float64(len(got))/(1<<20)*float64(time.Second)) - time.Since(start))
		}
		if !bytes.Equal(got, data) {
			t.Fatal("wrong bytes")
		}
		if el := time.Since(start); el > 2*time.Second {
			t.Fatalf("2 MiB at 1 MiB/s took %v of play-out time: the stream stalled", el)
		}
	})
}

func TestPutRejects(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		_, ts := testTier(t, Options{})
		for id, want := range map[string]int{"..": 400, "x.json": 400} {
			req, _ := http.NewRequest("PUT", base+"/files/"+id, bytes.NewReader([]byte("x")))
			req.Header.Set("Authorization", "Bearer "+testToken)
			resp, err := ts.client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != want && resp.StatusCode != 404 {
				t.Errorf("PUT %s: %d", id, resp.StatusCode)
			}
		}
		if resp, _ := get(t, ts, "missing", ""); resp.StatusCode != 404 {
			t.Errorf("missing: %d", resp.StatusCode)
		}
	})
}

// makeResident requests a file and lets the copier and the feed run (no
// time passes) until its copy is on flash.
func makeResident(t *testing.T, tr *Tier, ts *server, id string, want int) {
	t.Helper()
	get(t, ts, id, "")
	synctest.Wait()
	if tr.Stats().ResidentFiles < want {
		t.Fatalf("%s not copied to flash: %+v", id, tr.Stats())
	}
}

// A replaced file is never served from the old version's flash copy, and
// the copy's blocks are freed.
func TestReplaceDropsOldCopy(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tr, ts := testTier(t, Options{Flash: device.NewMem(64*testBlock, 4096)})
		v1, v2 := content(2*testBlock, 5), content(2*testBlock, 6)
		put(t, ts, "f.bin", v1)
		makeResident(t, tr, ts, "f.bin", 1)
		put(t, ts, "f.bin", v2)
		if _, body := get(t, ts, "f.bin", ""); !bytes.Equal(body, v2) {
			t.Fatal("old version served after the replacement")
		}
		// The old copy goes once its last reader lets go; the GET above
		// may have started copying the new version, so flash holds at
		// most that.
		synctest.Wait()
		if st := tr.Stats(); st.Evicted < 1 || st.FlashBytes > int64(len(v2)) {
			t.Fatalf("old copy still on flash: %+v", st)
		}
		makeResident(t, tr, ts, "f.bin", 1)
		if resp, body := get(t, ts, "f.bin", ""); resp.Header.Get("X-Strata-Tier") != "flash" || !bytes.Equal(body, v2) {
			t.Fatalf("new copy: from %s", resp.Header.Get("X-Strata-Tier"))
		}
	})
}

// After a restart, complete copies of current files are resident again
// and pieces of replaced versions are dropped.
func TestRestartRestoresCopies(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mem := device.NewMem(64*testBlock, 4096)
		o := Options{Flash: mem, Dir: t.TempDir(), BlockSize: testBlock, Logger: slog.New(slog.DiscardHandler)}
		tr, err := Open(o)
		if err != nil {
			t.Fatal(err)
		}
		ts := serve(t, tr)
		data := content(3*testBlock, 7)
		put(t, ts, "r.bin", data)
		makeResident(t, tr, ts, "r.bin", 1)
		if err := tr.Close(); err != nil {
			t.Fatal(err)
		}
		tr2, err := Open(o)
		if err != nil {
			t.Fatal(err)
		}
		defer tr2.Close()
		if st := tr2.Stats(); st.ResidentFiles != 1 || st.FlashBytes != int64(len(data)) {
			t.Fatalf("after restart: %+v", st)
		}
	})
}

// TestTooManyRanges: more than MaxRanges ranges, and bytes=-0, get 416
// with Content-Range: bytes */size for GET and HEAD alike (HEAD answered
// 206 where GET answered 416), another unit is ignored.
func TestTooManyRanges(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		_, ts := testTier(t, Options{})
		put(t, ts, "m.bin", content(1<<20, 8))
		rng := "bytes=0-1"
		for i := 1; i < 20; i++ {
			rng += fmt.Sprintf(",%d-%d", i*1000, i*1000+1)
		}
		for _, c := range []struct {
			rng    string
			code   int
			crange string
		}{
			{rng, 416, "bytes */1048576"}, {"bytes=-0", 416, "bytes */1048576"},
			{"frames=1-2", 200, ""}, {"bytes=-2", 206, "bytes 1048574-1048575/1048576"},
		} {
			for _, method := range []string{"GET", "HEAD"} {
				req, _ := http.NewRequest(method, base+"/files/m.bin", nil)
				req.Header.Set("Range", c.rng)
				resp, err := ts.client.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != c.code || resp.Header.Get("Content-Range") != c.crange {
					t.Errorf("%s %.20s: %d %q, want %d %q", method, c.rng, resp.StatusCode, resp.Header.Get("Content-Range"), c.code, c.crange)
				}
			}
		}
	})
}

// TestErrorsAreProblems: every route of the tier answers its errors as
// RFC 9457 problems (they were plain text), with ids clipped and no
// path of the files directory in them.
func TestErrorsAreProblems(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tr, ts := testTier(t, Options{})
		put(t, ts, "m.bin", content(1<<16, 9))
		long := strings.Repeat("z", 100)
		cases := []struct {
			method, id, rng, token string
			body                   []byte
			code                   int
		}{
			{"GET", ".hidden", "", "", nil, 400},
			{"GET", long, "", "", nil, 404},
			{"GET", "m.bin", "bytes=999999-", "", nil, 416},
			{"GET", "m.bin", "bytes=0-1,2-3,4-5,6-7,8-9,10-11,12-13,14-15,16-17", "", nil, 416},
			{"PUT", "n.bin", "", "", []byte("x"), 401},
			{"PUT", ".bad", "", testToken, []byte("x"), 400},
			{"PUT", "empty.bin", "", testToken, nil, 400},
		}
		for _, c := range cases {
			req, _ := http.NewRequest(c.method, base+"/files/"+c.id, bytes.NewReader(c.body))
			if c.rng != "" {
				req.Header.Set("Range", c.rng)
			}
			if c.token != "" {
				req.Header.Set("Authorization", "Bearer "+c.token)
			}
			resp, err := ts.client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			p, err := httpapi.ReadProblem(resp, body)
			if resp.StatusCode != c.code || err != nil || p.Detail == "" {
				t.Errorf("%s %s: %d, want %d: %v", c.method, httpapi.ClipID(c.id), resp.StatusCode, c.code, err)
			}
			if strings.Contains(p.Detail, long) || strings.Contains(p.Detail, tr.opts.Dir) {
				t.Errorf("%s %s: detail %q echoes the id or a path", c.method, httpapi.ClipID(c.id), p.Detail)
			}
		}
	})
}

// A flash device that fails reads: every stream gets the right bytes from
// the disk, the device is marked degraded after three failures in a row,
// and once the fault clears a probe marks it healthy and a new copy is
// served from flash again.
func TestFlashReadFaultsFallBackAndRecover(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fault := device.NewFault(device.NewMem(64*testBlock, 4096))
		tr, ts := testTier(t, Options{Flash: fault})
		hot := content(4*testBlock+77, 3)
		put(t, ts, "hot.mp4", hot)
		get(t, ts, "hot.mp4", "")
		synctest.Wait()
		if resp, _ := get(t, ts, "hot.mp4", ""); resp.Header.Get("X-Strata-Tier") != "flash" {
			t.Fatalf("not on flash before the fault: %s", resp.Header.Get("X-Strata-Tier"))
		}
		fault.FailAllWith(device.OpRead, syscall.EIO)
		// One range in each of the first pieces: a failed piece is dropped,
		// so each read goes to the device once.
		for k := range 4 {
			lo := k*testBlock + 10
			resp, body := get(t, ts, "hot.mp4", fmt.Sprintf("bytes=%d-%d", lo, lo+99))
			if resp.StatusCode != 206 || !bytes.Equal(body, hot[lo:lo+100]) {
				t.Fatalf("piece %d under EIO: %d, %d bytes", k, resp.StatusCode, len(body))
			}
		}
		h, ok := tr.Health()
		if !ok || !h.Degraded || !h.Read.Degraded || h.Read.Errors["io"] < 3 {
			t.Fatalf("reads not marked degraded: %+v", h)
		}
		if st := tr.Stats(); st.FlashFallbacks == 0 {
			t.Fatalf("no fallback counted: %+v", st)
		}
		fault.Reset()
		time.Sleep(40 * time.Second) // past the longest backoff: the feed probes
		if h, _ := tr.Health(); h.Degraded || h.Read.Recoveries == 0 {
			t.Fatalf("not recovered after the fault cleared: %+v", h)
		}
		tierOf := ""
		for i := 0; i < 20 && tierOf != "flash"; i++ {
			resp, body := get(t, ts, "hot.mp4", "")
			if !bytes.Equal(body, hot) {
				t.Fatal("wrong bytes after recovery")
			}
			tierOf = resp.Header.Get("X-Strata-Tier")
			synctest.Wait()
		}
		if tierOf != "flash" {
			t.Fatalf("flash does not serve after recovery: last from %s; %+v", tierOf, tr.Stats())
		}
	})
}
