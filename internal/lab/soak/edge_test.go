package soak

import (
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// Check passes errors for objects the edge did not hold (never served, or
// no longer held: it answered MISS) and fails one for an object it held.
func TestEdgeCheckTellsHeldFromDropped(t *testing.T) {
	res := func(causes ...string) EdgeResult {
		r := EdgeResult{Errors: map[string]map[string]int64{}, Bound: 1}
		for _, c := range causes {
			r.Errors[c] = map[string]int64{"502": 3}
		}
		return r
	}
	if err := res(CauseNeverServed, CauseDropped, CauseChanged).Check(); err != nil {
		t.Errorf("errors only for objects the edge did not hold: %v", err)
	}
	for _, c := range []string{CauseServed, CauseOriginUp} {
		err := res(CauseDropped, c).Check()
		if !errors.Is(err, ErrFailed) || !strings.Contains(err.Error(), c) {
			t.Errorf("an error of cause %q: %v", c, err)
		}
	}
}

// readEdgeStats reads the counters from the edge's /stats.
func TestReadEdgeStats(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/stats" {
			http.NotFound(w, r)
			return
		}
		fmt.Fprint(w, `{"edge":{"last_resort":7,"stale_served":9,"errors":2},"ram":{"evicted_unsaved":3},
			"ssd":{"admission_rejects":4,"evicted_segments":5,"health":{"skipped_reads":6,"read":{"errors":{"timeout":8}}}}}`)
	}))
	defer srv.Close()
	st, err := readEdgeStats(srv.Client(), srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	want := EdgeStats{RAMEvictedUnsaved: 3, AdmissionRejects: 4, FlashEvicted: 5, SkippedReads: 6, LastResort: 7,
		StaleServed: 9, FlashReadTimeouts: 8, Errors: 2}
	if *st != want {
		t.Errorf("got %+v, want %+v", *st, want)
	}
	if _, err := readEdgeStats(srv.Client(), srv.URL+"/nothing"); err == nil {
		t.Error("a 404 for /stats read as stats")
	}
}
