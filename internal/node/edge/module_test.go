package edge

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/strata-media/strata/internal/httpapi"
)

// Mounted on the API, the edge forwards every method under its prefix,
// not only GET and HEAD: a PUT reaches the upstream (cache-tests sets
// its origin's state with PUT through the cache) and invalidates the
// stored response.
func TestMountForwardsEveryMethod(t *testing.T) {
	f := newFixture(t, nil)
	body := payload(300, 21)
	var put []byte // written by the upstream before it answers
	f.up.handle("/media/state", func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPut {
			put, _ = io.ReadAll(r.Body)
			w.WriteHeader(http.StatusCreated)
			return
		}
		w.Write(body)
	}, "Cache-Control", "max-age=600")
	srv := f.throughAPI()
	f.want(f.get("/cdn/state"), 200, CacheMiss, body)
	f.want(f.get("/cdn/state"), 200, CacheHit, body)
	req, _ := http.NewRequest(http.MethodPut, srv.URL+"/cdn/state", strings.NewReader("v2"))
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated || string(put) != "v2" {
		t.Fatalf("PUT: %d, upstream got %q", resp.StatusCode, put)
	}
	f.want(f.get("/cdn/state"), 200, CacheMiss, body)
}

// throughAPI mounts the fixture's edge on an API, as the node does, and
// points f.get at it.
func (f *fixture) throughAPI() *httptest.Server {
	api := httpapi.New(httpapi.Options{Logger: slog.New(slog.DiscardHandler), CORSOrigins: []string{"*"}})
	if err := api.Mount(f.edge); err != nil {
		f.t.Fatal(err)
	}
	srv := httptest.NewServer(api.Handler())
	f.t.Cleanup(srv.Close)
	f.srv = srv
	return srv
}

// Mounted on the API, an upstream's error answers reach the client with
// their own body and type, not rewritten into a problem details body
// (the API does that to text/plain errors of Strata's own routes): a 404
// is cached with its body as the policy allows, a 503 relayed.
func TestMountRelaysUpstreamErrors(t *testing.T) {
	f := newFixture(t, nil)
	f.throughAPI()
	for path, code := range map[string]int{"/media/gone": http.StatusNotFound, "/media/down": http.StatusServiceUnavailable} {
		f.up.handle(path, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/plain")
			w.WriteHeader(code)
			io.WriteString(w, "upstream says "+path)
		}, "Cache-Control", "max-age=600")
	}
	f.want(f.get("/cdn/gone"), 404, CacheMiss, []byte("upstream says /media/gone"))
	f.want(f.get("/cdn/gone"), 404, CacheHit, []byte("upstream says /media/gone"))
	r := f.get("/cdn/down")
	if r.status != 503 || string(r.body) != "upstream says /media/down" || r.header.Get("Content-Type") != "text/plain" {
		t.Fatalf("503: %d %q %s", r.status, r.body, r.header.Get("Content-Type"))
	}
}

// The edge tells its upstream it is a surrogate, and a Surrogate-Control
// aimed at it sets its freshness: cached for the hour Surrogate-Control
// gives although Cache-Control says no-store to browsers.
func TestSurrogateControl(t *testing.T) {
	f := newFixture(t, nil)
	body := payload(400, 22)
	var capability string // written by the upstream before it answers
	f.up.handle("/media/sc", func(w http.ResponseWriter, r *http.Request) {
		capability = r.Header.Get("Surrogate-Capability")
		w.Write(body)
	}, "Cache-Control", "no-store", "Surrogate-Control", "max-age=3600;strata")
	f.want(f.get("/cdn/sc"), 200, CacheMiss, body)
	f.clock.Advance(30 * time.Minute)
	f.want(f.get("/cdn/sc"), 200, CacheHit, body)
	if capability != `strata="Surrogate/1.0"` || f.up.requests("/media/sc") != 1 {
		t.Fatalf("upstream saw Surrogate-Capability %q, %d requests", capability, f.up.requests("/media/sc"))
	}
}
