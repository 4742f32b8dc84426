package app

import (
	"bytes"
	"context"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// edgeUpstream is a real origin on 127.0.0.1 for the edge's fast path
// tests: segments fresh for an hour, a Vary'd object, one stale at once
// (max-age=0), one not to store, one larger than a slice, a JSON one
// (a type the node gzips for its own routes), and 404s for the rest.
func edgeUpstream(t *testing.T) *httptest.Server {
	t.Helper()
	rnd := rand.New(rand.NewPCG(1, 2))
	bytesOf := func(n int) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(rnd.Uint32())
		}
		return b
	}
	type object struct {
		body []byte
		kv   []string
	}
	objects := map[string]object{
		"/seg.m4s": {bytesOf(100 << 10), []string{"Cache-Control", "max-age=3600", "Etag", `"seg"`,
			"Last-Modified", "Mon, 23 Nov 2026 10:00:00 GMT", "Content-Type", "video/iso.segment"}},
		"/vary.bin":  {bytesOf(3000), []string{"Cache-Control", "max-age=3600", "Vary", "Accept-Language", "Content-Type", "application/octet-stream"}},
		"/stale.m4s": {bytesOf(2000), []string{"Cache-Control", "max-age=0", "Etag", `"stale"`, "Content-Type", "video/iso.segment"}},
		"/private":   {bytesOf(1000), []string{"Cache-Control", "no-store", "Content-Type", "video/iso.segment"}},
		"/big.mp4":   {bytesOf(2<<20 + 7), []string{"Cache-Control", "max-age=3600", "Etag", `"big"`, "Content-Type", "video/mp4"}},
		"/info.json": {bytes.Repeat([]byte(`{"a":1},`), 500), []string{"Cache-Control", "max-age=3600", "Content-Type", "application/json"}},
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// An edge on "/" asks for /edge/seg.m4s, one on "/edge/" for
		// /seg.m4s: the same object.
		o, ok := objects[strings.TrimPrefix(r.URL.Path, "/edge")]
		if !ok {
			http.NotFound(w, r)
			return
		}
		for i := 0; i+1 < len(o.kv); i += 2 {
			w.Header().Set(o.kv[i], o.kv[i+1])
		}
		http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(o.body))
	}))
	t.Cleanup(srv.Close)
	return srv
}

// edgeFastCases are the requests compared, in order (each is sent twice,
// the second after whatever the first changed): fast is whether the fast
// path answers them alone, but for the first of edgeFirstMisses.
func edgeFastCases() []fastCase {
	seg := "/edge/seg.m4s"
	return []fastCase{
		{"get", "GET", seg, nil, true},
		{"head", "HEAD", seg, nil, true},
		{"origin", "GET", seg, []string{"Origin", "https://player.example"}, true},
		{"other origin", "GET", seg, []string{"Origin", "https://evil.example"}, true},
		{"gzip client", "GET", seg, []string{"Accept-Encoding", "gzip"}, true},
		{"json gzip client", "GET", "/edge/info.json", []string{"Accept-Encoding", "gzip"}, true},
		{"vary en", "GET", "/edge/vary.bin", []string{"Accept-Language", "en"}, true},
		{"vary fr", "GET", "/edge/vary.bin", []string{"Accept-Language", "fr"}, true},
		{"range", "GET", seg, []string{"Range", "bytes=0-99"}, false},
		{"if-none-match", "GET", seg, []string{"If-None-Match", `"seg"`}, false},
		{"if-modified-since", "HEAD", seg, []string{"If-Modified-Since", "Tue, 24 Nov 2026 04:00:00 GMT"}, false},
		{"request no-cache", "GET", seg, []string{"Cache-Control", "no-cache"}, false},
		{"pragma", "GET", seg, []string{"Pragma", "no-cache"}, false},
		{"authorization", "GET", seg, []string{"Authorization", "Bearer x"}, false},
		{"stale", "GET", "/edge/stale.m4s", nil, false},
		{"no-store", "GET", "/edge/private", nil, false},
		{"sliced by a range", "GET", "/edge/big.mp4", []string{"Range", "bytes=0-9"}, false},
		{"sliced", "GET", "/edge/big.mp4", nil, false},
		{"upstream 404", "GET", "/edge/missing", nil, false},
		{"miss only-if-cached", "GET", "/edge/never", []string{"Cache-Control", "only-if-cached"}, false},
		{"query", "GET", seg + "?v=1", nil, true},
		{"dot segment", "GET", "/edge/x/../seg.m4s", nil, false},
		{"empty segment", "GET", "/edge//seg.m4s", nil, false},
		{"preflight", "OPTIONS", seg, []string{"Origin", "https://player.example", "Access-Control-Request-Method", "GET"}, false},
	}
}

// edgeFirstMisses are the cases whose first request is a miss.
var edgeFirstMisses = map[string]bool{"get": true, "json gzip client": true, "vary en": true, "vary fr": true, "query": true}

// alone is whether the fast path answers the i-th sending of c alone.
func alone(c fastCase, i int) bool { return c.fast && (i == 1 || !edgeFirstMisses[c.name]) }

// edgePrefixes are the prefixes the edge's comparisons run under: one
// of its own, and "/" (every path but the node's own routes), where the
// fast path yields those routes to the general path.
var edgePrefixes = []string{"/edge/", "/"}

// edgeNodes opens two edge nodes (no titles), each with its own engine,
// in front of the same upstream under prefix (the requests are for
// /edge/...): the requests sent to both in the same order find the same
// state, so that their answers compare even where a request changes what
// is stored.
func edgeNodes(t *testing.T, prefix string, mod func(*Config), opts Options) (a, b *Node) {
	t.Helper()
	up := edgeUpstream(t)
	open := func() *Node {
		cfg := testConfig(t)
		cfg.Upstreams = []UpstreamConfig{{Prefix: prefix, URL: up.URL + "/"}}
		mod(&cfg)
		n, err := Open(context.Background(), cfg, opts)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { n.Close() })
		return n
	}
	return open(), open()
}

// ageField is the Age of an answer: the two nodes fetched their copies a
// few milliseconds apart, which a second's boundary may fall between.
var ageField = regexp.MustCompile(`Age: \d+\r\n`)

// TestEdgeFastPathAnswersAsTheGeneralPath: two edge nodes get the same
// requests, one through its handler with the fast path, the other
// through the general path alone (every layer): the same status, header
// fields (less Date and Age, present in both or neither) and body; the
// fresh hits never reach the general path, everything else always does.
// Under the CORS policies of the videos' comparison.
func TestEdgeFastPathAnswersAsTheGeneralPath(t *testing.T) {
	for _, prefix := range edgePrefixes {
		for _, p := range fastPolicies {
			if !p.signed {
				t.Run(prefix+" "+p.name, func(t *testing.T) { edgeFastPathAnswersAsTheGeneralPath(t, prefix, p.mod) })
			}
		}
	}
}

func edgeFastPathAnswersAsTheGeneralPath(t *testing.T, prefix string, mod func(*Config)) {
	a, b := edgeNodes(t, prefix, mod, Options{Logger: quiet})
	calls := new(atomic.Int64)
	g := a.general()
	fast := a.api.FastPath(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		g.ServeHTTP(w, r)
	}), a.guard.guarded)
	fs, gs := httptest.NewServer(fast), httptest.NewServer(b.general())
	defer fs.Close()
	defer gs.Close()
	hits := 0
	for _, c := range edgeFastCases() {
		for i := range 2 {
			calls.Store(0)
			got, want := send(t, fs.URL, c), send(t, gs.URL, c)
			if (got.header.Get("Age") == "") != (want.header.Get("Age") == "") {
				t.Errorf("%s: Age %q with the fast path, %q without", c.name, got.header.Get("Age"), want.header.Get("Age"))
			}
			got.header.Del("Age")
			want.header.Del("Age")
			if got.status != want.status || !bytes.Equal(got.body, want.body) || !sameHeader(got.header, want.header) {
				t.Errorf("%s %d: fast path %d %v (%d bytes), general path %d %v (%d bytes)", c.name, i,
					got.status, got.header, len(got.body), want.status, want.header, len(want.body))
			}
			if a := calls.Load() == 0; a != alone(c, i) {
				t.Errorf("%s %d: answered by the fast path alone: %v (%d %s)", c.name, i, a, got.status, got.header.Get("X-Strata-Cache"))
			}
			if calls.Load() == 0 && got.header.Get("X-Strata-Cache") == "HIT" && got.header.Get("X-Strata-Tier") == "ram" {
				hits++
			}
		}
	}
	if want := countAlone(edgeFastCases()); hits != want {
		t.Errorf("the fast path answered %d RAM hits alone, want %d", hits, want)
	}
	if sa, sb := a.edge.Stats(), b.edge.Stats(); sa.Hits != sb.Hits || sa.Misses != sb.Misses || sa.Passes != sb.Passes {
		t.Errorf("edge counters: with the fast path %+v, without %+v", sa, sb)
	}
	// The route metrics count the fast answers under the edge's
	// route, as the general path counts its own. A handler
	// counts after its answer is sent: wait (boundedly) for the
	// last.
	var ra, rb string
	for range 100 {
		if ra, rb = edgeRouteCounts(t, fs.URL, prefix), edgeRouteCounts(t, gs.URL, prefix); ra == rb {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if ra != rb || !strings.Contains(ra, `code="200"`) {
		t.Errorf("route counters with the fast path:\n%s\nwithout:\n%s", ra, rb)
	}
}

// edgeRouteCounts are the lines of the route counters of the edge on
// prefix in base's /metrics.
func edgeRouteCounts(t *testing.T, base, prefix string) string {
	t.Helper()
	a := send(t, base, fastCase{method: "GET", path: "/metrics"})
	re := regexp.MustCompile(`strata_http_requests_total\{code="\d+",route="(GET )?` + regexp.QuoteMeta(prefix) + `"\} \d+`)
	return strings.Join(re.FindAllString(string(a.body), -1), "\n")
}

func countAlone(cs []fastCase) int {
	n := 0
	for _, c := range cs {
		for i := range 2 {
			if alone(c, i) {
				n++
			}
		}
	}
	return n
}

// TestEdgeFrontAnswersAsNetHTTP: the edge's requests raw on the wire, one
// at a time, kept alive, and handed to net/http and back, get byte for
// byte the same bytes (less Date and Age) from an edge node served with
// its Front as from one served by net/http alone; the fresh hits never
// reach net/http.
func TestEdgeFrontAnswersAsNetHTTP(t *testing.T) {
	for _, prefix := range edgePrefixes {
		t.Run(prefix, func(t *testing.T) { edgeFrontAnswersAsNetHTTP(t, prefix) })
	}
}

func edgeFrontAnswersAsNetHTTP(t *testing.T, prefix string) {
	a, b := edgeNodes(t, prefix, func(*Config) {}, Options{Logger: quiet})
	front, plain, calls := frontPair(t, a, b)
	var cs []frontCase
	for _, c := range edgeFastCases() {
		// A query is handed to net/http by the Front (its parser takes
		// plain paths only), then answered by the fast path there.
		cs = append(cs, frontCase{name: c.name, raw: rawGet(c.method, c.path, c.hdr...), methods: []string{c.method},
			front: c.fast && c.name != "query"})
	}
	seg := "/edge/seg.m4s"
	get, head := rawGet("GET", seg), rawGet("HEAD", seg)
	cs = append(cs,
		frontCase{name: "keep-alive", raw: get + head + rawGet("GET", "/edge/vary.bin", "Accept-Language", "en") + get,
			methods: []string{"GET", "HEAD", "GET", "GET"}, front: true},
		frontCase{name: "handed over and back", raw: get + rawGet("GET", seg, "Range", "bytes=5-9") + get + head,
			methods: []string{"GET", "GET", "GET", "HEAD"}, calls: 1},
		frontCase{name: "a stale one between hits", raw: get + rawGet("GET", "/edge/stale.m4s") + head,
			methods: []string{"GET", "GET", "HEAD"}, calls: 1},
		frontCase{name: "browser fields", raw: rawGet("GET", seg, "User-Agent", "Mozilla/5.0 (X11; Linux x86_64)", "Accept", "*/*",
			"Accept-Language", "en-US,en;q=0.9", "Referer", "https://player.example/watch", "Sec-Fetch-Mode", "cors",
			"Connection", "keep-alive", "Origin", "https://player.example"), methods: []string{"GET"}, front: true},
	)
	served := 0
	for _, c := range cs {
		for i := range 2 {
			calls.Store(0)
			got, want := exchange(t, front, c.raw, c.methods, c.half), exchange(t, plain, c.raw, c.methods, c.half)
			got, want = ageField.ReplaceAllString(got, "Age: <age>\r\n"), ageField.ReplaceAllString(want, "Age: <age>\r\n")
			if got != want {
				t.Errorf("%s %d:\nFront:\n%.1500q\nnet/http:\n%.1500q", c.name, i, got, want)
			}
			if c.front && i == 1 && calls.Load() != 0 {
				t.Errorf("%s: net/http's handler saw %d requests; want the Front alone", c.name, calls.Load())
			}
			if c.calls > 0 && i == 1 && calls.Load() != int64(c.calls) {
				t.Errorf("%s: net/http's handler saw %d requests, want %d", c.name, calls.Load(), c.calls)
			}
			if c.front && i == 1 && strings.Contains(got, "X-Strata-Tier: ram") {
				served++
			}
		}
	}
	if served == 0 {
		t.Error("the Front served no edge hit")
	}
	// The RAM hits of 100 KiB and 2 MiB went out from memory files
	// (ram_sendfile, the default): the comparison covers that send, and
	// the hits after the first of a record within a second, sent with
	// the header the Front laid out for it (front.LaidWriter).
	if st, ok := a.eng.RAMFiles(); !ok || st.Made == 0 {
		t.Errorf("no memory file for RAM's objects: %+v, %v", st, ok)
	}
	if laid := metric(t, "http://"+front, `strata_http_front_events_total{event="laid"}`); laid == 0 {
		t.Error("no answer went out with a laid header")
	}
}
