package httpapi

import (
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/strata-media/strata/internal/httpapi/httpapitest"
)

func newCORSAPI(t *testing.T, origins ...string) *httptest.Server {
	t.Helper()
	a := New(Options{AdminToken: "tok", Logger: slog.New(slog.DiscardHandler), CORSOrigins: origins})
	ok := ModuleFunc(func(m *Mounter) {
		m.Handle("GET /media/{name}", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.PathValue("name") == "missing" {
				Error(w, http.StatusNotFound, "no such thing")
				return
			}
			w.Write([]byte("bytes"))
		}))
	})
	if err := a.Mount(ok, testModule{name: "x", section: func() any { return 1 }}); err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(a.Handler())
	t.Cleanup(ts.Close)
	return ts
}

const page = "http://127.0.0.1:9999"

func TestCORSAnyOrigin(t *testing.T) {
	ts := newCORSAPI(t, "*")
	for _, path := range []string{"/media/a", "/media/missing"} {
		resp, _ := httpapitest.Do(t, "GET", ts.URL+path, nil, "Origin", page)
		if resp.Header.Get("Access-Control-Allow-Origin") != "*" {
			t.Errorf("GET %s from another origin: %v", path, resp.Header)
		}
		exp := resp.Header.Get("Access-Control-Expose-Headers")
		for _, h := range []string{"Content-Range", "Content-Length", "Accept-Ranges", "Age", "ETag", "X-Strata-Tier"} {
			if !strings.Contains(exp, h) {
				t.Errorf("GET %s: %s not exposed: %q", path, h, exp)
			}
		}
		if resp.Header.Get("Vary") != "" {
			t.Errorf("GET %s: Vary %q with origins *", path, resp.Header.Get("Vary"))
		}
	}
	// Without an Origin too: a browser that cached a same-origin answer
	// hands it to a page of another origin (the browser test found it).
	if resp, _ := httpapitest.Do(t, "GET", ts.URL+"/media/a", nil); resp.Header.Get("Access-Control-Allow-Origin") != "*" {
		t.Error("no CORS fields without an Origin: a cached copy would fail other origins")
	}
	resp, b := httpapitest.Do(t, "OPTIONS", ts.URL+"/media/a", nil, "Origin", page,
		"Access-Control-Request-Method", "GET", "Access-Control-Request-Headers", "range")
	h := resp.Header
	if resp.StatusCode != http.StatusNoContent || h.Get("Access-Control-Allow-Origin") != "*" ||
		h.Get("Access-Control-Allow-Methods") != "GET, HEAD, OPTIONS" || !strings.Contains(h.Get("Access-Control-Allow-Headers"), "Range") ||
		!strings.Contains(h.Get("Access-Control-Allow-Headers"), "If-None-Match") || h.Get("Access-Control-Max-Age") != "3600" {
		t.Fatalf("preflight: %d %v %s", resp.StatusCode, h, b)
	}
	if resp, _ := httpapitest.Do(t, "OPTIONS", ts.URL+"/media/a", nil, "Origin", page,
		"Access-Control-Request-Method", "DELETE"); resp.Header.Get("Access-Control-Allow-Methods") != "" {
		t.Errorf("a preflight for DELETE is allowed: %v", resp.Header)
	}
}

// Admin routes and the node's own /stats and /metrics are never
// CORS-enabled: no fields, and OPTIONS is not a preflight.
func TestCORSNotOnAdminRoutes(t *testing.T) {
	ts := newCORSAPI(t, "*")
	resp, _ := httpapitest.Do(t, "POST", ts.URL+"/x", nil, append(httpapitest.Bearer("tok"), "Origin", page)...)
	if resp.StatusCode != 200 || resp.Header.Get("Access-Control-Allow-Origin") != "" {
		t.Errorf("admin route: %d %v", resp.StatusCode, resp.Header)
	}
	for _, path := range []string{"/stats", "/metrics"} {
		if resp, _ := httpapitest.Do(t, "GET", ts.URL+path, nil, "Origin", page); resp.Header.Get("Access-Control-Allow-Origin") != "" {
			t.Errorf("%s: %v", path, resp.Header)
		}
	}
	for _, path := range []string{"/stats", "/nothing"} {
		resp, b := httpapitest.Do(t, "OPTIONS", ts.URL+path, nil, "Origin", page, "Access-Control-Request-Method", "GET")
		if _, err := ReadProblem(resp, b); err != nil || resp.StatusCode == http.StatusNoContent || resp.Header.Get("Access-Control-Allow-Origin") != "" {
			t.Errorf("OPTIONS %s: %d %v %v", path, resp.StatusCode, resp.Header, err)
		}
	}
}

func TestCORSOriginList(t *testing.T) {
	ts := newCORSAPI(t, "https://player.example/", page)
	for origin, allowed := range map[string]bool{page: true, "https://player.example": true, "https://evil.example": false, "": false} {
		resp, _ := httpapitest.Do(t, "GET", ts.URL+"/media/a", nil, "Origin", origin)
		got := resp.Header.Get("Access-Control-Allow-Origin")
		if allowed && got != origin || !allowed && got != "" {
			t.Errorf("origin %q: Access-Control-Allow-Origin %q", origin, got)
		}
		if resp.Header.Get("Vary") != "Origin" {
			t.Errorf("origin %q: Vary %q, want Origin", origin, resp.Header.Get("Vary"))
		}
		resp, _ = httpapitest.Do(t, "OPTIONS", ts.URL+"/media/a", nil, "Origin", origin, "Access-Control-Request-Method", "GET")
		if resp.StatusCode != http.StatusNoContent || (resp.Header.Get("Access-Control-Allow-Methods") != "") != allowed {
			t.Errorf("preflight from %q: %d %v", origin, resp.StatusCode, resp.Header)
		}
	}
}

func TestCORSOff(t *testing.T) {
	ts := newCORSAPI(t)
	resp, _ := httpapitest.Do(t, "GET", ts.URL+"/media/a", nil, "Origin", page)
	if resp.Header.Get("Access-Control-Allow-Origin") != "" || resp.Header.Get("Vary") != "" {
		t.Errorf("CORS fields with CORS off: %v", resp.Header)
	}
}
