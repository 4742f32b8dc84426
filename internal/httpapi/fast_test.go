package httpapi

import (
	"github.com/strata-media/strata/internal/httpapi/front"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// fastEcho answers every request it is offered with 200 "fast", under
// the route "GET /v/{id}", except the ones whose path is /v/back.
type fastEcho struct{}

func (fastEcho) ServeFast(w http.ResponseWriter, r *http.Request, c front.CORS) (string, int, *http.Request) {
	if r.URL.Path == "/v/back" {
		return "", 0, r
	}
	c.Apply(w.Header(), r)
	io.WriteString(w, "fast")
	return "GET /v/{id}", http.StatusOK, nil
}

func fastAPI(extra ...string) *API {
	a := New(Options{CORSOrigins: []string{"*"}})
	a.Mount(ModuleFunc(func(m *Mounter) {
		m.Handle("GET /v/{id}", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "general") }))
		m.HandleFast("/v/", fastEcho{}, "GET /v/{id}")
		for _, p := range extra {
			m.Handle(p, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "other") }))
		}
	}))
	return a
}

func body(t *testing.T, h http.Handler, method, target string) (string, http.Header) {
	t.Helper()
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest(method, target, nil))
	return w.Body.String(), w.Header()
}

// TestFastPath: a GET or HEAD under the prefix goes to the fast handler,
// with the CORS fields; what it hands back, other methods, escaped paths
// and requests skip refuses go to the general path; the fast answers are
// counted in the route metrics.
func TestFastPath(t *testing.T) {
	a := fastAPI()
	skipped := func(r *http.Request) bool { return r.URL.Path == "/v/skip" }
	h := a.FastPath(a.Handler(), skipped)
	for _, c := range []struct{ method, target, want string }{
		{"GET", "/v/1", "fast"},
		{"HEAD", "/v/1", "fast"},
		{"GET", "/v/back", "general"},
		{"GET", "/v/skip", "general"},
		{"GET", "/v/a%2Fb", ""}, // the general path's 400, a problem
		{"POST", "/v/1", ""},    // the mux's 405
	} {
		got, hdr := body(t, h, c.method, c.target)
		if c.want != "" && got != c.want || c.want == "" && (got == "fast" || got == "general") {
			t.Errorf("%s %s: %q, want %q", c.method, c.target, got, c.want)
		}
		if c.want == "fast" && hdr.Get("Access-Control-Allow-Origin") != "*" {
			t.Errorf("%s %s: no CORS fields: %v", c.method, c.target, hdr)
		}
	}
	metrics, _ := body(t, h, "GET", "/metrics")
	if want := `strata_http_requests_total{code="200",route="GET /v/{id}"} 4`; !strings.Contains(metrics, want) {
		t.Errorf("the route counter is not %s", want)
	}
}

// TestFastPathYieldsToOverlappingRoutes: a route that takes some of the
// fast handler's paths keeps them (the general path serves them, as the
// mux decides); the fast handler keeps the rest. A route that cannot take
// any changes nothing.
func TestFastPathYieldsToOverlappingRoutes(t *testing.T) {
	for _, c := range []struct {
		pattern, target, want string
	}{
		{"GET /v/special", "/v/1", "fast"},
		{"GET /v/special", "/v/special", "other"},
		{"/v/{id}/x", "/v/1", "fast"},
		{"/v/{id}/x", "/v/1/x", "other"},
		{"POST /v/{id}/x", "/v/1", "fast"},
		{"GET /w/{id}", "/v/1", "fast"},
		{"GET /", "/v/1", "fast"},
		// httptest's requests are for example.com: the host's route
		// takes them.
		{"example.com/v/{id}", "/v/1", "other"},
		{"other.example/v/{id}", "/v/1", "fast"},
	} {
		a := fastAPI(c.pattern)
		if got, _ := body(t, a.FastPath(a.Handler(), nil), "GET", c.target); got != c.want {
			t.Errorf("with %q mounted: GET %s answered %q, want %q", c.pattern, c.target, got, c.want)
		}
	}
}

// TestFastPathUnderRoot: a fast handler on "/" (an edge for every path)
// answers the paths no other route takes, and yields the node's own
// routes, exact ones and subtrees, to them.
func TestFastPathUnderRoot(t *testing.T) {
	a := New(Options{})
	a.Mount(ModuleFunc(func(m *Mounter) {
		m.Handle("GET /", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "general") }))
		m.Handle("/", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "general") }))
		m.HandleFast("/", fastEcho{}, "GET /", "/")
		for _, p := range []string{"GET /readyz", "GET /videos/{video}/{name}", "GET /watch/", "GET /{$}"} {
			m.Handle(p, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "own "+p) }))
		}
	}))
	h := a.FastPath(a.Handler(), nil)
	for target, want := range map[string]string{
		"/seg.m4s":        "fast",
		"/cdn/a/b.mpd":    "fast",
		"/stats":          "", // the API's own routes
		"/stats/x":        "fast",
		"/readyz":         "own GET /readyz",
		"/videos/t1/a.ts": "own GET /videos/{video}/{name}",
		"/watch/x":        "own GET /watch/",
		"/":               "own GET /{$}",
		"/metrics":        "",
	} {
		got, _ := body(t, h, "GET", target)
		if want == "" {
			if got == "fast" || got == "general" {
				t.Errorf("GET %s: %q, want the API's own answer", target, got)
			}
			continue
		}
		if got != want {
			t.Errorf("GET %s: %q, want %q", target, got, want)
		}
	}
}

// TestYieldingShortcut: a fast handler on "/" skips the mux for paths
// whose first segment no other route has, and decides every path as the
// mux alone does.
func TestYieldingShortcut(t *testing.T) {
	a := New(Options{})
	err := a.Mount(ModuleFunc(func(m *Mounter) {
		m.Handle("/", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
		m.HandleFast("/", fastEcho{}, "GET /", "/")
		for _, p := range []string{"GET /", "GET /readyz", "GET /videos/{video}/{name}", "GET /watch/", "GET /{$}", "POST /upload/x", "HEAD /h"} {
			m.Handle(p, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
		}
	}))
	if err != nil {
		t.Fatal(err)
	}
	y, err := a.yielding(a.fast[0])
	if err != nil {
		t.Fatal(err)
	}
	if y.others == nil || y.others["upload"] || !y.others["stats"] || !y.others["watch"] || !y.others["h"] {
		t.Fatalf("others %v: want the GET and HEAD routes' first segments (stats, watch, h...), not POST's", y.others)
	}
	muxOnly := y
	muxOnly.others = nil
	for _, p := range []string{"/", "/seg.m4s", "/stats", "/stats/x", "/statsx", "/readyz", "/readyz/", "/videos", "/videos/t1",
		"/videos/t1/a.ts", "/videos/t1/a/b.ts", "/watch", "/watch/x", "/h", "/h/x", "/upload/x", "/cdn/a/b.mpd", "/metrics"} {
		r := httptest.NewRequest("GET", p, nil)
		_, _, a1 := y.ServeFast(httptest.NewRecorder(), r, testNoCORS{})
		_, _, a2 := muxOnly.ServeFast(httptest.NewRecorder(), r, testNoCORS{})
		if (a1 == nil) != (a2 == nil) {
			t.Errorf("GET %s: fast %v with the shortcut, %v with the mux alone", p, a1 == nil, a2 == nil)
		}
	}
	// A wildcard first segment, or a host: the mux decides every path.
	for _, extra := range []string{"GET /{x}/y", "example.com/z"} {
		b := New(Options{})
		b.Mount(ModuleFunc(func(m *Mounter) {
			m.Handle("/", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
			m.HandleFast("/", fastEcho{}, "/")
			m.Handle(extra, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
		}))
		if y, err := b.yielding(b.fast[0]); err != nil || y.others != nil {
			t.Errorf("with %q: others %v, %v; want the mux for every path", extra, y.others, err)
		}
	}
}

type testNoCORS struct{}

func (testNoCORS) Apply(http.Header, *http.Request) {}

// promptEcho is fastEcho, Prompt (front.Prompt).
type promptEcho struct{ fastEcho }

func (promptEcho) Prompt() bool { return true }

// A yielding route is Prompt when the handler it yields for is: the
// Front then sets no hang-up watch for the edge's hits under "/".
func TestYieldingPrompt(t *testing.T) {
	if (yieldingRoute{h: fastEcho{}}).Prompt() {
		t.Error("a yielding route of a handler that is not Prompt says it is")
	}
	var p front.FastHandler = yieldingRoute{h: promptEcho{}}
	if pp, ok := p.(front.Prompt); !ok || !pp.Prompt() {
		t.Error("a yielding route of a Prompt handler is not Prompt")
	}
}
