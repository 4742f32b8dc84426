package app

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/strata-media/strata/internal/httpapi"
	"github.com/strata-media/strata/internal/storage/origin"
	"github.com/strata-media/strata/internal/storage/s3test"
)

// s3Config is testConfig with the titles in the test bucket of the S3
// server at endpoint, under the prefix "vod", credentials from the
// environment as an operator would give them.
func s3Config(t *testing.T, endpoint string) Config {
	t.Helper()
	t.Setenv("AWS_ACCESS_KEY_ID", s3test.AccessKey)
	t.Setenv("AWS_SECRET_ACCESS_KEY", s3test.SecretKey)
	cfg := testConfig(t)
	cfg.Origin = "s3://" + s3test.Bucket + "/vod?endpoint=" + url.QueryEscape(endpoint) + "&path_style=true&region=us-east-1"
	if err := cfg.Resolve(); err != nil {
		t.Fatal(err)
	}
	return cfg
}

// putTitle uploads a small packaged title "show" to the server: two
// segments of rendition "r", a manifest.
func putTitle(t *testing.T, srv *s3test.Server) {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{"strata.json": `{"segment_duration_s": 2}`, "manifest.mpd": "<MPD/>",
		"r/init.mp4": "init", "r/1.m4s": "segment one", "r/2.m4s": "segment two"}
	for name, body := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	w, err := origin.NewS3Writer(origin.S3Options{Bucket: s3test.Bucket, Prefix: "vod", Endpoint: srv.Endpoint,
		Region: "us-east-1", PathStyle: true, AccessKey: s3test.AccessKey, SecretKey: s3test.SecretKey, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.PutTitle(context.Background(), dir, "show", nil); err != nil {
		t.Fatal(err)
	}
}

// serveNode opens and serves cfg's node until the test ends.
func serveNode(t *testing.T, cfg Config) (*Node, string) {
	t.Helper()
	n, err := Open(context.Background(), cfg, Options{Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	runNode(t, n)
	return n, n.Description().URL
}

// wantProblem checks an error answer: its status, a problem body, never
// cached.
func wantProblem(t *testing.T, url string, code int) *http.Response {
	t.Helper()
	resp, body := get(t, url)
	if _, err := httpapi.ReadProblem(resp, body); resp.StatusCode != code || err != nil {
		t.Fatalf("GET %s: %d %s, want %d: %v", url, resp.StatusCode, body, code, err)
	}
	if cc := resp.Header.Get("Cache-Control"); cc != "no-store" {
		t.Errorf("GET %s: %d with Cache-Control %q", url, code, cc)
	}
	return resp
}

// A node whose titles are in a bucket: the catalog and the objects come
// from it, then RAM; a missing object is 404; with the store stopped, an
// object not cached answers 503 with Retry-After while a cached one is
// still served.
func TestS3CapacityTier(t *testing.T) {
	srv := s3test.Start(t)
	putTitle(t, srv)
	n, base := serveNode(t, s3Config(t, srv.Endpoint))
	if d := n.Description().Capacity; d.Titles != 1 || d.Dir != "" || !strings.Contains(d.S3, "s3://strata-test/vod") ||
		strings.Contains(d.S3, s3test.SecretKey) {
		t.Fatalf("capacity description %+v", d)
	}
	if resp, body := get(t, base+"/videos"); resp.StatusCode != 200 || !strings.Contains(string(body), `"show"`) {
		t.Fatalf("catalog: %d %s", resp.StatusCode, body)
	}
	for _, tier := range []string{"origin", "ram"} {
		resp, body := get(t, base+"/videos/show/r/1.m4s")
		if resp.StatusCode != 200 || string(body) != "segment one" || resp.Header.Get("X-Strata-Tier") != tier {
			t.Fatalf("segment: %d %q from %q, want from %s", resp.StatusCode, body, resp.Header.Get("X-Strata-Tier"), tier)
		}
	}
	wantProblem(t, base+"/videos/show/r/9.m4s", http.StatusNotFound)
	wantProblem(t, base+"/videos/nothing/r/1.m4s", http.StatusNotFound)
	srv.Stop()
	resp := wantProblem(t, base+"/videos/show/r/2.m4s", http.StatusServiceUnavailable)
	if resp.Header.Get("Retry-After") == "" {
		t.Error("503 without Retry-After")
	}
	if resp, body := get(t, base+"/videos/show/r/1.m4s"); resp.StatusCode != 200 || string(body) != "segment one" {
		t.Fatalf("a cached segment with the store down: %d %q", resp.StatusCode, body)
	}
	srv.Restart(t)
	if resp, body := get(t, base+"/videos/show/r/2.m4s"); resp.StatusCode != 200 || string(body) != "segment two" {
		t.Fatalf("after the store is back, the 503 was not cached: %d %q", resp.StatusCode, body)
	}
}

// A store that stops answering (a real HTTP server in front of versitygw
// that holds requests) makes a miss answer 504 once the origin timeout
// passes, and nothing is cached.
func TestS3SlowStoreTimesOut(t *testing.T) {
	srv := s3test.Start(t)
	putTitle(t, srv)
	target, _ := url.Parse(srv.Endpoint)
	proxy := httputil.NewSingleHostReverseProxy(target)
	var stall atomic.Bool
	release := make(chan struct{})
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if stall.Load() {
			select { // hold the request until the client gives up
			case <-r.Context().Done():
			case <-release:
			}
			return
		}
		proxy.ServeHTTP(w, r)
	}))
	defer slow.Close()
	defer close(release)
	cfg := s3Config(t, slow.URL)
	cfg.OriginTimeout.Duration = 500 * time.Millisecond
	_, base := serveNode(t, cfg)
	stall.Store(true)
	wantProblem(t, base+"/videos/show/r/2.m4s", http.StatusGatewayTimeout)
	stall.Store(false)
	if resp, body := get(t, base+"/videos/show/r/2.m4s"); resp.StatusCode != 200 || string(body) != "segment two" ||
		resp.Header.Get("X-Strata-Tier") != "origin" {
		t.Fatalf("after the stall: %d %q from %s", resp.StatusCode, body, resp.Header.Get("X-Strata-Tier"))
	}
}

// A bucket that does not exist, or a store that cannot be reached, fails
// the start with an error naming the bucket and no secret; nothing stays
// open (the data directory opens again).
func TestS3CheckedAtOpen(t *testing.T) {
	srv := s3test.Start(t)
	cfg := s3Config(t, srv.Endpoint)
	cfg.Origin = strings.Replace(cfg.Origin, s3test.Bucket, "no-such-bucket", 1)
	_, err := Open(context.Background(), cfg, Options{Logger: quiet})
	if err == nil || !strings.Contains(err.Error(), "s3://no-such-bucket/vod") || strings.Contains(err.Error(), s3test.SecretKey) {
		t.Fatalf("Open over a missing bucket: %v", err)
	}
	srv.Stop()
	cfg = s3Config(t, srv.Endpoint)
	cfg.OriginTimeout.Duration = 2 * time.Second
	if _, err := Open(context.Background(), cfg, Options{Logger: quiet}); err == nil {
		t.Fatal("Open with the store stopped succeeded")
	}
	cfg.Origin = ""
	n, err := Open(context.Background(), cfg, Options{Logger: quiet})
	if err != nil {
		t.Fatalf("the failed starts left something open: %v", err)
	}
	n.Close()
}
