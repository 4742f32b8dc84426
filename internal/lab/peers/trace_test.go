package peers

import (
	"math"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/strata-media/strata/internal/lab/wanorigin"
)

func smallLibrary() wanorigin.LibraryOptions {
	lo := defaultLibrary()
	lo.TitlesPerDuration, lo.MaxLength = 2, 3*time.Minute
	return lo
}

// TestBuildTrace: each phase issues as many requests as strata bench
// would, the last phase is the counted one, times run on across phases,
// and every object's size is the length the origin serves.
func TestBuildTrace(t *testing.T) {
	phases := runPhases([]trialRun{{40, false}, {80, false}, {60, true}}, 30)
	tr, err := buildTrace(smallLibrary(), phases)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, p := range phases {
		n += p.Requests()
	}
	if want := 900 + 600 + 1200 + 1800 + 900; n != want || len(tr.Reqs) != n || len(tr.Times) != n {
		t.Fatalf("%d requests (%d times), phases say %d, want %d", len(tr.Reqs), len(tr.Times), n, want)
	}
	if tr.Counted != n-900 {
		t.Errorf("counted from %d, want %d", tr.Counted, n-900)
	}
	if tr.Times[900] != 45*time.Second || tr.Times[n-1] <= tr.Times[tr.Counted] {
		t.Errorf("times: trial 1 starts at %v, want 45s; last %v after counted start %v", tr.Times[900], tr.Times[n-1], tr.Times[tr.Counted])
	}
	lib, err := wanorigin.NewLibrary(smallLibrary())
	if err != nil {
		t.Fatal(err)
	}
	h, err := wanorigin.New(lib, wanorigin.Options{})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	for i := 0; i < len(tr.Keys); i += 97 {
		resp, err := http.Head(srv.URL + tr.Keys[i])
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || resp.ContentLength != tr.Sizes[i] || tr.Sizes[i] <= 0 {
			t.Errorf("%s: size %d in the trace, the origin serves %d (%s)", tr.Keys[i], tr.Sizes[i], resp.ContentLength, resp.Status)
		}
	}
}

// TestOracle: each objective's static cache wins on its own ratio; a
// cache the size of the library holds everything.
func TestOracle(t *testing.T) {
	lo := smallLibrary()
	lib, err := wanorigin.NewLibrary(lo)
	if err != nil {
		t.Fatal(err)
	}
	res, err := Oracle(lo, 0.8, lib.Bytes()/8)
	if err != nil {
		t.Fatal(err)
	}
	req, byt := res[0], res[1]
	if req.Objective != "requests" || byt.Objective != "bytes" {
		t.Fatalf("objectives %s, %s", req.Objective, byt.Objective)
	}
	if !(req.HitRatio > byt.HitRatio && byt.ByteHitRatio > req.ByteHitRatio) {
		t.Errorf("requests: %+v, bytes: %+v; each should win its own ratio", req, byt)
	}
	all, err := Oracle(lo, 0.8, lib.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range all {
		if math.Abs(r.HitRatio-1) > 1e-9 || math.Abs(r.ByteHitRatio-1) > 1e-9 {
			t.Errorf("whole library cached: %+v, want 1 and 1", r)
		}
	}
}
