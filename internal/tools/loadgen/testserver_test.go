package loadgen

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/strata-media/strata/internal/storage/origin"
)

// A titleSpec is one title of the fake server's catalog and how its
// segments are served.
type titleSpec struct {
	id       string
	duration float64       // segment_duration_s
	delay    time.Duration // before the response
	status   int           // 0: 200
}

// fakeServer is a Strata-like server: a catalog, segments of bodySize
// bytes, and optionally /stats and a capacity limit.
type fakeServer struct {
	*httptest.Server
	titles map[string]titleSpec
	// sem, when set, limits concurrent segment handlers; each holds a
	// slot for service.
	sem     chan struct{}
	service time.Duration
	mu      struct {
		sync.Mutex
		hits   map[string]int // segment requests per title
		served int            // segment requests answered after their delay
	}
}

const bodySize = 1000

type fakeOptions struct {
	stats    bool // serve /stats
	capacity int  // concurrent handlers, 0: unlimited
	service  time.Duration
}

func newFakeServer(t *testing.T, specs []titleSpec, o fakeOptions) *fakeServer {
	t.Helper()
	f := &fakeServer{titles: map[string]titleSpec{}, service: o.service}
	f.mu.hits = map[string]int{}
	if o.capacity > 0 {
		f.sem = make(chan struct{}, o.capacity)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /videos", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, catalog{Titles: catalogOf(specs)})
	})
	mux.HandleFunc("GET /videos/{title}/{rendition}/{seg}", f.segment)
	if o.stats {
		mux.HandleFunc("GET /stats", f.stats)
	}
	for _, s := range specs {
		f.titles[s.id] = s
	}
	f.Server = httptest.NewServer(mux)
	t.Cleanup(f.Close)
	return f
}

// catalogOf lists specs as origin titles with two renditions of 5
// segments numbered from 1.
func catalogOf(specs []titleSpec) []origin.Title {
	var ts []origin.Title
	for _, s := range specs {
		ts = append(ts, origin.Title{ID: s.id, SegmentDuration: s.duration, Renditions: []origin.Rendition{
			{ID: "low", Segments: 5, StartNumber: 1}, {ID: "high", Segments: 5, StartNumber: 1}}})
	}
	return ts
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(v)
}

func (f *fakeServer) segment(w http.ResponseWriter, r *http.Request) {
	spec, ok := f.titles[r.PathValue("title")]
	seg := r.PathValue("seg")
	if !ok || !strings.HasSuffix(seg, ".m4s") {
		http.NotFound(w, r)
		return
	}
	f.hit(spec.id)
	if !f.acquire(r) {
		return
	}
	defer f.release()
	if !wait(r, spec.delay+f.service) {
		return
	}
	f.mu.Lock()
	f.mu.served++
	f.mu.Unlock()
	if spec.status != 0 {
		http.Error(w, "injected failure", spec.status)
		return
	}
	w.Write(make([]byte, bodySize))
}

func (f *fakeServer) hit(id string) {
	f.mu.Lock()
	f.mu.hits[id]++
	f.mu.Unlock()
}

func (f *fakeServer) hits(id string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.mu.hits[id]
}

// served is the number of segment requests that waited out their delay
// (the client still wanted the answer); requests the client abandoned
// during the delay do not count.
func (f *fakeServer) served() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.mu.served
}

func (f *fakeServer) totalHits() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, v := range f.mu.hits {
		n += v
	}
	return n
}

func (f *fakeServer) acquire(r *http.Request) bool {
	if f.sem == nil {
		return true
	}
	select {
	case f.sem <- struct{}{}:
		return true
	case <-r.Context().Done():
		return false
	}
}

func (f *fakeServer) release() {
	if f.sem != nil {
		<-f.sem
	}
}

// wait sleeps d unless the client goes away first.
func wait(r *http.Request, d time.Duration) bool {
	if d == 0 {
		return true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-r.Context().Done():
		return false
	}
}

// stats serves counters shaped like the engine's: ram.hits counts segment
// requests, plus leaves that are not numbers.
func (f *fakeServer) stats(w http.ResponseWriter, r *http.Request) {
	n := f.totalHits()
	fmt.Fprintf(w, `{"ram":{"hits":%d},"ssd":{"hits":0,"enabled":true},"origin":{"reads":%d},"version":"x","shards":[%d,7],"none":null}`, n, n/2, n)
}
