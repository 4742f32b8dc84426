package main

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/strata-media/strata/internal/node/app"
)

// strata serve --upstream /=URL with the whole-file tier and the image
// store on (edge mode covers segments, manifests, whole files and images,
// with the upstream's path layout): a path under /files/, /images/ or /iiif/ that the node does not hold is fetched
// from the upstream and then served from the cache, as a segment is; a
// file the node holds is served locally, never asked upstream; the
// upstream's 404 reaches the client once, asked once; ranges of an
// upstream file are served too.
func TestServeEdgeFilesAndImages(t *testing.T) {
	up := newPathUpstream(t)
	data := t.TempDir()
	local := filepath.Join(t.TempDir(), "local.bin")
	os.WriteFile(local, []byte("the node's own file"), 0o644)
	if err := runIngestFile([]string{"--id", "local.bin", "--data", data, local}, io.Discard, io.Discard); err != nil {
		t.Fatal(err)
	}
	cfg, err := loadServeConfig([]string{"--data", data, "--listen", "127.0.0.1:0", "--upstream", "/=" + up.srv.URL + "/",
		"--ram", "4MiB", "--flash-size", "16MiB", "--block-size", "1MiB", "--log-level", "warn"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	url, stop := startServe(t, cfg, app.Options{})
	defer stop()

	for _, p := range []string{"/files/report.pdf", "/files/a/b.bin", "/images/cat", "/images/cat/small",
		"/iiif/3/cat/info.json", "/iiif/3/cat/full/max/0/default.jpg", "/videos/t/manifest.mpd"} {
		for i, want := range []string{"MISS", "HIT"} {
			code, body, h := fetch(t, url+p, "")
			if code != 200 || body != "upstream bytes of "+p || h.Get("X-Strata-Cache") != want {
				t.Fatalf("GET %s (%d): %d %q %s, want 200 from the upstream, %s", p, i+1, code, body, h.Get("X-Strata-Cache"), want)
			}
		}
		if n := up.count(p); n != 1 {
			t.Fatalf("%s: %d upstream requests, want 1", p, n)
		}
	}
	if code, body, h := fetch(t, url+"/files/local.bin", ""); code != 200 || body != "the node's own file" ||
		h.Get("X-Strata-Cache") != "" || up.count("/files/local.bin") != 0 {
		t.Fatalf("the node's own file: %d %q %s, %d upstream requests", code, body, h.Get("X-Strata-Cache"), up.count("/files/local.bin"))
	}
	if code, body, _ := fetch(t, url+"/files/none.bin", ""); code != 404 || body != "upstream: no such file" || up.count("/files/none.bin") != 1 {
		t.Fatalf("a file nobody holds: %d %q, %d upstream requests", code, body, up.count("/files/none.bin"))
	}
	if code, body, h := fetch(t, url+"/files/report.pdf", "bytes=9-13"); code != 206 || body != "bytes" ||
		h.Get("Content-Range") != fmt.Sprintf("bytes 9-13/%d", len("upstream bytes of /files/report.pdf")) {
		t.Fatalf("a range of an upstream file: %d %q %s", code, body, h.Get("Content-Range"))
	}
	if st := getStats(t, url)["edge"]; st["upstream_errors"] != 0 || st["hits"] < 7 {
		t.Fatalf("edge stats %v", st)
	}
}

// pathUpstream answers every path with "upstream bytes of PATH" (fresh
// for five minutes), but /files/none.bin with a 404, and counts the
// requests of each path.
type pathUpstream struct {
	srv *httptest.Server
	mu  sync.Mutex
	n   map[string]int // guarded by mu
}

func newPathUpstream(t *testing.T) *pathUpstream {
	u := &pathUpstream{n: map[string]int{}}
	u.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u.mu.Lock()
		u.n[r.URL.Path]++
		u.mu.Unlock()
		if r.URL.Path == "/files/none.bin" {
			http.Error(w, "upstream: no such file", http.StatusNotFound)
			return
		}
		w.Header().Set("Cache-Control", "max-age=300")
		w.Header().Set("ETag", strconv.Quote(r.URL.Path))
		http.ServeContent(w, r, "", time.Time{}, bytes.NewReader([]byte("upstream bytes of "+r.URL.Path)))
	}))
	t.Cleanup(u.srv.Close)
	return u
}

func (u *pathUpstream) count(path string) int {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.n[path]
}

// fetch GETs url, with a Range header if rng is set, and returns the
// status, the body (trimmed) and the header.
func fetch(t *testing.T, url, rng string) (int, string, http.Header) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	if rng != "" {
		req.Header.Set("Range", rng)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(bytes.TrimSpace(b)), resp.Header
}
