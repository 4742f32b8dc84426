package edge

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

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
	api := httpapi.New(httpapi.Options{Logger: slog.New(slog.DiscardHandler), CORSOrigins: []string{"*"}})
	if err := api.Mount(f.edge); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(api.Handler())
	defer srv.Close()
	f.srv = srv // f.get goes through the API
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
