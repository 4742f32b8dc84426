package app

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// writeTitle puts a title with a manifest and one segment in the capacity
// directory.
func writeTitle(t *testing.T, capacity string) (manifest, segment []byte) {
	t.Helper()
	manifest = []byte(`<?xml version="1.0"?>` + "\n<MPD>\n" + strings.Repeat("  <S t=\"0\" d=\"96000\"/>\n", 200) + "</MPD>\n")
	segment = bytes.Repeat([]byte("moof mdat "), 1000)
	dir := filepath.Join(capacity, "t1", "700k")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(capacity, "t1", "manifest.mpd"), manifest, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "1.m4s"), segment, 0o644); err != nil {
		t.Fatal(err)
	}
	return manifest, segment
}

// getGzip GETs url saying the client takes gzip, with the transport's own
// decompression off.
func getGzip(t *testing.T, url string) (*http.Response, []byte) {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	req.Header.Set("Accept-Encoding", "gzip")
	req.Header.Set("X-Request-Id", "r-"+filepath.Base(url))
	resp, err := (&http.Client{Transport: &http.Transport{DisableCompression: true}}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, b
}

// TestNodeCompressesAndLogs: a node with an access log gzips a title's
// manifest but not its segment, and logs both requests with the tier
// that served them, the capacity tier's time on the miss, and the bytes
// that went on the wire.
func TestNodeCompressesAndLogs(t *testing.T) {
	cfg := testConfig(t)
	cfg.AccessLog = filepath.Join(cfg.Data, "access.log")
	manifest, segment := writeTitle(t, cfg.Capacity)
	n, err := Open(context.Background(), cfg, Options{Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	if n.AccessLog() == nil {
		t.Fatal("no access log")
	}
	stop := runNode(t, n)
	url := n.Description().URL

	resp, b := getGzip(t, url+"/videos/t1/manifest.mpd")
	if resp.StatusCode != 200 || resp.Header.Get("Content-Encoding") != "gzip" {
		t.Fatalf("manifest: %d, Content-Encoding %q", resp.StatusCode, resp.Header.Get("Content-Encoding"))
	}
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := io.ReadAll(zr); !bytes.Equal(got, manifest) {
		t.Fatal("the manifest does not decompress to its bytes")
	}
	resp, sb := getGzip(t, url+"/videos/t1/700k/1.m4s")
	if resp.StatusCode != 200 || resp.Header.Get("Content-Encoding") != "" || !bytes.Equal(sb, segment) {
		t.Fatalf("segment: %d, Content-Encoding %q", resp.StatusCode, resp.Header.Get("Content-Encoding"))
	}
	getGzip(t, url+"/videos/t1/700k/1.m4s") // from RAM now
	// A line is written when its handler returns, which may be after the
	// client has the response: shut down, which waits for the handlers.
	stop()
	if t.Failed() {
		t.FailNow()
	}

	f, err := os.Open(cfg.AccessLog)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var es []httpapiEntry
	for sc := bufio.NewScanner(f); sc.Scan(); {
		var e httpapiEntry
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatalf("%q: %v", sc.Text(), err)
		}
		es = append(es, e)
	}
	if len(es) != 3 {
		t.Fatalf("%d lines: %+v", len(es), es)
	}
	want := []httpapiEntry{{Path: "/videos/t1/manifest.mpd", Status: 200, Bytes: int64(len(b)), Tier: "origin", RequestID: "r-manifest.mpd"},
		{Path: "/videos/t1/700k/1.m4s", Status: 200, Bytes: int64(len(segment)), Tier: "origin", RequestID: "r-1.m4s"},
		{Path: "/videos/t1/700k/1.m4s", Status: 200, Bytes: int64(len(segment)), Tier: "ram", RequestID: "r-1.m4s"}}
	// Lines are written as handlers return, in any order.
	key := func(e httpapiEntry) string { return e.Path + " " + e.Tier }
	slices.SortFunc(es, func(a, b httpapiEntry) int { return strings.Compare(key(a), key(b)) })
	slices.SortFunc(want, func(a, b httpapiEntry) int { return strings.Compare(key(a), key(b)) })
	for i, e := range es {
		hadUpstream := e.UpstreamMS != nil
		e.UpstreamMS = nil
		if e != want[i] || hadUpstream != (want[i].Tier == "origin") {
			t.Errorf("line %d: %+v (upstream_ms %v), want %+v", i, e, hadUpstream, want[i])
		}
	}
}

// httpapiEntry is the part of an access log line the test checks.
type httpapiEntry struct {
	Path       string   `json:"path"`
	Status     int      `json:"status"`
	Bytes      int64    `json:"bytes"`
	Tier       string   `json:"tier"`
	UpstreamMS *float64 `json:"upstream_ms"`
	RequestID  string   `json:"request_id"`
}

// TestReloadReopensTheAccessLog: logrotate renames the file and sends
// SIGHUP; the reload reopens the file, and the next requests go to a new
// one at the configured path.
func TestReloadReopensTheAccessLog(t *testing.T) {
	cfg := testConfig(t)
	cfg.AccessLog = filepath.Join(cfg.Data, "access.log")
	n, err := Open(context.Background(), cfg, Options{Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	stop := runNode(t, n)
	url := n.Description().URL
	getGzip(t, url+"/videos/before")
	// Its line is written when the handler returns, maybe after the
	// response: wait for it (bounded), so it is not written after Reload.
	for i := 0; ; i++ {
		if b, _ := os.ReadFile(cfg.AccessLog); len(b) > 0 {
			break
		}
		if i == 1000 {
			t.Fatal("no access log line after 10 s")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := os.Rename(cfg.AccessLog, cfg.AccessLog+".1"); err != nil {
		t.Fatal(err)
	}
	if _, err := n.Reload(cfg); err != nil {
		t.Fatal(err)
	}
	getGzip(t, url+"/videos/after")
	stop()
	if t.Failed() {
		t.FailNow()
	}
	for file, want := range map[string]string{cfg.AccessLog + ".1": "/videos/before", cfg.AccessLog: "/videos/after"} {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		if lines := strings.Split(strings.TrimSpace(string(b)), "\n"); len(lines) != 1 || !strings.Contains(lines[0], `"path":"`+want+`"`) {
			t.Errorf("%s holds %q, want one line of %s", file, b, want)
		}
	}
}

// TestEdgeAccessLogCombined: an edge node with access_log_format =
// "combined" logs each request as a combined line with the cache result,
// the tier, and for the miss the upstream's status and the bytes fetched
// from it; an unknown format is refused naming the key.
func TestEdgeAccessLogCombined(t *testing.T) {
	up := newTestUpstream(t)
	cfg := testConfig(t)
	cfg.AccessLog = filepath.Join(cfg.Data, "access.log")
	cfg.AccessLogFormat = "combined"
	cfg.Upstreams = []UpstreamConfig{{Prefix: "/cdn/", URL: up.URL + "/"}}
	n, err := Open(context.Background(), cfg, Options{Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	stop := runNode(t, n)
	url := n.Description().URL
	const path = "/cdn/show/seg-1.m4s"
	body := "upstream bytes of /show/seg-1.m4s"
	for range 2 {
		if resp, b := get(t, url+path); resp.StatusCode != 200 || string(b) != body {
			t.Fatalf("%d %q", resp.StatusCode, b)
		}
	}
	stop()
	b, err := os.ReadFile(cfg.AccessLog)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) != 2 {
		t.Fatalf("%d lines: %q", len(lines), b)
	}
	slices.Sort(lines) // written as handlers return: a hit may come first
	req := `"GET ` + path + ` HTTP/1.1" 200 ` + strconv.Itoa(len(body)) + ` "-" "Go-http-client/1.1" rt=`
	wantHit := regexp.MustCompile(`^127\.0\.0\.1 - - \[\d\d/\w{3}/\d{4}:\d\d:\d\d:\d\d \+0000\] ` + regexp.QuoteMeta(req) + `[0-9.]+ cache=HIT tier=ram$`)
	wantMiss := regexp.MustCompile(regexp.QuoteMeta(req) + `[0-9.]+ cache=MISS tier=upstream upstream_status=206 upstream_bytes=` +
		strconv.Itoa(len(body)) + ` upstream_ms=[0-9.]+$`)
	hit, miss := lines[0], lines[1]
	if strings.Contains(hit, "MISS") {
		hit, miss = miss, hit
	}
	if !wantHit.MatchString(hit) || !wantMiss.MatchString(miss) {
		t.Errorf("lines:\n%s\n%s", hit, miss)
	}

	cfg.AccessLogFormat = "xml"
	if err := cfg.Resolve(); err == nil || !strings.Contains(err.Error(), "access_log_format") {
		t.Errorf("format xml: %v", err)
	}
}
