package media

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/strata-media/strata/internal/httpapi"
)

// rawPost sends a POST's head with a declared Content-Length and no body,
// and reads the answer, waiting at most 10 s for it.
func rawPost(t *testing.T, url, path string, length int64) *http.Response {
	t.Helper()
	conn, err := net.Dial("tcp", strings.TrimPrefix(url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	conn.SetDeadline(time.Now().Add(10 * time.Second)) // a bound on a wait, not a measurement
	fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: x\r\nContent-Type: video/mp4\r\nContent-Length: %d\r\n\r\n", path, length)
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("POST %s: no answer before the body: %v", path, err)
	}
	resp.Body.Close()
	return resp
}

// TestUploadRefusedUpFront: a declared length above the cap is 413
// before a byte of the body is read (it waited for the body), one the
// disk has no room for is 507 with nothing stored, and an upload's 4xx
// detail names no staging path.
func TestUploadRefusedUpFront(t *testing.T) {
	var inv []string
	g, root := newTestIngester(t, &inv)
	srv := uploadServer(t, g, 8<<20)
	if resp := rawPost(t, srv.URL, "/videos/big", 1<<40); resp.StatusCode != http.StatusRequestEntityTooLarge {
		t.Errorf("a declared TiB: %d, want 413", resp.StatusCode)
	}

	nob, _ := os.ReadFile(testVideo(t, "nob-200k.mp4"))
	g.opts.FreeSpace = func(string) (int64, error) { return int64(len(nob)), nil } // not twice the upload
	if code, out := post(t, srv.URL+"/videos/full", bytes.NewReader(nob), "video/mp4"); code != http.StatusInsufficientStorage || out["status"] != float64(507) {
		t.Errorf("no room: %d %v, want 507", code, out)
	}
	if ents := rootEntries(t, root); len(ents) != 0 {
		t.Errorf("root holds %v after a refused upload", ents)
	}
	g.opts.FreeSpace = nil

	resp, err := http.Post(srv.URL+"/videos/text", "video/mp4", strings.NewReader("hello, not a video at all"))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	p, err := httpapi.ReadProblem(resp, body)
	if err != nil || resp.StatusCode != 400 {
		t.Fatalf("text upload: %d %v", resp.StatusCode, err)
	}
	if strings.Contains(p.Detail, root) || strings.Contains(p.Detail, stagingPrefix) || !strings.Contains(p.Detail, "not an MP4") {
		t.Errorf("detail %q names a staging path (or not the problem)", p.Detail)
	}
}
