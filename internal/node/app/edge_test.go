package app

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/strata-media/strata/internal/httpapi/httpapitest"
)

// testUpstream is a real upstream on 127.0.0.1 that counts its requests by
// path.
type testUpstream struct {
	*httptest.Server
	mu    sync.Mutex
	count map[string]int
}

func newTestUpstream(t *testing.T) *testUpstream {
	u := &testUpstream{count: map[string]int{}}
	u.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u.mu.Lock()
		u.count[r.URL.Path]++
		u.mu.Unlock()
		if strings.HasSuffix(r.URL.Path, "/missing") {
			http.NotFound(w, r)
			return
		}
		body := "upstream bytes of " + r.URL.Path
		w.Header().Set("Cache-Control", "public, max-age=600")
		w.Header().Set("ETag", `"`+strconv.Itoa(len(body))+`"`)
		http.ServeContent(w, r, "", time.Time{}, strings.NewReader(body))
	}))
	t.Cleanup(u.Close)
	return u
}

func (u *testUpstream) requests(path string) int {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.count[path]
}

// An edge-only node (no titles, no capacity directory prepared) in front
// of a real upstream: a miss, then hits from RAM without an upstream
// request, the headers that say so, the /stats section and metrics,
// CORS, a title the capacity tier does not hold fetched from the
// upstream, and a purge behind the admin token.
func TestEdgeNode(t *testing.T) {
	up := newTestUpstream(t)
	cfg := testConfig(t)
	cfg.AdminToken = "tok"
	cfg.Upstreams = []UpstreamConfig{{Prefix: "/", URL: up.URL + "/"}}
	n, base := serveNode(t, cfg)
	if d := n.Description(); len(d.Upstreams) != 1 || d.Capacity.Titles != 0 {
		t.Fatalf("description %+v", d)
	}
	const path = "/media/show/seg-1.m4s"
	for i, want := range []struct{ cache, tier string }{{"MISS", "upstream"}, {"HIT", "ram"}, {"HIT", "ram"}} {
		resp, body := httpapitest.Do(t, "GET", base+path, nil, "Origin", "http://127.0.0.1:1")
		h := resp.Header
		if resp.StatusCode != 200 || string(body) != "upstream bytes of "+path || h.Get("X-Strata-Cache") != want.cache ||
			h.Get("X-Strata-Tier") != want.tier || h.Get("Access-Control-Allow-Origin") != "*" {
			t.Fatalf("request %d: %d %q %v, want %s from %s", i, resp.StatusCode, body, h, want.cache, want.tier)
		}
		if i > 0 && h.Get("Age") == "" {
			t.Errorf("request %d: a hit without Age", i)
		}
	}
	if c := up.requests(path); c != 1 {
		t.Fatalf("%d upstream requests for a miss and two hits", c)
	}
	checkEdgeStats(t, base, 2, 1)
	if _, body := get(t, base+"/metrics"); !strings.Contains(string(body), `strata_edge_requests_total{result="hit"} 2`) {
		t.Error("/metrics lacks the edge's hits")
	}
	// A title the capacity tier does not hold: the videos route hands it
	// to the edge.
	if resp, body := get(t, base+"/videos/remote/r/1.m4s"); resp.StatusCode != 200 || resp.Header.Get("X-Strata-Cache") != "MISS" ||
		string(body) != "upstream bytes of /videos/remote/r/1.m4s" {
		t.Fatalf("a title only the upstream holds: %d %q", resp.StatusCode, body)
	}
	// The upstream's own 404 reaches the client as the upstream sent it
	// (a proxy relays its origin's errors); the edge's own errors are
	// problem details.
	if resp, body := get(t, base+"/media/missing"); resp.StatusCode != http.StatusNotFound || string(body) != "404 page not found\n" {
		t.Fatalf("the upstream's 404: %d %q", resp.StatusCode, body)
	}
	wantProblem(t, base+"/media/%2e%2e/x", http.StatusBadRequest)
	// Purge: admin only, then the next request goes upstream again.
	purge := base + "/admin/purge?path=" + path
	if resp, _ := httpapitest.Do(t, "POST", purge, nil); resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("purge without the token: %d", resp.StatusCode)
	}
	if resp, body := httpapitest.Do(t, "POST", purge, nil, httpapitest.Bearer("tok")...); resp.StatusCode != 200 ||
		!strings.Contains(string(body), `"objects": 1,`) {
		t.Fatalf("purge: %d %s", resp.StatusCode, body)
	}
	// A path never cached: 200, nothing dropped.
	if resp, body := httpapitest.Do(t, "POST", base+"/admin/purge?path=/never/cached", nil, httpapitest.Bearer("tok")...); resp.StatusCode != 200 ||
		!strings.Contains(string(body), `"objects": 0,`) {
		t.Fatalf("purge of a path never cached: %d %s", resp.StatusCode, body)
	}
	// By tag: behind the token too.
	if resp, _ := httpapitest.Do(t, "POST", base+"/admin/purge?tag=t", nil); resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("purge by tag without the token: %d", resp.StatusCode)
	}
	if resp, body := httpapitest.Do(t, "POST", base+"/admin/purge?tag=t", nil, httpapitest.Bearer("tok")...); resp.StatusCode != 200 {
		t.Fatalf("purge by tag: %d %s", resp.StatusCode, body)
	}
	if resp, _ := get(t, base+path); resp.Header.Get("X-Strata-Cache") != "MISS" || up.requests(path) != 2 {
		t.Fatalf("after the purge: %s, %d upstream requests", resp.Header.Get("X-Strata-Cache"), up.requests(path))
	}
	if resp, _ := httpapitest.Do(t, "POST", base+"/admin/purge", nil, httpapitest.Bearer("tok")...); resp.StatusCode != 400 {
		t.Errorf("purge without a path: %d", resp.StatusCode)
	}
}

// checkEdgeStats checks the "edge" section of /stats.
func checkEdgeStats(t *testing.T, base string, hits, misses uint64) {
	t.Helper()
	_, body := get(t, base+"/stats")
	var st struct {
		Edge *struct {
			Hits             uint64 `json:"hits"`
			Misses           uint64 `json:"misses"`
			UpstreamRequests uint64 `json:"upstream_requests"`
		} `json:"edge"`
	}
	if err := json.Unmarshal(body, &st); err != nil || st.Edge == nil {
		t.Fatalf("/stats has no edge section: %v %.200s", err, body)
	}
	e := st.Edge
	if e.Hits != hits || e.Misses != misses || e.UpstreamRequests != misses {
		t.Fatalf("edge stats %+v, want %d hits and %d misses", e, hits, misses)
	}
}

// TestEdgeOnRootKeepsNodeRoutesAndFastPath: an edge on "/" (the README's
// example) leaves the node's own routes answering as the node's, and its
// fresh RAM hits are answered by the Front (strata_http_front_events_total
// counts them), counted under the edge's route "GET /", with no "fast path
// off" warning in the log.
func TestEdgeOnRootKeepsNodeRoutesAndFastPath(t *testing.T) {
	up := newTestUpstream(t)
	cfg := testConfig(t)
	cfg.Upstreams = []UpstreamConfig{{Prefix: "/", URL: up.URL + "/"}}
	logs := &syncBuffer{}
	n, err := Open(context.Background(), cfg, Options{Logger: slog.New(slog.NewTextHandler(logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	runNode(t, n)
	base := n.Description().URL
	for _, path := range []string{"/stats", "/metrics", "/healthz", "/readyz", "/", "/watch", "/videos"} {
		resp, body := httpapitest.Do(t, "GET", base+path, nil)
		if resp.StatusCode != 200 || resp.Header.Get("X-Strata-Cache") != "" {
			t.Errorf("GET %s with an edge on /: %d %s %.100q", path, resp.StatusCode, resp.Header.Get("X-Strata-Cache"), body)
		}
	}
	if up.requests("/stats")+up.requests("/metrics")+up.requests("/healthz")+up.requests("/readyz") != 0 {
		t.Errorf("the node's own routes reached the upstream")
	}
	answers := metric(t, base, `strata_http_front_events_total{event="answer"}`)
	for i := range 3 {
		resp, body := httpapitest.Do(t, "GET", base+"/seg.m4s", nil)
		if want := []string{"MISS", "HIT", "HIT"}[i]; resp.StatusCode != 200 || resp.Header.Get("X-Strata-Cache") != want ||
			string(body) != "upstream bytes of /seg.m4s" {
			t.Fatalf("GET /seg.m4s #%d: %d %s %q, want %s", i, resp.StatusCode, resp.Header.Get("X-Strata-Cache"), body, want)
		}
	}
	if got := metric(t, base, `strata_http_front_events_total{event="answer"}`) - answers; got < 2 {
		t.Errorf("the Front answered %v of the 2 hits under /", got)
	}
	if got := metric(t, base, `strata_http_requests_total{code="200",route="GET /"}`); got != 3 {
		t.Errorf("route GET / counted %v of 3 answers", got)
	}
	if strings.Contains(logs.String(), "fast path off") {
		t.Errorf("fast path turned off:\n%s", logs.String())
	}
}

// TestEdgeRulesReload: a reload puts new cache rules in force for the
// next request (a rule that drops the query from manifests' keys), and a
// bad rule is refused with the running rules kept.
func TestEdgeRulesReload(t *testing.T) {
	up := newTestUpstream(t)
	cfg := testConfig(t)
	cfg.Upstreams = []UpstreamConfig{{Prefix: "/cdn/", URL: up.URL + "/"}}
	n, base := serveNode(t, cfg)
	cacheOf := func(path string) string {
		t.Helper()
		resp, body := httpapitest.Do(t, "GET", base+path, nil)
		if resp.StatusCode != 200 || string(body) != "upstream bytes of /a.mpd" {
			t.Fatalf("GET %s: %d %q", path, resp.StatusCode, body)
		}
		return resp.Header.Get("X-Strata-Cache")
	}
	if c := cacheOf("/cdn/a.mpd?t=1"); c != "MISS" {
		t.Fatalf("first GET: %s", c)
	}
	if c := cacheOf("/cdn/a.mpd?t=2"); c != "MISS" {
		t.Fatalf("another query before the rule: %s", c)
	}
	none := "none"
	next := cfg
	next.Edge.Rules = []EdgeRuleConfig{{Match: "*.mpd", Query: &none}}
	if r, err := n.Reload(next); err != nil || !slices.Contains(r.Changed, "edge") {
		t.Fatalf("Reload: %+v %v", r, err)
	}
	if c := cacheOf("/cdn/a.mpd?t=3"); c != "MISS" { // the key without a query: not stored yet
		t.Fatalf("first GET under the rule: %s", c)
	}
	if c := cacheOf("/cdn/a.mpd?t=4"); c != "HIT" {
		t.Fatalf("another query under the rule: %s", c)
	}
	bad := next
	bad.Edge.Rules = []EdgeRuleConfig{{Match: "*.mpd", Query: &none, Grace: &Duration{-time.Second}}}
	if _, err := n.Reload(bad); err == nil || !strings.Contains(err.Error(), "grace: negative") {
		t.Fatalf("Reload of a negative grace: %v", err)
	}
	if c := cacheOf("/cdn/a.mpd?t=5"); c != "HIT" {
		t.Fatalf("after a refused reload: %s", c)
	}
}

// An edge node (upstreams, no origin) opens no image store unless
// [images] enabled says so: the image store's memory goes to the RAM tier
// (the banner's memory line has no image memtable), the banner says why
// there is none, no LSM directory is made, and an image path goes to the
// upstream like any other. With enabled it opens one, and --no-images
// wins over enabled.
func TestEdgeNodeOpensNoImageStoreUnlessEnabled(t *testing.T) {
	up := newTestUpstream(t)
	edgeConfig := func(enabled, disabled bool) Config {
		cfg := DefaultConfig()
		cfg.Data, cfg.Listen = t.TempDir(), "127.0.0.1:0"
		cfg.Memory, cfg.FlashSize, cfg.BlockSize, cfg.Files.FlashSize = "640MiB", 16<<20, 1<<20, 8<<20
		cfg.Upstreams = []UpstreamConfig{{Prefix: "/", URL: up.URL + "/"}}
		cfg.Images.Enabled, cfg.Images.Disabled = enabled, disabled
		if err := cfg.Resolve(); err != nil {
			t.Fatal(err)
		}
		return cfg
	}
	banner := func(d Description) map[string]string {
		m := map[string]string{}
		for _, f := range d.Banner() {
			m[f.Label] = f.Text
		}
		return m
	}

	cfg := edgeConfig(false, false)
	n, base := serveNode(t, cfg)
	d := n.Description()
	b := banner(d)
	if d.Images != nil || d.ImagesOff != ImagesOffEdge || b["images"] != "none ("+ImagesOffEdge+")" {
		t.Fatalf("an edge opened the image store: %+v, banner %q", d.Images, b["images"])
	}
	if p := d.Memory.Parts; p.ImageMemTable+p.ImageBlockCache != 0 || strings.Contains(b["memory"], "image") ||
		!strings.Contains(b["memory"], "RAM tier 380MiB (budget)") {
		t.Fatalf("an edge's memory without images: %+v, banner %q", p, b["memory"])
	}
	if _, err := os.Stat(cfg.Images.LSM); !os.IsNotExist(err) {
		t.Fatalf("an edge without images made %s: %v", cfg.Images.LSM, err)
	}
	if resp, body := get(t, base+"/images/pic/thumb"); resp.StatusCode != 200 || string(body) != "upstream bytes of /images/pic/thumb" {
		t.Fatalf("an image path on an edge without images: %d %q", resp.StatusCode, body)
	}

	n, _ = serveNode(t, edgeConfig(true, false))
	d = n.Description()
	b = banner(d)
	if d.Images == nil || d.ImagesOff != "" || !strings.Contains(b["memory"], "image memtable 64MiB") ||
		!strings.Contains(b["memory"], "RAM tier 280MiB (budget)") {
		t.Fatalf("an edge with images enabled: %+v %q, banner %q", d.Images, d.ImagesOff, b["memory"])
	}

	n, _ = serveNode(t, edgeConfig(true, true))
	if d := n.Description(); d.Images != nil || banner(d)["images"] != "none (--no-images)" {
		t.Fatalf("--no-images with enabled: %+v, banner %q", d.Images, banner(d)["images"])
	}
}
