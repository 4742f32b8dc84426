package httpapi

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/strata-media/strata/internal/httpapi/httpapitest"
)

// readEntries decodes the lines of an access log file, each one JSON
// object with the keys log shippers expect.
func readEntries(t *testing.T, path string) []map[string]any {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []map[string]any
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("line %q is not JSON: %v", sc.Text(), err)
		}
		out = append(out, m)
	}
	return out
}

func TestAccessLog(t *testing.T) {
	path := filepath.Join(t.TempDir(), "access.log")
	l, err := OpenAccessLog(path, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	mux := http.NewServeMux()
	mux.HandleFunc("GET /videos/t/1.m4s", func(w http.ResponseWriter, r *http.Request) {
		NoteUpstream(r.Context(), 3*time.Millisecond)
		w.Header().Set("X-Strata-Tier", "origin")
		w.Write([]byte("0123456789"))
	})
	srv := httptest.NewServer(l.Handler(mux))
	resp, _ := fetch(t, "GET", srv.URL+"/videos/t/1.m4s?sig=secret", "X-Request-Id", "req-42", "User-Agent", "probe/1")
	if resp.StatusCode != 200 {
		t.Fatalf("status %d", resp.StatusCode)
	}
	fetch(t, "GET", srv.URL+"/nothing")
	// A line is written when the handler returns, which may be after the
	// client has the response: Close waits for the handlers.
	srv.Close()
	es := readEntries(t, path)
	if len(es) != 2 {
		t.Fatalf("%d lines, want one per request: %v", len(es), es)
	}
	e := es[0]
	for k, want := range map[string]any{"method": "GET", "path": "/videos/t/1.m4s", "status": 200.0, "bytes": 10.0,
		"tier": "origin", "upstream_ms": 3.0, "request_id": "req-42", "user_agent": "probe/1", "proto": "HTTP/1.1"} {
		if e[k] != want {
			t.Errorf("%s = %v, want %v", k, e[k], want)
		}
	}
	if ts, _ := e["time"].(string); !strings.HasSuffix(ts, "Z") {
		t.Errorf("time %q: want RFC 3339 UTC", ts)
	}
	if d, ok := e["duration_ms"].(float64); !ok || d < 0 {
		t.Errorf("duration_ms %v", e["duration_ms"])
	}
	if ra, _ := e["remote_addr"].(string); !strings.HasPrefix(ra, "127.0.0.1:") {
		t.Errorf("remote_addr %q", ra)
	}
	if _, ok := es[1]["upstream_ms"]; ok || es[1]["status"] != 404.0 {
		t.Errorf("a 404 that waited for nothing: %v", es[1])
	}

	// logrotate renames the file, then the SIGHUP handler reopens it.
	// (Requests served in the test's goroutine: each line is written when
	// ServeHTTP returns.)
	h := l.Handler(mux)
	serve := func(path string) { h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", path, nil)) }
	if err := os.Rename(path, path+".1"); err != nil {
		t.Fatal(err)
	}
	serve("/after")
	if err := l.Reopen(); err != nil {
		t.Fatal(err)
	}
	serve("/reopened")
	if old := readEntries(t, path+".1"); len(old) != 3 || old[2]["path"] != "/after" {
		t.Errorf("the renamed file holds %v", old)
	}
	if cur := readEntries(t, path); len(cur) != 1 || cur[0]["path"] != "/reopened" {
		t.Errorf("the reopened file holds %v", cur)
	}
}

// TestAccessLogCountsWireBytes: behind the access log, Compress's output
// is what is counted.
func TestAccessLogCountsWireBytes(t *testing.T) {
	path := filepath.Join(t.TempDir(), "access.log")
	l, err := OpenAccessLog(path, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	body := strings.Repeat(`{"a":1}`, 1000)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, body)
	})
	srv := httptest.NewServer(l.Handler(Compress(h, CompressOptions{})))
	_, b := fetch(t, "GET", srv.URL+"/stats", "Accept-Encoding", "gzip")
	srv.Close() // the handler has returned: its line is written
	es := readEntries(t, path)
	if len(es) != 1 || es[0]["bytes"] != float64(len(b)) || len(b) >= len(body) {
		t.Errorf("logged %v bytes; %d went on the wire for a %d-byte body", es[0]["bytes"], len(b), len(body))
	}
}

// TestAccessLogUpstreamFields: the cache result, the upstream's status
// and the bytes fetched from it reach the line; a request that reached
// no upstream has none of them.
func TestAccessLogUpstreamFields(t *testing.T) {
	path := filepath.Join(t.TempDir(), "access.log")
	l, err := OpenAccessLog(path, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	h := l.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/edge" {
			NoteUpstreamResponse(r.Context(), 503) // a first try, then a retry
			NoteUpstreamBytes(r.Context(), 10)
			NoteUpstreamResponse(r.Context(), 200)
			NoteUpstreamBytes(r.Context(), 90)
			w.Header().Set("X-Strata-Cache", "MISS")
			w.Header().Set("X-Strata-Tier", "upstream")
		} else {
			w.Header().Set("X-Strata-Cache", "HIT")
			w.Header().Set("X-Strata-Tier", "ram")
		}
		io.WriteString(w, "x")
	}))
	for _, p := range []string{"/edge", "/hit"} {
		h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", p, nil))
	}
	es := readEntries(t, path)
	if len(es) != 2 {
		t.Fatalf("%d lines", len(es))
	}
	for k, want := range map[string]any{"cache": "MISS", "tier": "upstream", "upstream_status": 200.0, "upstream_bytes": 100.0} {
		if es[0][k] != want {
			t.Errorf("miss: %s = %v, want %v", k, es[0][k], want)
		}
	}
	if es[1]["cache"] != "HIT" || es[1]["upstream_status"] != nil || es[1]["upstream_bytes"] != nil {
		t.Errorf("hit: %v", es[1])
	}
}

// TestAccessLogCombined: the combined format is nginx's combined line,
// Strata's fields after it, and a hostile User-Agent cannot end a field
// or a line.
func TestAccessLogCombined(t *testing.T) {
	path := filepath.Join(t.TempDir(), "access.log")
	l, err := OpenAccessLog(path, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if err := l.SetFormat("apache"); err == nil {
		t.Error("format apache accepted")
	}
	if err := l.SetFormat(AccessLogCombined); err != nil {
		t.Fatal(err)
	}
	l.now = func() time.Time { return time.Date(2026, 11, 24, 1, 2, 3, 0, time.UTC) }
	h := l.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		NoteUpstream(r.Context(), 2*time.Millisecond)
		NoteUpstreamResponse(r.Context(), 200)
		NoteUpstreamBytes(r.Context(), 5)
		w.Header().Set("X-Strata-Cache", "MISS")
		w.Header().Set("X-Strata-Tier", "upstream")
		io.WriteString(w, "hello")
	}))
	r := httptest.NewRequest("GET", "/cdn/a.m4s?sig=secret", nil)
	r.RemoteAddr = "10.0.0.7:51234"
	r.Header.Set("User-Agent", "evil\"\n agent")
	r.Header.Set("X-Request-Id", "req-1")
	h.ServeHTTP(httptest.NewRecorder(), r)
	r = httptest.NewRequest("GET", "/stats", nil)
	r.RemoteAddr = "[::1]:80"
	h2 := l.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(404) }))
	h2.ServeHTTP(httptest.NewRecorder(), r)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	want := `10.0.0.7 - - [24/Nov/2026:01:02:03 +0000] "GET /cdn/a.m4s HTTP/1.1" 200 5 "-" "evil\x22\x0A agent" rt=0.000 cache=MISS tier=upstream upstream_status=200 upstream_bytes=5 upstream_ms=2.000 request_id=req-1
::1 - - [24/Nov/2026:01:02:03 +0000] "GET /stats HTTP/1.1" 404 0 "-" "-" rt=0.000 cache=- tier=-
`
	if string(b) != want {
		t.Errorf("combined log:\n%s\nwant:\n%s", b, want)
	}
}

// A request whose client went away before it was answered (the handler
// aborted: AbortIfGone) is logged as 499 with no bytes, not as the 200
// nobody was sent.
func TestAccessLogClientGone(t *testing.T) {
	path := filepath.Join(t.TempDir(), "access.log")
	l, err := OpenAccessLog(path, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	waiting := make(chan struct{})
	h := l.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		close(waiting)
		<-r.Context().Done()
		AbortIfGone(r)
	}))
	srv := httptest.NewServer(h)
	if got := httpapitest.HalfClose(t, srv.URL, "GET /slow HTTP/1.1\r\nHost: a\r\n\r\n", func() { <-waiting }); len(got) != 0 {
		t.Errorf("the client got %q", got)
	}
	srv.Close()
	if es := readEntries(t, path); len(es) != 1 || es[0]["status"] != 499.0 || es[0]["bytes"] != 0.0 {
		t.Errorf("logged %v, want one 499 of 0 bytes", es)
	}
}

// The Front reuses one timer per connection: what an upstream answered
// one request is not logged for the next.
func TestAccessLogFrontTimerReset(t *testing.T) {
	path := filepath.Join(t.TempDir(), "access.log")
	l, err := OpenAccessLog(path, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	fl := frontLog{l}
	ctx, timer := fl.Timer(context.Background())
	r := httptest.NewRequest("GET", "/cdn/a", nil).WithContext(ctx)
	NoteUpstream(ctx, time.Millisecond)
	NoteUpstreamResponse(ctx, 200)
	NoteUpstreamBytes(ctx, 7)
	fl.Log(r, http.Header{}, 200, 7, timer, time.Now())
	timer.Reset()
	fl.Log(r, http.Header{}, 200, 7, timer, time.Now())
	es := readEntries(t, path)
	if len(es) != 2 || es[0]["upstream_status"] != 200.0 || es[0]["upstream_bytes"] != 7.0 {
		t.Fatalf("lines %v", es)
	}
	for _, k := range []string{"upstream_status", "upstream_bytes", "upstream_ms"} {
		if _, ok := es[1][k]; ok {
			t.Errorf("the next request on the connection logs %s: %v", k, es[1])
		}
	}
}
