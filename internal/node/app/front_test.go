package app

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"reflect"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/strata-media/strata/internal/httpapi/front"
)

// frontServers serves one node twice on 127.0.0.1: with the Front (as
// strata serve does) and without it (net/http alone), and counts the
// requests that reach net/http's handler on the first.
func frontServers(t *testing.T, mod func(*Config), opts Options) (front, plain string, calls *atomic.Int64, n *Node) {
	t.Helper()
	_, _, _, n = fastNodeOpts(t, mod, opts)
	front, plain, calls = frontPair(t, n, n)
	return front, plain, calls, n
}

// frontPair serves a on 127.0.0.1 with the Front (as strata serve does)
// and b with net/http alone (a and b may be the same node), and counts
// the requests that reach net/http's handler on the first.
func frontPair(t *testing.T, a, b *Node) (withFront, plain string, calls *atomic.Int64) {
	t.Helper()
	calls = new(atomic.Int64)
	ha := a.handler()
	counted := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		ha.ServeHTTP(w, r)
	})
	timeouts := a.cfg.Timeouts
	timeouts.ReadHeader.Duration = time.Second // for the requests that never end
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	t.Cleanup(func() { cancel(); wg.Wait() })
	serve := func(h http.Handler, newFront func(TimeoutsConfig, func(int)) *front.Front) string {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			serveHTTP(ctx, ln, h, newFront, Options{Drain: time.Second, Wait: time.Second}, timeouts, transport{}, quiet) //nolint:errcheck
		}()
		return ln.Addr().String()
	}
	return serve(counted, a.front), serve(b.handler(), nil), calls
}

// exchange sends raw on a new connection and returns all it reads back:
// the answers to methods (one per request, for their framing), then
// whatever else comes until the server closes or 50 ms of silence. If
// half is set, the client shuts its side after raw.
func exchange(t *testing.T, addr string, raw string, methods []string, half bool) string {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.WriteString(c, raw); err != nil {
		t.Fatal(err)
	}
	if half {
		c.(*net.TCPConn).CloseWrite()
	}
	var got bytes.Buffer
	br := bufio.NewReader(io.TeeReader(c, &got))
	for _, m := range methods {
		resp, err := http.ReadResponse(br, &http.Request{Method: m})
		if err != nil {
			break
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	c.SetReadDeadline(time.Now().Add(50 * time.Millisecond))
	io.Copy(io.Discard, br)
	return dateField.ReplaceAllString(got.String(), "Date: <date>\r\n")
}

var dateField = regexp.MustCompile(`Date: [^\r\n]*\r\n`)

// frontCase is a request (or several on one connection) sent raw.
type frontCase struct {
	name    string
	raw     string
	methods []string // the methods of the answers to read
	front   bool     // the Front answers them all itself
	odd     bool     // malformed or unusual: compared under one policy only
	calls   int      // if set, how many of them net/http's handler sees
	half    bool     // the client shuts its side after sending
}

func rawGet(method, path string, fields ...string) string {
	var b strings.Builder
	b.WriteString(method + " " + path + " HTTP/1.1\r\nHost: strata.test\r\n")
	for i := 0; i+1 < len(fields); i += 2 {
		b.WriteString(fields[i] + ": " + fields[i+1] + "\r\n")
	}
	b.WriteString("\r\n")
	return b.String()
}

func frontCases(etag string) []frontCase {
	seg := "/videos/t1/700k/1.m4s"
	var cs []frontCase
	// Every request of the fast path's comparison, raw.
	for _, c := range fastCases(etag) {
		cs = append(cs, frontCase{name: c.name, raw: rawGet(c.method, c.path, c.hdr...), methods: []string{c.method}, front: c.fast})
	}
	n := len(cs)
	get, head := rawGet("GET", seg), rawGet("HEAD", seg)
	big := strings.Repeat("x", 9000)
	cs = append(cs,
		frontCase{name: "keep-alive", raw: get + head + rawGet("GET", "/videos/t1/init.mp4", "Origin", "https://player.example"), methods: []string{"GET", "HEAD", "GET"}, front: true},
		frontCase{name: "browser fields", raw: rawGet("GET", seg, "User-Agent", "Mozilla/5.0 (X11; Linux x86_64)", "Accept", "*/*",
			"Accept-Language", "en-US,en;q=0.9", "Referer", "https://player.example/watch", "Sec-Fetch-Mode", "cors",
			"Connection", "keep-alive", "Pragma", "no-cache", "X-Custom", "  spaced  ", "Obs", "caf\xe9"), methods: []string{"GET"}, front: true},
		frontCase{name: "lower-case names", raw: "GET " + seg + " HTTP/1.1\r\nhost: strata.test\r\norigin: https://player.example\r\n\r\n", methods: []string{"GET"}, front: true},
		// The manifest goes to net/http, and the connection comes back
		// to the Front for the segments.
		frontCase{name: "handed over and back", raw: get + rawGet("GET", "/videos/t1/manifest.mpd", "Accept-Encoding", "gzip") + get + head,
			methods: []string{"GET", "GET", "GET", "HEAD"}, calls: 1},
		frontCase{name: "handed over and back twice", raw: rawGet("GET", "/videos/t1/manifest.mpd") + head +
			rawGet("GET", seg, "If-None-Match", etag) + get + rawGet("HEAD", "/videos/t1/manifest.mpd", "Accept-Encoding", "gzip") + get,
			methods: []string{"GET", "HEAD", "GET", "GET", "HEAD", "GET"}, calls: 3},
		frontCase{name: "client closes after", raw: get + head, methods: []string{"GET", "HEAD"}, front: true, half: true},
		frontCase{name: "connection close", raw: rawGet("GET", seg, "Connection", "close") + get, methods: []string{"GET", "GET"}},
		frontCase{name: "connection upgrade", raw: rawGet("GET", seg, "Connection", "Upgrade", "Upgrade", "h2c"), methods: []string{"GET"}},
		frontCase{name: "http/1.0", raw: "GET " + seg + " HTTP/1.0\r\n\r\n", methods: []string{"GET"}},
		frontCase{name: "no host", raw: "GET " + seg + " HTTP/1.1\r\n\r\n", methods: []string{"GET"}},
		frontCase{name: "two hosts", raw: "GET " + seg + " HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", methods: []string{"GET"}},
		frontCase{name: "bad host", raw: "GET " + seg + " HTTP/1.1\r\nHost: a b\r\n\r\n", methods: []string{"GET"}},
		frontCase{name: "bare LF", raw: "GET " + seg + " HTTP/1.1\nHost: a\n\n", methods: []string{"GET"}},
		frontCase{name: "obs-fold", raw: "GET " + seg + " HTTP/1.1\r\nHost: a\r\nX-A: b\r\n c\r\n\r\n", methods: []string{"GET"}},
		frontCase{name: "space before colon", raw: "GET " + seg + " HTTP/1.1\r\nHost : a\r\n\r\n", methods: []string{"GET"}},
		frontCase{name: "empty name", raw: "GET " + seg + " HTTP/1.1\r\nHost: a\r\n: b\r\n\r\n", methods: []string{"GET"}},
		frontCase{name: "nul in value", raw: "GET " + seg + " HTTP/1.1\r\nHost: a\r\nX-A: b\x00c\r\n\r\n", methods: []string{"GET"}},
		frontCase{name: "query", raw: rawGet("GET", seg+"?x=1"), methods: []string{"GET"}},
		frontCase{name: "absolute form", raw: rawGet("GET", "http://strata.test"+seg), methods: []string{"GET"}},
		frontCase{name: "asterisk", raw: rawGet("GET", "*"), methods: []string{"GET"}},
		frontCase{name: "lower-case method", raw: rawGet("get", seg), methods: []string{"GET"}},
		frontCase{name: "double space", raw: "GET  " + seg + " HTTP/1.1\r\nHost: a\r\n\r\n", methods: []string{"GET"}},
		frontCase{name: "body", raw: "GET " + seg + " HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\nhello" + get, methods: []string{"GET", "GET"}},
		frontCase{name: "chunked", raw: "GET " + seg + " HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n" + get, methods: []string{"GET", "GET"}},
		frontCase{name: "expect", raw: rawGet("GET", seg, "Expect", "100-continue"), methods: []string{"GET"}},
		frontCase{name: "h2 preface", raw: "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", methods: []string{"GET"}},
		frontCase{name: "header over the Front's buffer", raw: rawGet("GET", seg, "X-Big", big), methods: []string{"GET"}},
		frontCase{name: "header over net/http's limit", raw: rawGet("GET", seg, "X-Big", strings.Repeat(big, 120)), methods: []string{"GET"}},
		frontCase{name: "truncated", raw: "GET " + seg + " HTTP/1.1\r\nHost: a\r\n", half: true},
		frontCase{name: "garbage", raw: "\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03", methods: []string{"GET"}},
		frontCase{name: "empty line first", raw: "\r\n" + get, methods: []string{"GET"}},
		frontCase{name: "pipelined then other", raw: get + get + "OPTIONS " + seg + " HTTP/1.1\r\nHost: a\r\nOrigin: https://player.example\r\n\r\n" + head, methods: []string{"GET", "GET", "OPTIONS", "HEAD"}},
	)
	for i := n + 5; i < len(cs); i++ {
		cs[i].odd = true // after the first five: the same under every policy
	}
	return cs
}

// TestFrontAnswersAsNetHTTP: every request, raw on the wire (plain reads
// one at a time, kept alive and pipelined; the requests the Front hands
// to net/http; malformed and hostile ones), gets byte for byte the same
// bytes back (less Date) from the node served with its Front as from
// net/http alone, and the plain reads never reach net/http. Under the
// fast path's four CORS and signing policies.
func TestFrontAnswersAsNetHTTP(t *testing.T) {
	for _, p := range fastPolicies {
		t.Run(p.name, func(t *testing.T) {
			front, plain, calls, _ := frontServers(t, p.mod, Options{Logger: quiet})
			warm := exchange(t, plain, rawGet("GET", "/videos/t1/700k/1.m4s")+rawGet("GET", "/videos/t1/init.mp4")+
				rawGet("GET", "/videos/t1/manifest.mpd"), []string{"GET", "GET", "GET"}, false)
			etag := `"x"`
			if m := regexp.MustCompile(`Etag: ("[^"]+")`).FindStringSubmatch(warm); m != nil {
				etag = m[1]
			} else if !p.signed {
				t.Fatalf("warm-up: no ETag in %q", warm)
			}
			served := 0
			for _, c := range frontCases(etag) {
				if c.odd && p.name != "cors any" {
					continue
				}
				fastOnly := c.front && !p.signed
				for range 2 {
					calls.Store(0)
					got, want := exchange(t, front, c.raw, c.methods, c.half), exchange(t, plain, c.raw, c.methods, c.half)
					if got != want {
						t.Errorf("%s:\nFront:\n%.2000q\nnet/http:\n%.2000q", c.name, got, want)
					}
					if fastOnly && calls.Load() != 0 {
						t.Errorf("%s: net/http's handler saw %d requests; the Front alone: %v", c.name, calls.Load(), fastOnly)
					}
					if c.calls > 0 && !p.signed && calls.Load() != int64(c.calls) {
						t.Errorf("%s: net/http's handler saw %d requests, want %d", c.name, calls.Load(), c.calls)
					}
					if fastOnly && strings.Contains(got, "X-Strata-Tier: ram") {
						served++
					}
				}
			}
			if !p.signed && served == 0 {
				t.Error("the Front served no RAM hit")
			}
		})
	}
}

// TestFrontAccessLog: a request the Front answers is logged as net/http's
// path logs it: the same fields, less time, duration and client port.
func TestFrontAccessLog(t *testing.T) {
	var out syncBuffer
	front, plain, calls, _ := frontServers(t, func(c *Config) { c.AccessLog = "-" }, Options{Logger: quiet, AccessOut: &out})
	req := rawGet("GET", "/videos/t1/700k/1.m4s", "User-Agent", "player/1.0", "Referer", "https://player.example/", "X-Request-Id", "r1")
	exchange(t, plain, req, []string{"GET"}, false) // the miss, then RAM hits
	exchange(t, plain, req, []string{"GET"}, false)
	calls.Store(0)
	exchange(t, front, req, []string{"GET"}, false)
	if calls.Load() != 0 {
		t.Fatal("the Front did not answer")
	}
	var lines []map[string]any
	for range 100 { // the lines are written as the answers end
		if lines = jsonLines(out.String()); len(lines) >= 3 {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if len(lines) != 3 {
		t.Fatalf("%d access log lines, want 3: %v", len(lines), lines)
	}
	want, got := lines[1], lines[2]
	for _, m := range []map[string]any{want, got} {
		for _, k := range []string{"time", "duration_ms", "remote_addr"} {
			if m[k] == nil {
				t.Errorf("no %s in %v", k, m)
			}
			delete(m, k)
		}
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("the Front logged\n%v\nnet/http's path\n%v", got, want)
	}
	if got["tier"] != "ram" || got["bytes"] != float64(10000) {
		t.Errorf("the Front's line %v: want tier ram and the segment's 10000 bytes", got)
	}
}

// jsonLines are the JSON lines of s.
func jsonLines(s string) []map[string]any {
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(s), "\n") {
		var m map[string]any
		if json.Unmarshal([]byte(line), &m) == nil {
			out = append(out, m)
		}
	}
	return out
}
