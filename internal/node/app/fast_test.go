package app

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/strata-media/strata/internal/httpapi/httpapitest"
)

// fastCase is one request sent to a node with and without its fast path.
type fastCase struct {
	name, method, path string
	hdr                []string // name, value, ...
	fast               bool     // the fast path answers it alone
}

// fastCases are the requests compared: the plain reads the fast path
// takes, and the ones it must leave to the general path (ranges,
// preconditions, gzip-able types, errors, bad paths, preflights).
func fastCases(etag string) []fastCase {
	seg := "/videos/t1/700k/1.m4s"
	return []fastCase{
		{"get", "GET", seg, nil, true},
		{"head", "HEAD", seg, nil, true},
		{"origin", "GET", seg, []string{"Origin", "https://player.example"}, true},
		{"other origin", "GET", seg, []string{"Origin", "https://evil.example"}, true},
		{"gzip client", "GET", seg, []string{"Accept-Encoding", "gzip"}, true},
		{"title file", "GET", "/videos/t1/init.mp4", nil, true},
		{"title file head", "HEAD", "/videos/t1/init.mp4", []string{"Accept-Encoding", "gzip, br"}, true},
		{"if-range alone", "GET", seg, []string{"If-Range", etag}, true},
		{"304", "GET", seg, []string{"If-None-Match", etag}, false},
		{"304 head", "HEAD", seg, []string{"If-None-Match", etag}, false},
		{"304 gzip tag", "GET", seg, []string{"If-None-Match", etag[:len(etag)-1] + `-strata-gzip"`, "Accept-Encoding", "gzip"}, false},
		{"if-none-match other", "GET", seg, []string{"If-None-Match", `"x"`}, false},
		{"range", "GET", seg, []string{"Range", "bytes=0-99", "Origin", "https://player.example"}, false},
		{"range refused", "GET", seg, []string{"Range", "bytes=999999-"}, false},
		{"if-modified-since", "GET", seg, []string{"If-Modified-Since", "Tue, 24 Nov 2026 04:00:00 GMT"}, false},
		{"manifest", "GET", "/videos/t1/manifest.mpd", []string{"Accept-Encoding", "gzip"}, false},
		{"manifest identity", "GET", "/videos/t1/manifest.mpd", nil, false},
		{"missing", "GET", "/videos/t1/700k/404.m4s", nil, false},
		{"missing title", "HEAD", "/videos/nope/700k/1.m4s", []string{"Origin", "https://player.example"}, false},
		{"hidden name", "GET", "/videos/t1/700k/.x", nil, false},
		{"encoded slash", "GET", "/videos/t1%2F700k/1.m4s", nil, false},
		{"escaped", "GET", "/videos/t%31/700k/1.m4s", nil, false},
		{"unclean", "GET", "/videos/t1//700k/1.m4s", nil, false},
		{"four segments", "GET", "/videos/t1/700k/x/1.m4s", nil, false},
		{"preflight", "OPTIONS", seg, []string{"Origin", "https://player.example", "Access-Control-Request-Method", "GET"}, false},
		{"post", "POST", seg, nil, false},
	}
}

// fastNode opens a node over writeTitle's title (plus a title file that
// is not compressed) and returns its handler with the fast path, the
// general one, and the number of requests the general path has seen.
func fastNode(t *testing.T, mod func(*Config)) (fast, general http.Handler, generalCalls *atomic.Int64, n *Node) {
	t.Helper()
	return fastNodeOpts(t, mod, Options{Logger: quiet})
}

// fastNodeOpts is fastNode with the node's options.
func fastNodeOpts(t *testing.T, mod func(*Config), opts Options) (fast, general http.Handler, generalCalls *atomic.Int64, n *Node) {
	t.Helper()
	cfg := testConfig(t)
	mod(&cfg)
	writeTitle(t, cfg.Capacity)
	if err := os.WriteFile(filepath.Join(cfg.Capacity, "t1", "init.mp4"), bytes.Repeat([]byte("ftyp moov "), 50), 0o644); err != nil {
		t.Fatal(err)
	}
	n, err := Open(context.Background(), cfg, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { n.Close() })
	generalCalls = new(atomic.Int64)
	g := n.general()
	counted := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		generalCalls.Add(1)
		g.ServeHTTP(w, r)
	})
	return n.api.FastPath(counted, n.guard.guarded), g, generalCalls, n
}

// answer is what a client sees of a response, less its Date.
type answer struct {
	status int
	header http.Header
	body   []byte
}

func send(t *testing.T, base string, c fastCase) answer {
	t.Helper()
	req, err := http.NewRequest(c.method, base+c.path, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(c.hdr); i += 2 {
		req.Header.Set(c.hdr[i], c.hdr[i+1])
	}
	if req.Header.Get("Accept-Encoding") == "" {
		req.Header.Set("Accept-Encoding", "identity")
	}
	resp, err := httpapitest.Wire.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	resp.Header.Del("Date")
	return answer{resp.StatusCode, resp.Header, b}
}

// fastPolicies are the CORS and signing policies the fast path and the
// Front are compared under: CORS for any origin (the default), for a list
// of origins, none, and signed URLs required for the title.
var fastPolicies = []struct {
	name   string
	mod    func(*Config)
	signed bool
}{
	{"cors any", func(*Config) {}, false},
	{"cors list", func(c *Config) { c.CORSOrigins = []string{"https://player.example"} }, false},
	{"no cors", func(c *Config) { c.CORSOrigins = nil }, false},
	{"signed", func(c *Config) {
		c.SignedURLs = SignedURLsConfig{Prefixes: []string{"/videos/t1/"}, Keys: []SignedURLKey{{ID: "k", Secret: "0123456789abcdef01"}}}
	}, true},
}

// TestFastPathAnswersAsTheGeneralPath: every request, plain reads and the
// rest, gets the same status, header fields and body from the node's
// handler with its fast path as from the general path alone; the plain
// reads never reach the general path, the others always do; and the
// route metrics count the fast answers as the general path counts its
// own. Under three policies: CORS for any origin (the default), for a
// list of origins, and signed URLs required for the title.
func TestFastPathAnswersAsTheGeneralPath(t *testing.T) {
	for _, p := range fastPolicies {
		t.Run(p.name, func(t *testing.T) {
			fast, general, calls, _ := fastNode(t, p.mod)
			fs, gs := httptest.NewServer(fast), httptest.NewServer(general)
			defer fs.Close()
			defer gs.Close()
			warm := send(t, gs.URL, fastCase{method: "GET", path: "/videos/t1/700k/1.m4s"})
			for _, p := range []string{"/videos/t1/init.mp4", "/videos/t1/manifest.mpd"} {
				send(t, gs.URL, fastCase{method: "GET", path: p})
			}
			etag := warm.header.Get("Etag")
			if !p.signed && (warm.status != 200 || etag == "") {
				t.Fatalf("warm-up: %d, ETag %q", warm.status, etag)
			}
			if p.signed {
				etag = `"x"`
			}
			before := routeCount(t, gs.URL)
			fastServed, fastCount, ok200 := 0, 0, 0.0
			for _, c := range fastCases(etag) {
				fastOnly := c.fast && !p.signed
				if fastOnly {
					fastCount += 2
				}
				for range 2 { // the second after whatever the first changed (a miss's bytes now in RAM)
					calls.Store(0)
					got, want := send(t, fs.URL, c), send(t, gs.URL, c)
					if got.status != want.status || !bytes.Equal(got.body, want.body) || !sameHeader(got.header, want.header) {
						t.Errorf("%s: fast path %d %v (%d bytes), general path %d %v (%d bytes)", c.name,
							got.status, got.header, len(got.body), want.status, want.header, len(want.body))
					}
					if (calls.Load() == 0) != fastOnly {
						t.Errorf("%s: the general path saw %d requests; fast path alone: %v", c.name, calls.Load(), fastOnly)
					}
					if fastOnly && got.status == 200 && got.header.Get("X-Strata-Tier") == "ram" {
						fastServed++
					}
					if c.method != "POST" && c.method != "OPTIONS" {
						for _, a := range []answer{got, want} {
							if a.status == 200 {
								ok200++
							}
						}
					}
				}
			}
			if fastServed != fastCount {
				t.Errorf("%d fast answers were 200s from RAM, want all %d", fastServed, fastCount)
			}
			// The route counters count every 200 of the object routes,
			// the fast path's and the general path's. A handler counts
			// after its answer is sent: wait (boundedly) for the last.
			var grew float64
			for range 100 {
				if grew = routeCount(t, gs.URL) - before; grew >= ok200 {
					break
				}
				time.Sleep(10 * time.Millisecond)
			}
			if grew != ok200 {
				t.Errorf("route counters of 200s grew by %v, want %v (every 200 answer, fast or not)", grew, ok200)
			}
		})
	}
}

// sameHeader compares two responses' fields, each field's values in
// order.
func sameHeader(a, b http.Header) bool {
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

var object200 = regexp.MustCompile(`strata_http_requests_total\{code="200",route="GET /videos/\{video\}/(\{rendition\}/)?\{name\}"\} (\d+)`)

// routeCount is the sum of the 200 counters of the object routes.
func routeCount(t *testing.T, base string) float64 {
	t.Helper()
	a := send(t, base, fastCase{method: "GET", path: "/metrics"})
	var sum float64
	for _, m := range object200.FindAllSubmatch(a.body, -1) {
		v, err := strconv.ParseFloat(string(m[2]), 64)
		if err != nil {
			t.Fatal(err)
		}
		sum += v
	}
	return sum
}

// BenchmarkObjectPath compares, side by side, a RAM hit of a 100 KiB
// segment through the node's handler with the fast path and through the
// general path alone (every layer), into a writer that discards the body:
// the per-request cost of the layers, without the socket's.
func BenchmarkObjectPath(b *testing.B) {
	cfg := DefaultConfig()
	cfg.Data, cfg.Listen = b.TempDir(), "127.0.0.1:0"
	cfg.RAM, cfg.FlashSize, cfg.BlockSize = 4<<20, 16<<20, 1<<20
	cfg.Files.FlashSize = 8 << 20
	if err := cfg.Resolve(); err != nil {
		b.Fatal(err)
	}
	dir := filepath.Join(cfg.Capacity, "t1", "700k")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "1.m4s"), make([]byte, 100<<10), 0o644); err != nil {
		b.Fatal(err)
	}
	n, err := Open(context.Background(), cfg, Options{Logger: quiet})
	if err != nil {
		b.Fatal(err)
	}
	defer n.Close()
	for _, c := range []struct {
		name string
		h    http.Handler
	}{{"general", n.general()}, {"fast", n.handler()}} {
		b.Run(c.name, func(b *testing.B) {
			r := httptest.NewRequest("GET", "/videos/t1/700k/1.m4s", nil)
			r.Header.Set("Accept-Encoding", "gzip")
			b.ReportAllocs()
			b.SetBytes(100 << 10)
			for b.Loop() {
				w := httpapitest.NewDiscard()
				c.h.ServeHTTP(w, r)
				if w.Status != 200 {
					b.Fatalf("status %d", w.Status)
				}
			}
		})
	}
}
