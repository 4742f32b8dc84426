package main

import (
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/strata-media/strata/internal/node/app"
)

// The config file's origin, upstreams and CORS origins, and the flags
// that override them: the first --upstream replaces the file's list.
func TestServeConfigEdgeAndOrigin(t *testing.T) {
	dir := t.TempDir()
	conf := filepath.Join(dir, "strata.toml")
	os.WriteFile(conf, []byte(`data = "`+dir+`"
origin = "s3://media/vod?endpoint=http://127.0.0.1:9000&path_style=true"
cors_origins = ["https://player.example"]
[[upstream]]
prefix = "/cdn/"
url = "http://127.0.0.1:8081/"
`), 0o644)
	cfg, err := loadServeConfig([]string{"--config", conf}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Origin == "" || !slices.Equal(cfg.CORSOrigins, []string{"https://player.example"}) ||
		!reflect.DeepEqual(cfg.Upstreams, []app.UpstreamConfig{{Prefix: "/cdn/", URL: "http://127.0.0.1:8081/", UpstreamSettings: app.DefaultUpstreamSettings()}}) {
		t.Fatalf("from the file: %+v %v %v", cfg.Origin, cfg.CORSOrigins, cfg.Upstreams)
	}
	cfg, err = loadServeConfig([]string{"--config", conf, "--upstream", "/a/=http://h1/", "--upstream", "http://h2/",
		"--cors-origins", "*,http://x"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	def := app.DefaultUpstreamSettings()
	want := []app.UpstreamConfig{{Prefix: "/a/", URL: "http://h1/", UpstreamSettings: def}, {Prefix: "/", URL: "http://h2/", UpstreamSettings: def}}
	if !reflect.DeepEqual(cfg.Upstreams, want) || !slices.Equal(cfg.CORSOrigins, []string{"*", "http://x"}) {
		t.Fatalf("flags: %v %v", cfg.Upstreams, cfg.CORSOrigins)
	}
	for _, bad := range [][]string{{"--origin", "s3://AWS_KEY:secret@bucket/x"}, {"--origin", "http://bucket/x"}, {"--origin", "s3://b/x", "--demo"}} {
		_, err := loadServeConfig(append([]string{"--data", dir}, bad...), io.Discard)
		if err == nil || strings.Contains(err.Error(), "secret") {
			t.Errorf("%v: %v", bad, err)
		}
	}
}

// strata serve --upstream /=URL alone: an edge-only node, nothing
// ingested, in front of a real HTTP server; the second request is a hit
// that does not reach the upstream.
func TestServeEdgeOnly(t *testing.T) {
	var hits atomic.Int64
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.Header().Set("Cache-Control", "max-age=300")
		w.Header().Set("ETag", `"v1"`)
		io.WriteString(w, "#EXTM3U\n")
	}))
	defer up.Close()
	cfg, err := loadServeConfig([]string{"--data", t.TempDir(), "--listen", "127.0.0.1:0", "--upstream", "/=" + up.URL + "/",
		"--no-images", "--ram", "4MiB", "--flash-size", "16MiB", "--block-size", "1MiB", "--files-flash-size", "0", "--log-level", "warn"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	url, stop := startServe(t, cfg, app.Options{})
	defer stop()
	for i, want := range []string{"MISS", "HIT"} {
		resp, err := http.Get(url + "/live/master.m3u8")
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || string(body) != "#EXTM3U\n" || resp.Header.Get("X-Strata-Cache") != want {
			t.Fatalf("request %d: %d %q %s, want %s", i, resp.StatusCode, body, resp.Header.Get("X-Strata-Cache"), want)
		}
	}
	if n := hits.Load(); n != 1 {
		t.Fatalf("%d upstream requests, want 1", n)
	}
	if st := getStats(t, url)["edge"]; st["hits"] != 1 || st["upstream_requests"] != 1 {
		t.Fatalf("edge stats %v", st)
	}
}
