package app

import (
	"context"
	"net"
	"net/http"
	"runtime"
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
