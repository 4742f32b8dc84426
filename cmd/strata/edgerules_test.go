package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/strata-media/strata/internal/node/app"
)

// bareNginxConf serves root with nginx's own validators (ETag,
// Last-Modified) and no Cache-Control or Expires: a packager's output
// put on a plain web server. %s are the prefix (twice), the access log,
// the listen address and root.
const bareNginxConf = `worker_processes 1;
error_log %s/error.log warn;
pid %s/nginx.pid;
events { worker_connections 64; }
http {
    types { application/dash+xml mpd; video/iso.segment m4s; }
    access_log %s;
    server { listen %s; root %s; }
}
`

// TestEdgeRulesWithNginx: nginx as the origin of files with no freshness
// information. With [edge] default_ttl, the second and third requests of
// a segment send nothing upstream; with a rule *.mpd max_ttl 2s, the
// manifest is revalidated (a 304 from nginx) after 2 s. Then nginx stops:
// the edge keeps answering what it holds, marked STALE, and /readyz stays
// 200, degraded. It runs with STRATA_CLUSTER_TESTS=1 and installs nginx
// with apt-get where it is missing.
func TestEdgeRulesWithNginx(t *testing.T) {
	if os.Getenv("STRATA_CLUSTER_TESTS") != "1" {
		t.Skip("set STRATA_CLUSTER_TESTS=1 to run the edge against nginx")
	}
	nginx := lookNginx(t)
	root := nginxDir(t, "strata-rules-root-")
	seg, mpd := make([]byte, 50<<10), []byte(`<?xml version="1.0"?><MPD/>`)
	for i := range seg {
		seg[i] = byte(i * 7)
	}
	os.WriteFile(filepath.Join(root, "seg.m4s"), seg, 0o644)
	os.WriteFile(filepath.Join(root, "index.mpd"), mpd, 0o644)
	dir := nginxDir(t, "strata-rules-nginx-")
	addr, logPath := freeAddr(t), filepath.Join(dir, "access.log")
	runNginx(t, nginx, dir, fmt.Appendf(nil, bareNginxConf, dir, dir, logPath, addr, root), addr)
	nginxRequests := func() int {
		b, _ := os.ReadFile(logPath)
		n := 0
		for _, c := range b {
			if c == '\n' {
				n++
			}
		}
		return n
	}
	waitRequests := func(n int) {
		for i := 0; nginxRequests() < n && i < 100; i++ {
			time.Sleep(20 * time.Millisecond)
		}
	}

	conf := filepath.Join(t.TempDir(), "strata.toml")
	os.WriteFile(conf, []byte("[edge]\ndefault_ttl = \"1m\"\n[[edge.rule]]\nmatch = \"*.mpd\"\nmax_ttl = \"2s\"\n"), 0o644)
	cfg, err := loadServeConfig([]string{"--config", conf, "--data", t.TempDir(), "--listen", "127.0.0.1:0",
		"--upstream", "/=http://" + addr + "/", "--no-images", "--ram", "16MiB", "--flash-size", "32MiB",
		"--block-size", "1MiB", "--files-flash-size", "0", "--log-level", "warn"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	edgeURL, stop := startServe(t, cfg, app.Options{})
	defer stop()
	get := func(path string) (status int, cache string) {
		t.Helper()
		resp, err := http.Get(edgeURL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		io.Copy(io.Discard, resp.Body)
		return resp.StatusCode, resp.Header.Get("X-Strata-Cache")
	}

	for i, want := range []string{"MISS", "HIT", "HIT"} {
		if s, c := get("/seg.m4s"); s != 200 || c != want {
			t.Fatalf("segment request %d: %d %s, want 200 %s", i+1, s, c, want)
		}
	}
	// nginx logs a request once it has finished it, which may be after the
	// edge has the response and answers (a loaded machine: it was, once):
	// wait for the line (bounded), then check that no other came.
	waitRequests(1)
	if n := nginxRequests(); n != 1 {
		t.Fatalf("nginx answered %d requests for three of the segment, want 1", n)
	}
	if s, c := get("/index.mpd"); s != 200 || c != "MISS" {
		t.Fatalf("manifest: %d %s", s, c)
	}
	if s, c := get("/index.mpd"); s != 200 || c != "HIT" {
		t.Fatalf("manifest at once: %d %s", s, c)
	}
	time.Sleep(2100 * time.Millisecond) // the rule's max_ttl, on the node's real clock
	if s, c := get("/index.mpd"); s != 200 || c != "REVALIDATED" {
		t.Fatalf("manifest after 2 s: %d %s, want a revalidation", s, c)
	}
	if s, c := get("/seg.m4s"); s != 200 || c != "HIT" {
		t.Fatalf("segment after 2 s: %d %s", s, c)
	}
	// nginx logs a request once it has finished it, which may be after the
	// edge has its 304 and answers: wait for the line (bounded), then check
	// that no other came.
	waitRequests(3)
	if n := nginxRequests(); n != 3 {
		t.Fatalf("nginx answered %d requests, want 3 (segment, manifest, its revalidation)", n)
	}

	// nginx stops: what the edge holds is still served, marked stale.
	stopNginx(t, nginx, dir, addr)
	time.Sleep(2100 * time.Millisecond)
	if s, c := get("/index.mpd"); s != 200 || c != "STALE" {
		t.Fatalf("manifest with the origin down: %d %s, want 200 STALE", s, c)
	}
	if s, _ := get("/never.m4s"); s != http.StatusBadGateway {
		t.Fatalf("uncached path with the origin down: %d, want 502", s)
	}
	resp, err := http.Get(edgeURL + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	var rd struct{ Status string }
	json.NewDecoder(resp.Body).Decode(&rd)
	resp.Body.Close()
	if resp.StatusCode != 200 || rd.Status != "degraded" {
		t.Fatalf("/readyz with the origin down: %d %q, want 200 degraded", resp.StatusCode, rd.Status)
	}
}

// stopNginx stops the nginx runNginx started in its prefix directory dir
// and waits (bounded) until nothing listens on addr: connections to it
// are refused, as an origin's are when it is down.
func stopNginx(t *testing.T, nginx, dir, addr string) {
	t.Helper()
	stopCmd := exec.Command(nginx, "-c", filepath.Join(dir, "nginx.conf"), "-p", dir+"/", "-s", "stop")
	if out, err := stopCmd.CombinedOutput(); err != nil {
		t.Fatalf("nginx -s stop: %v\n%s", err, out)
	}
	for i := 0; ; i++ {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			return
		}
		c.Close()
		if i == 250 {
			t.Fatal("nginx still listens")
		}
		time.Sleep(20 * time.Millisecond)
	}
}
