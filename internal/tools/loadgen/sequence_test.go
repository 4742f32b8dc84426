package loadgen

import (
	"context"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestSequenceIsWhatRunAsks: the segments Sequence draws are those a run
// with the same seed requests from a server (as a multiset: requests run
// concurrently, so they may arrive out of order).
func TestSequenceIsWhatRunAsks(t *testing.T) {
	specs := []titleSpec{{id: "a", duration: 2}, {id: "b", duration: 2}, {id: "c", duration: 2}}
	var mu sync.Mutex
	var got []string
	mux := http.NewServeMux()
	mux.HandleFunc("GET /videos", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, catalog{Titles: catalogOf(specs)})
	})
	mux.HandleFunc("GET /videos/{title}/{rendition}/{seg}", func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got = append(got, strings.TrimPrefix(r.URL.Path, "/videos/"))
		mu.Unlock()
		w.Write([]byte("x"))
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	const rate, seed = 200, 3
	rep, err := Run(context.Background(), Config{URL: srv.URL, Rate: rate, Duration: 500 * time.Millisecond, Seed: seed})
	if err != nil {
		t.Fatal(err)
	}
	objs, err := Sequence(catalogOf(specs), Law{}, seed, rep.Requests)
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, o := range objs {
		want = append(want, o.Path())
	}
	slices.Sort(got)
	slices.Sort(want)
	if len(want) != 100 || !slices.Equal(got, want) {
		t.Errorf("Run requested %d segments, Sequence drew %d; equal multisets: %t", len(got), len(want), slices.Equal(got, want))
	}
	if other, _ := Sequence(catalogOf(specs), Law{}, seed+1, len(objs)); slices.Equal(other, objs) {
		t.Error("another seed drew the same sequence")
	}
}
