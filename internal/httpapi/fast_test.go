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

// TestFastPathOffWhenARouteOverlaps: a route that could take some of the
// fast handler's paths turns the fast path off; one that cannot does not.
func TestFastPathOffWhenARouteOverlaps(t *testing.T) {
	for _, c := range []struct {
		pattern string
		on      bool
	}{
		{"GET /v/special", false},
		{"/v/{id}/x", false},
		{"POST /v/{id}/x", true},
		{"GET /w/{id}", true},
		{"GET /", true},
		{"example.com/v/{id}", false},
	} {
		a := fastAPI(c.pattern)
		got, _ := body(t, a.FastPath(a.Handler(), nil), "GET", "/v/1")
		if on := got == "fast"; on != c.on {
			t.Errorf("with %q mounted: fast path on %v, want %v", c.pattern, on, c.on)
		}
	}
}
