package app

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
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
