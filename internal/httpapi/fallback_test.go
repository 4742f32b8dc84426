package httpapi

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
)

// testFallback answers every path under /cdn/ or /files/ and counts its
// answers; "/files/gone" is a 404 of its own (an upstream's), relayed.
type testFallback struct{ n atomic.Int64 }

func (f *testFallback) Handles(path string) bool {
	return strings.HasPrefix(path, "/files/") || strings.HasPrefix(path, "/cdn/")
}

func (f *testFallback) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	Relay(w)
	f.n.Add(1)
	w.Header().Set("Content-Type", "text/plain")
	if r.URL.Path == "/files/gone" {
		w.WriteHeader(http.StatusNotFound)
		io.WriteString(w, "upstream: no such file")
		return
	}
	w.Header().Set("X-From", "fallback")
	io.WriteString(w, "fallback "+r.URL.Path)
}

// A route's own 404 for a path the fallback handles goes to the fallback
// (with CORS, the local answer's headers and body dropped); its other
// answers, other methods, paths the fallback does not handle and a 404 the
// route relayed from the fallback itself are left as they are. A path no
// route holds goes to the fallback too.
func TestFallbackAfterLocal404(t *testing.T) {
	fb := &testFallback{}
	a := New(Options{Logger: slog.New(slog.DiscardHandler), CORSOrigins: []string{"*"}})
	err := a.Mount(ModuleFunc(func(m *Mounter) {
		local := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("X-Local", "yes")
			switch id := r.PathValue("id"); id {
			case "here":
				w.Header().Set("Content-Type", "text/plain")
				io.WriteString(w, "local "+id)
			case "gone": // the module asks the fallback itself, as Videos does
				fb.ServeHTTP(w, r)
			default:
				Error(w, http.StatusNotFound, "no file "+id)
			}
		})
		m.Handle("GET /files/{id}", local)
		m.Handle("GET /local/{id}", local)
		m.Handle("POST /files/{id}", local)
	}))
	if err != nil {
		t.Fatal(err)
	}
	a.SetFallback(fb)
	ts := httptest.NewServer(a.Handler())
	defer ts.Close()
	for _, c := range []struct {
		method, path string
		code         int
		body, from   string // from: X-Local or X-From
		fallbacks    int64  // fallback answers so far
	}{
		{"GET", "/files/here", 200, "local here", "local", 0},
		{"GET", "/files/missing", 200, "fallback /files/missing", "fallback", 1},
		{"HEAD", "/files/missing", 200, "", "fallback", 2},
		{"GET", "/files/gone", 404, "upstream: no such file", "local", 3},
		{"GET", "/local/missing", 404, `"no file missing"`, "local", 3},
		{"POST", "/files/missing", 404, `"no file missing"`, "local", 3},
		{"GET", "/cdn/x", 200, "fallback /cdn/x", "fallback", 4}, // no route at all
		{"GET", "/other", 404, "Not Found", "", 4},               // no route, not the fallback's
	} {
		req, _ := http.NewRequest(c.method, ts.URL+c.path, nil)
		req.Header.Set("Origin", "http://player.example")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		from := ""
		if resp.Header.Get("X-Local") != "" {
			from = "local"
		}
		if resp.Header.Get("X-From") != "" {
			from = "fallback"
		}
		if resp.StatusCode != c.code || !strings.Contains(string(b), c.body) || from != c.from || fb.n.Load() != c.fallbacks {
			t.Errorf("%s %s: %d %q from %q, %d fallback answers; want %d %q from %q, %d",
				c.method, c.path, resp.StatusCode, b, from, fb.n.Load(), c.code, c.body, c.from, c.fallbacks)
		}
		if c.method != "POST" && c.code == 200 && resp.Header.Get("Access-Control-Allow-Origin") != "*" {
			t.Errorf("%s %s: no CORS field", c.method, c.path)
		}
	}
}
