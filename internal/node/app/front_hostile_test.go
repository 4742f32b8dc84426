package app

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/strata-media/strata/internal/httpapi/httpapitest"
)

// serveFront serves a node with the Front on 127.0.0.1 over tr, as
// strata serve does, and returns its address and a stop that drains it
// and waits for serveHTTP to return.
func serveFront(t *testing.T, mod func(*Config), tr transport) (addr string, stop func(), goroutines int) {
	t.Helper()
	_, _, _, n := fastNodeOpts(t, mod, Options{Logger: quiet})
	goroutines = runtime.NumGoroutine() // the node's, before serving
	timeouts := n.cfg.Timeouts
	timeouts.ReadHeader.Duration = time.Second
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		serveHTTP(ctx, ln, n.handler(), n.front, Options{Drain: 2 * time.Second, Wait: time.Second}, timeouts, tr, quiet) //nolint:errcheck
	}()
	var once sync.Once
	stop = func() { once.Do(func() { cancel(); <-done }) }
	t.Cleanup(stop)
	return ln.Addr().String(), stop, goroutines
}

// TestFrontH2C: with h2c on, an HTTP/2 client with prior knowledge and
// an HTTP/1.1 client (served by the Front, and its Upgrade: h2c handed
// to net/http, which does not upgrade) both read the segment, and a
// shutdown leaves no goroutine of theirs.
func TestFrontH2C(t *testing.T) {
	addr, stop, before := serveFront(t, func(*Config) {}, transport{h2c: true})
	seg := "http://" + addr + "/videos/t1/700k/1.m4s"
	p := new(http.Protocols)
	p.SetUnencryptedHTTP2(true)
	h2 := &http.Client{Transport: &http.Transport{Protocols: p}, Timeout: 10 * time.Second}
	h1 := &http.Client{Transport: &http.Transport{}, Timeout: 10 * time.Second}
	get := func(c *http.Client, hdr ...string) (*http.Response, []byte) {
		return httpapitest.DoWith(t, c, "GET", seg, nil, hdr...)
	}
	var want []byte
	for i := range 3 {
		resp, b := get(h2)
		if resp.StatusCode != 200 || resp.ProtoMajor != 2 || len(b) == 0 {
			t.Fatalf("h2c %d: %s %s, %d bytes", i, resp.Proto, resp.Status, len(b))
		}
		want = b
		resp, b = get(h1)
		if resp.StatusCode != 200 || resp.ProtoMajor != 1 || string(b) != string(want) {
			t.Fatalf("HTTP/1.1 %d: %s %s, %d bytes", i, resp.Proto, resp.Status, len(b))
		}
		resp, b = get(h1, "Connection", "Upgrade, HTTP2-Settings", "Upgrade", "h2c", "HTTP2-Settings", "AAMAAABkAAQAAP__")
		if resp.StatusCode != 200 || string(b) != string(want) {
			t.Fatalf("Upgrade: h2c %d: %s %s, %d bytes", i, resp.Proto, resp.Status, len(b))
		}
	}
	h1.CloseIdleConnections()
	h2.CloseIdleConnections()
	stop()
	httpapitest.WaitGoroutines(t, before)
}

// TestFrontAccessLogHandedOverAndBack: on a connection that goes from the
// Front to net/http (a manifest) and back (the segments), each request is
// logged once, by whichever server answered it, with its status.
func TestFrontAccessLogHandedOverAndBack(t *testing.T) {
	var out syncBuffer
	front, _, calls, _ := frontServers(t, func(c *Config) { c.AccessLog = "-" }, Options{Logger: quiet, AccessOut: &out})
	seg := rawGet("GET", "/videos/t1/700k/1.m4s")
	raw := seg + rawGet("GET", "/videos/t1/manifest.mpd") + seg + rawGet("HEAD", "/videos/t1/700k/1.m4s") +
		rawGet("GET", "/videos/t1/700k/nope.m4s") + seg
	methods := []string{"GET", "GET", "GET", "HEAD", "GET", "GET"}
	exchange(t, front, raw, methods, false)
	var lines []map[string]any
	for range 200 { // the lines are written as the answers end
		if lines = jsonLines(out.String()); len(lines) >= len(methods) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(50 * time.Millisecond) // a line too many would come now
	lines = jsonLines(out.String())
	want := []struct {
		method, path string
		status       float64
	}{{"GET", "/videos/t1/700k/1.m4s", 200}, {"GET", "/videos/t1/manifest.mpd", 200}, {"GET", "/videos/t1/700k/1.m4s", 200},
		{"HEAD", "/videos/t1/700k/1.m4s", 200}, {"GET", "/videos/t1/700k/nope.m4s", 404}, {"GET", "/videos/t1/700k/1.m4s", 200}}
	if len(lines) != len(want) {
		t.Fatalf("%d access log lines, want %d: %v", len(lines), len(want), lines)
	}
	for i, w := range want {
		if l := lines[i]; l["method"] != w.method || l["path"] != w.path || l["status"] != w.status {
			t.Errorf("line %d: %v, want %v", i, l, w)
		}
	}
	if calls.Load() == 0 || calls.Load() == int64(len(want)) {
		t.Errorf("net/http's handler saw %d of the %d requests: want the manifest (and the miss) only", calls.Load(), len(want))
	}
}

// TestFrontLingeringCloseNode: on a node served with its Front and with
// net/http alone (--no-front), a client that pipelines a segment of
// about 150 KB and a malformed request, and reads only once the node is
// closing, gets the whole segment (a close with its bytes unread would
// reset the connection and cut the segment), and the same bytes from
// both: the segment answered by the Front, or after a manifest that
// net/http answers and the Front takes the connection back.
func TestFrontLingeringCloseNode(t *testing.T) {
	_, _, _, n := fastNodeOpts(t, func(*Config) {}, Options{Logger: quiet})
	segment := bytes.Repeat([]byte("moof mdat "), 14_860)
	if err := os.WriteFile(filepath.Join(n.cfg.Capacity, "t1", "700k", "2.m4s"), segment, 0o644); err != nil {
		t.Fatal(err)
	}
	timeouts := n.cfg.Timeouts
	timeouts.ReadHeader.Duration = time.Second
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	t.Cleanup(func() { cancel(); wg.Wait() })
	serve := func(withFront bool) (string, <-chan struct{}) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		nl, closing := httpapitest.NotifyClose(ln)
		newFront := n.front
		if !withFront {
			newFront = nil
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			serveHTTP(ctx, nl, n.handler(), newFront, Options{Drain: time.Second, Wait: time.Second}, timeouts, transport{}, quiet) //nolint:errcheck
		}()
		return ln.Addr().String(), closing
	}
	front, fclosing := serve(true)
	plain, pclosing := serve(false)
	seg := rawGet("GET", "/videos/t1/700k/2.m4s")
	// The miss first: then both answer from the same tier.
	exchange(t, plain, seg+rawGet("GET", "/videos/t1/manifest.mpd"), []string{"GET", "GET"}, false)
	tail := strings.Repeat("x", 20000)
	bad := map[string]string{
		"400": "GET /videos/t1/700k/1.m4s HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n" + tail,
		"501": "GET /videos/t1/700k/1.m4s HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: gzip\r\n\r\n" + tail,
		"431": rawGet("GET", "/videos/t1/700k/1.m4s", "X-Big", strings.Repeat("b", 1<<20+8<<10)),
	}
	for _, first := range []struct{ name, raw string }{{"segment", seg}, {"manifest, segment", rawGet("GET", "/videos/t1/manifest.mpd") + seg}} {
		for name, b := range bad {
			var got [2]string
			for i, s := range []struct {
				addr    string
				closing <-chan struct{}
			}{{front, fclosing}, {plain, pclosing}} {
				got[i] = lazyExchange(t, s.addr, first.raw+b, s.closing)
				br := bufio.NewReader(strings.NewReader(got[i]))
				var resp *http.Response
				var err error
				for range strings.Count(first.raw, "GET ") {
					if resp, err = http.ReadResponse(br, nil); err != nil {
						t.Fatalf("%s then %s, front %t: %v in %.300q", first.name, name, i == 0, err, got[i])
					}
					if _, err = io.Copy(io.Discard, resp.Body); err != nil {
						break
					}
				}
				if resp.ContentLength != int64(len(segment)) || err != nil {
					t.Errorf("%s then %s, front %t: the segment cut (%v), %d bytes in all", first.name, name, i == 0, err, len(got[i]))
				}
			}
			if got[0] != got[1] {
				t.Errorf("%s then %s: the Front answered %d bytes, net/http alone %d, not the same", first.name, name, len(got[0]), len(got[1]))
			}
		}
	}
}

// lazyExchange sends raw on a new connection without reading, waits for
// the server to start closing it (closing), then reads all it sent, the
// Date fields blanked.
func lazyExchange(t *testing.T, addr, raw string, closing <-chan struct{}) string {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	go io.WriteString(c, raw) //nolint:errcheck // a reset ends it
	select {
	case <-closing:
	case <-time.After(10 * time.Second):
		t.Fatal("the server did not close the connection")
	}
	var got bytes.Buffer
	io.Copy(&got, c) //nolint:errcheck // the end or a reset: what came is the answer
	return dateField.ReplaceAllString(got.String(), "Date: <date>\r\n")
}
