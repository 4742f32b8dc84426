package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/strata-media/strata/internal/httpapi"
	"github.com/strata-media/strata/internal/media/mediatest"
	"github.com/strata-media/strata/internal/media/player"
	"github.com/strata-media/strata/internal/node/app"
)

// TestEdgePlayback is the acceptance test of edge mode, end to end
// with real parts only:
//
//   - nginx serves a data directory holding a title packaged by strata
//     ingest video, as a static origin (fresh for an hour, as an
//     operator's origin would say);
//   - strata serve --upstream /videos/=http://nginx/videos/ is a node
//     holding nothing of its own in front of it;
//   - the watch page, served by another origin, plays the title in
//     Chromium with dash.js and hls.js through CORS;
//   - a second viewing (a fresh browser profile, so nothing comes from the
//     browser's cache) is served from RAM or flash: the edge's
//     upstream_requests and nginx's access log do not grow, and every
//     manifest and segment answer says X-Strata-Tier ram or ssd.
//
// It runs with STRATA_BROWSER_TESTS=1 (make test-browser), and installs
// nginx with apt-get where it is missing.
func TestEdgePlayback(t *testing.T) {
	if os.Getenv("STRATA_BROWSER_TESTS") == "" {
		t.Skip("set STRATA_BROWSER_TESTS=1 (make test-browser) to play through an edge node in Chromium")
	}
	mediatest.Require(t)
	nginx := lookNginx(t)

	// The upstream's directory: nginx's workers may run as another user,
	// so it is readable by all (t.TempDir's parents are not).
	root, err := os.MkdirTemp("", "strata-edgeplay-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(root) })
	os.Chmod(root, 0o755)
	var out bytes.Buffer
	if err := runIngestVideo([]string{"--id", "edgeplay", "--data", root, "--segment-duration", "2s", "--levels", "none",
		"300k=" + mediatest.Video(t, "pyr-300k.mp4"), "600k=" + mediatest.Video(t, "pyr-600k.mp4")}, &out, &out); err != nil {
		t.Fatalf("strata ingest video: %v\n%s", err, out.String())
	}
	up := startStaticNginx(t, nginx, root)

	cfg, err := loadServeConfig([]string{"--data", t.TempDir(), "--listen", "127.0.0.1:0",
		"--upstream", "/videos/=http://" + up.addr + "/videos/", "--no-images",
		"--ram", "16MiB", "--flash-size", "32MiB", "--block-size", "1MiB", "--files-flash-size", "0",
		"--monitor-period", "20ms", "--threshold", "1.01", "--log-level", "warn"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	edgeURL, stop := startServe(t, cfg, app.Options{})
	defer stop()
	if catalogTitle(t, edgeURL, "edgeplay").ID != "" {
		t.Fatal("the edge node lists the title as its own")
	}

	// The player page from another origin (another port of 127.0.0.1).
	pages := httpapi.New(httpapi.Options{})
	if err := pages.Mount(player.Module); err != nil {
		t.Fatal(err)
	}
	other := httptest.NewServer(pages.Handler())
	defer other.Close()

	// First viewing: everything comes through the edge from nginx.
	playInChromium(t, edgeURL, other.URL, "edgeplay", "")
	first, firstLog := getStats(t, edgeURL)["edge"], up.requests(t)
	if first["upstream_requests"] == 0 || first["misses"] == 0 || firstLog == 0 {
		t.Fatalf("the first viewing did not reach the upstream: edge %v, %d nginx requests", first, firstLog)
	}
	t.Logf("first viewing: edge %v; nginx answered %d requests", first, firstLog)

	// Second viewing: from the edge's RAM or flash, nothing upstream.
	playInChromium(t, edgeURL, other.URL, "edgeplay", "ram,ssd")
	second, secondLog := getStats(t, edgeURL)["edge"], up.requests(t)
	t.Logf("second viewing: edge %v; nginx answered %d requests", second, secondLog)
	if second["upstream_requests"] != first["upstream_requests"] || second["misses"] != first["misses"] || secondLog != firstLog {
		t.Fatalf("the second viewing reached the upstream: edge upstream_requests %v then %v, misses %v then %v, nginx requests %d then %d",
			first["upstream_requests"], second["upstream_requests"], first["misses"], second["misses"], firstLog, secondLog)
	}
	if second["hits"] <= first["hits"] {
		t.Fatalf("the second viewing was not served by the edge's cache: hits %v then %v", first["hits"], second["hits"])
	}
	// /metrics says the same as /stats.
	want := fmt.Sprintf("strata_edge_upstream_requests_total %g\n", second["upstream_requests"])
	if m := metricsText(t, edgeURL); !strings.Contains(m, want) {
		t.Fatalf("/metrics lacks %q", want)
	}
}

// playInChromium plays video from media with dash.js and hls.js in
// headless Chromium (a fresh profile), the watch page loaded from page;
// wantTiers, if set, is STRATA_WANT_TIERS.
func playInChromium(t *testing.T, media, page, video, wantTiers string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", "--test", "play.test.mjs")
	cmd.Dir = filepath.Join("..", "..", "tests", "browser")
	cmd.Env = append(os.Environ(), "STRATA_URL="+media, "STRATA_VIDEO="+video, "STRATA_PAGE_URL="+page,
		"STRATA_CASES=dash-L1-xorigin,hls-L1-xorigin", "STRATA_WANT_TIERS="+wantTiers)
	out, err := cmd.CombinedOutput()
	t.Logf("node --test play.test.mjs (STRATA_WANT_TIERS=%q):\n%s", wantTiers, out)
	if err != nil {
		t.Fatalf("browser tests failed: %v", err)
	}
}

// staticNginx is nginx serving a directory as an HTTP origin, logging
// each request it answers.
type staticNginx struct{ addr, log string }

// staticNginxConf serves root; %s are the temporary prefix (twice), the
// access log, the listen address and root. Answers are fresh for an hour
// (expires), with nginx's own validators (ETag, Last-Modified).
const staticNginxConf = `worker_processes 1;
error_log %s/error.log warn;
pid %s/nginx.pid;
events { worker_connections 256; }
http {
    types {
        application/dash+xml mpd;
        application/vnd.apple.mpegurl m3u8;
        video/iso.segment m4s;
        video/mp4 mp4;
    }
    default_type application/octet-stream;
    access_log %s;
    server {
        listen %s;
        root %s;
        expires 1h;
    }
}
`

func startStaticNginx(t *testing.T, nginx, root string) *staticNginx {
	t.Helper()
	dir := nginxDir(t, "strata-origin-nginx-")
	n := &staticNginx{addr: freeAddr(t), log: filepath.Join(dir, "access.log")}
	runNginx(t, nginx, dir, fmt.Appendf(nil, staticNginxConf, dir, dir, n.log, n.addr, root), n.addr)
	return n
}

// requests is how many requests nginx has answered: its access log's
// lines (written when each request ends, unbuffered).
func (n *staticNginx) requests(t *testing.T) int {
	t.Helper()
	b, err := os.ReadFile(n.log)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return bytes.Count(b, []byte("\n"))
}
