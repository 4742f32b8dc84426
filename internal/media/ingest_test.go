package media

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime/multipart"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/strata-media/strata/internal/httpapi"
)

// rootEntries lists what a capacity root holds, hidden entries included.
func rootEntries(t *testing.T, root string) []string {
	t.Helper()
	ents, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	return names
}

func newTestIngester(t *testing.T, invalidated *[]string) (*Ingester, string) {
	root := t.TempDir()
	opts := IngestOptions{Options: testOptions(t), Invalidate: func(v string) error {
		*invalidated = append(*invalidated, v)
		return nil
	}}
	opts.Levels = nil // defaults: all levels
	return NewIngester(root, opts), root
}

// TestIngestReplace ingests a title, replaces it, and checks the swap,
// the invalidation and that no staging directory is left.
func TestIngestReplace(t *testing.T) {
	var inv []string
	g, root := newTestIngester(t, &inv)
	res, err := g.Ingest(context.Background(), "movie", []Input{{Name: "a", Path: testVideo(t, "nob-200k.mp4")}})
	if err != nil || res.Replaced {
		t.Fatalf("first ingest: %v, replaced %v", err, res != nil && res.Replaced)
	}
	res, err = g.Ingest(context.Background(), "movie", []Input{{Name: "b", Path: testVideo(t, "nob-200k.mp4")}})
	if err != nil || !res.Replaced {
		t.Fatalf("second ingest: %v", err)
	}
	if strings.Join(inv, ",") != "movie" {
		t.Fatalf("invalidated %v, want [movie]", inv)
	}
	if got := strings.Join(rootEntries(t, root), ","); got != "movie" {
		t.Fatalf("root holds %s", got)
	}
	if _, err := os.Stat(filepath.Join(root, "movie", "a")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the old version's rendition is still there: %v", err)
	}
	if _, err := os.Stat(filepath.Join(root, "movie", FramesDir, "b", "blocks")); err != nil {
		t.Fatal(err)
	}
}

// TestIngestFailureLeavesNothing: a bad input stores nothing, and does
// not disturb an existing version.
func TestIngestFailureLeavesNothing(t *testing.T) {
	var inv []string
	g, root := newTestIngester(t, &inv)
	bad := filepath.Join(t.TempDir(), "bad.mp4")
	os.WriteFile(bad, []byte("\x00\x00\x00\x08ftypjunk"), 0o644)
	if _, err := g.Ingest(context.Background(), "x", []Input{{Path: bad}}); !errors.Is(err, ErrInvalidInput) {
		t.Fatalf("got %v", err)
	}
	if ents := rootEntries(t, root); len(ents) != 0 {
		t.Fatalf("root holds %v after a failed ingest", ents)
	}
	if _, err := g.Ingest(context.Background(), "x", []Input{{Name: "ok", Path: testVideo(t, "nob-200k.mp4")}}); err != nil {
		t.Fatal(err)
	}
	if _, err := g.Ingest(context.Background(), "x", []Input{{Path: bad}}); err == nil {
		t.Fatal("bad replacement accepted")
	}
	if _, err := os.Stat(filepath.Join(root, "x", "ok", "1.m4s")); err != nil {
		t.Fatalf("failed replacement disturbed the title: %v", err)
	}
	if len(inv) != 0 {
		t.Fatalf("invalidated %v without a replacement", inv)
	}
}

func TestCleanStale(t *testing.T) {
	var inv []string
	g, root := newTestIngester(t, &inv)
	dead := filepath.Join(root, stagingPrefix+"old-123")
	os.MkdirAll(filepath.Join(dead, "title"), 0o755)
	live, err := g.Begin("live")
	if err != nil {
		t.Fatal(err)
	}
	defer live.Abort()
	if _, err := g.Begin("live"); !errors.Is(err, ErrBusy) {
		t.Fatalf("second Begin of one id: %v", err)
	}
	n, err := g.CleanStale()
	if err != nil || n != 1 {
		t.Fatalf("removed %d: %v", n, err)
	}
	if _, err := os.Stat(live.UploadDir()); err != nil {
		t.Fatalf("the live staging directory was removed: %v", err)
	}
}

// postMP4 uploads body to the handler as one MP4.
func post(t *testing.T, url string, body io.Reader, contentType string) (int, map[string]any) {
	t.Helper()
	resp, err := http.Post(url, contentType, body)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode >= 400 {
		if _, err := httpapi.ReadProblem(resp, b); err != nil {
			t.Errorf("POST %s: %v", url, err)
		}
	}
	var out map[string]any
	json.Unmarshal(b, &out)
	return resp.StatusCode, out
}

func uploadServer(t *testing.T, g *Ingester, max int64) *httptest.Server {
	mux := http.NewServeMux()
	mux.Handle("POST /videos/{video}", g.UploadHandler(max))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

func multipartBody(t *testing.T, files map[string]string) (*bytes.Buffer, string) {
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	for name, path := range files {
		w, _ := mw.CreateFormFile(name, filepath.Base(path))
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		w.Write(data)
	}
	mw.Close()
	return &buf, mw.FormDataContentType()
}

func TestUploadHandler(t *testing.T) {
	var inv []string
	g, root := newTestIngester(t, &inv)
	srv := uploadServer(t, g, 8<<20)
	nob, _ := os.ReadFile(testVideo(t, "nob-200k.mp4"))

	code, out := post(t, srv.URL+"/videos/one?rendition=low&segment_duration=1", bytes.NewReader(nob), "video/mp4")
	if code != http.StatusCreated || out["video"] != "one" {
		t.Fatalf("single upload: %d %v", code, out)
	}
	body, ct := multipartBody(t, map[string]string{"300k": testVideo(t, "pyr-300k.mp4"), "600k": testVideo(t, "pyr-600k.mp4")})
	if code, out = post(t, srv.URL+"/videos/two", body, ct); code != http.StatusCreated {
		t.Fatalf("multipart upload: %d %v", code, out)
	}
	if code, _ = post(t, srv.URL+"/videos/one", bytes.NewReader(nob), "video/mp4"); code != http.StatusOK {
		t.Fatalf("replacing upload: %d", code)
	}
	for _, c := range []struct {
		name, url, ct string
		body          []byte
		want          int
	}{
		{"text", "/videos/bad", "video/mp4", []byte("hello"), 400},
		{"truncated", "/videos/bad", "video/mp4", nob[:len(nob)*2/3], 400},
		{"empty", "/videos/bad", "video/mp4", nil, 400},
		{"bad id", "/videos/.hidden", "video/mp4", nob, 400},
		{"bad duration", "/videos/bad?segment_duration=x", "video/mp4", nob, 400},
		{"bad multipart", "/videos/bad", "multipart/form-data; boundary=zz", []byte("--zz\r\nnonsense"), 400},
	} {
		if code, out := post(t, srv.URL+c.url, bytes.NewReader(c.body), c.ct); code != c.want || out["status"] != float64(c.want) || out["detail"] == nil {
			t.Errorf("%s: %d %v, want %d with a problem", c.name, code, out, c.want)
		}
	}
	small := uploadServer(t, g, 1000)
	if code, _ := post(t, small.URL+"/videos/big", bytes.NewReader(nob), "video/mp4"); code != http.StatusRequestEntityTooLarge {
		t.Errorf("too large: %d", code)
	}
	if got := strings.Join(rootEntries(t, root), ","); got != "one,two" {
		t.Fatalf("root holds %s after the bad uploads", got)
	}
}

// TestUploadInterrupted closes the connection in the middle of the body:
// the handler fails and leaves nothing.
func TestUploadInterrupted(t *testing.T) {
	var inv []string
	g, root := newTestIngester(t, &inv)
	srv := uploadServer(t, g, 8<<20)
	nob, _ := os.ReadFile(testVideo(t, "nob-200k.mp4"))
	conn, err := net.Dial("tcp", strings.TrimPrefix(srv.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(conn, "POST /videos/cut HTTP/1.1\r\nHost: x\r\nContent-Type: video/mp4\r\nContent-Length: %d\r\n\r\n", len(nob))
	conn.Write(nob[:len(nob)/2])
	time.Sleep(100 * time.Millisecond)
	conn.Close()
	deadline := time.Now().Add(10 * time.Second)
	for len(rootEntries(t, root)) > 0 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if ents := rootEntries(t, root); len(ents) != 0 {
		t.Fatalf("root holds %v after an interrupted upload", ents)
	}
}

func TestUploadBusy(t *testing.T) {
	var inv []string
	g, _ := newTestIngester(t, &inv)
	srv := uploadServer(t, g, 8<<20)
	s, err := g.Begin("busy")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Abort()
	nob, _ := os.ReadFile(testVideo(t, "nob-200k.mp4"))
	if code, _ := post(t, srv.URL+"/videos/busy", bytes.NewReader(nob), "video/mp4"); code != http.StatusConflict {
		t.Fatalf("got %d, want 409", code)
	}
}
