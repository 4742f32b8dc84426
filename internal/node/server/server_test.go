package server

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/strata-media/strata/internal/core/tier"
	"github.com/strata-media/strata/internal/httpapi"
	"github.com/strata-media/strata/internal/httpapi/httpapitest"
	"github.com/strata-media/strata/internal/ident"
	"github.com/strata-media/strata/internal/node/engine"
	"github.com/strata-media/strata/internal/storage/device"
	"github.com/strata-media/strata/internal/storage/origin"
	"github.com/strata-media/strata/internal/workload"
)

func testServer(t *testing.T) (*httptest.Server, *origin.Synthetic, *engine.Engine) {
	t.Helper()
	ds := workload.NewDataset(workload.DatasetOptions{Titles: 3, AllRenditions: true, MaxLength: time.Minute, Efficiency: 0.1, Seed: 5})
	syn, err := origin.NewSynthetic(ds, origin.SyntheticOptions{Seed: 5})
	if err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.DiscardHandler)
	eng, err := engine.New(engine.Options{
		Tier:   tier.Options{RAMBytes: 1 << 20, BlockSize: 256 << 10},
		Logger: log,
	}, device.NewMem(16<<20, 4096), syn)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(newAPI(t, eng, syn, log))
	t.Cleanup(func() { ts.Close(); eng.Close() })
	return ts, syn, eng
}

// newAPI mounts the three modules of this package as strata serve does,
// with the admin token "sekrit".
func newAPI(t *testing.T, eng *engine.Engine, org origin.Origin, log *slog.Logger) http.Handler {
	t.Helper()
	api := httpapi.New(httpapi.Options{AdminToken: "sekrit", Logger: log})
	if err := api.Mount(NewVideos(eng, org, Options{Logger: log}), NewAdmin(eng, log), NewDashboard(eng, org)); err != nil {
		t.Fatal(err)
	}
	return api.Handler()
}

func TestSegmentServing(t *testing.T) {
	ts, syn, _ := testServer(t)
	o := ident.Object{Video: "title-0000", Rendition: "700k", Name: "2.m4s"}
	want, _ := syn.Expected(o)
	url := ts.URL + "/videos/" + o.Path()

	resp, body := httpapitest.Do(t, "GET", url, nil)
	if resp.StatusCode != 200 || !bytes.Equal(body, want) || resp.Header.Get("X-Strata-Tier") != "origin" {
		t.Fatalf("first GET: %d tier %s, %d bytes", resp.StatusCode, resp.Header.Get("X-Strata-Tier"), len(body))
	}
	if ct := resp.Header.Get("Content-Type"); ct != "video/iso.segment" {
		t.Errorf("content type %q", ct)
	}
	if resp.Header.Get("Cache-Control") == "" || resp.Header.Get("Last-Modified") == "" {
		t.Errorf("headers %v", resp.Header)
	}
	etag := resp.Header.Get("ETag")
	if want := fmt.Sprintf(`"%016x-%x"`, engine.Digest(want), len(want)); etag != want {
		t.Errorf("ETag %s, want %s (the bytes' digest and length)", etag, want)
	}
	if resp, _ := httpapitest.Do(t, "GET", url, nil); resp.Header.Get("X-Strata-Tier") != "ram" || resp.Header.Get("ETag") != etag {
		t.Errorf("from %s the ETag is %s, from the capacity tier %s", resp.Header.Get("X-Strata-Tier"), resp.Header.Get("ETag"), etag)
	}

	resp, body = httpapitest.Do(t, "GET", url, nil, "Range", "bytes=10-19")
	if resp.StatusCode != 206 || !bytes.Equal(body, want[10:20]) || resp.Header.Get("X-Strata-Tier") != "ram" || resp.Header.Get("ETag") != etag {
		t.Fatalf("range GET: %d %q, ETag %s", resp.StatusCode, body, resp.Header.Get("ETag"))
	}
	resp, _ = httpapitest.Do(t, "GET", url, nil, "If-None-Match", etag)
	if resp.StatusCode != 304 {
		t.Fatalf("If-None-Match: %d", resp.StatusCode)
	}
	resp, body = httpapitest.Do(t, "HEAD", url, nil)
	if resp.StatusCode != 200 || len(body) != 0 || resp.ContentLength != int64(len(want)) || resp.Header.Get("ETag") != etag {
		t.Fatalf("HEAD: %d len %d", resp.StatusCode, resp.ContentLength)
	}
	resp, _ = httpapitest.Do(t, "GET", url, nil, "Range", "bytes=99999999-")
	if resp.StatusCode != 416 {
		t.Fatalf("unsatisfiable range: %d", resp.StatusCode)
	}
}

func TestManifestsAndErrors(t *testing.T) {
	ts, _, _ := testServer(t)
	resp, body := httpapitest.Do(t, "GET", ts.URL+"/videos/title-0001/manifest.mpd", nil)
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/dash+xml" || !bytes.Contains(body, []byte("<MPD")) {
		t.Fatalf("manifest: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	for path, code := range map[string]int{
		"/videos/nope/700k/1.m4s":                           404,
		"/videos/title-0001/700k/999.m4s":                   404,
		"/videos/title-0001/..%2f..%2fetc":                  400,
		"/videos/.hidden/x/1.m4s":                           400,
		"/videos/" + strings.Repeat("v", 5000) + "/x/1.m4s": 400,
	} {
		resp, body := httpapitest.Do(t, "GET", ts.URL+path, nil)
		if resp.StatusCode != code {
			t.Errorf("GET %s: %d, want %d", path, resp.StatusCode, code)
		}
		checkProblem(t, "GET "+httpapi.ClipID(path), resp, body)
	}
}

// checkProblem fails unless resp is an RFC 9457 problem with a detail.
func checkProblem(t *testing.T, what string, resp *http.Response, body []byte) {
	t.Helper()
	if p, err := httpapi.ReadProblem(resp, body); err != nil || p.Detail == "" {
		t.Errorf("%s: %v (detail %q)", what, err, p.Detail)
	}
}

// TestEveryRouteErrorIsAProblem: each route of the modules, and the
// mux's own 404 and 405, answer errors as problem details.
func TestEveryRouteErrorIsAProblem(t *testing.T) {
	ts, _, _ := testServer(t)
	cases := []struct {
		method, path string
		hdr          []string // name, value, ...
		code         int
	}{
		{"GET", "/videos/title-0000/700k/99999.m4s", nil, 404},
		{"GET", "/videos/title-0000/bad%20name", nil, 400},
		{"GET", "/videos/title-0000/700k/1.m4s", []string{"Range", "bytes=99999999-"}, 416},
		{"POST", "/admin/invalidate/title-0000", nil, 401},
		{"POST", "/admin/invalidate/.hidden", []string{"Authorization", "Bearer sekrit"}, 400},
		{"GET", "/no/such/route", nil, 404},
		{"DELETE", "/stats", nil, 405},
	}
	for _, c := range cases {
		resp, body := httpapitest.Do(t, c.method, ts.URL+c.path, nil, c.hdr...)
		if resp.StatusCode != c.code {
			t.Errorf("%s %s: %d, want %d", c.method, c.path, resp.StatusCode, c.code)
		}
		checkProblem(t, c.method+" "+c.path, resp, body)
	}
}

func TestCatalogStatsMetrics(t *testing.T) {
	ts, _, _ := testServer(t)
	httpapitest.Do(t, "GET", ts.URL+"/videos/title-0000/200k/1.m4s", nil)
	httpapitest.Do(t, "GET", ts.URL+"/videos/title-0000/200k/1.m4s", nil)
	resp, body := httpapitest.Do(t, "GET", ts.URL+"/videos", nil)
	var cat struct{ Titles []origin.Title }
	if err := json.Unmarshal(body, &cat); err != nil || resp.StatusCode != 200 || len(cat.Titles) != 3 || cat.Titles[0].SegmentDuration != 10 {
		t.Fatalf("catalog: %v %+v", err, cat)
	}
	_, body = httpapitest.Do(t, "GET", ts.URL+"/stats", nil)
	var raw map[string]any
	if err := json.Unmarshal(body, &raw); err != nil {
		t.Fatal(err)
	}
	st := map[string]map[string]any{}
	for k, v := range raw {
		if m, ok := v.(map[string]any); ok {
			st[k] = m
		}
	}
	for _, k := range []string{"ram.hits", "ram.misses", "ssd.hits", "ssd.misses", "origin.reads", "ssd.blocks_written",
		"ssd.bytes_written", "ssd.utilization", "ssd.recovered_segments"} {
		a, b, _ := strings.Cut(k, ".")
		if _, ok := st[a][b]; !ok {
			t.Errorf("/stats lacks %s", k)
		}
	}
	if st["ram"]["hits"].(float64) != 1 || st["origin"]["reads"].(float64) != 1 {
		t.Errorf("stats %v", st)
	}
	_, body = httpapitest.Do(t, "GET", ts.URL+"/metrics", nil)
	for _, m := range []string{`strata_tier_hits_total{tier="ram"} 1`, "strata_origin_reads_total 1", "strata_ssd_utilization",
		`strata_request_duration_seconds_count{tier="ram"} 1`, "strata_ssd_recovered_segments", "strata_ssd_admission_total"} {
		if !bytes.Contains(body, []byte(m)) {
			t.Errorf("/metrics lacks %q", m)
		}
	}
}

func TestInvalidateNeedsToken(t *testing.T) {
	ts, _, eng := testServer(t)
	url := ts.URL + "/admin/invalidate/title-0000"
	if resp, _ := httpapitest.Do(t, "POST", url, nil); resp.StatusCode != 401 {
		t.Fatalf("no token: %d", resp.StatusCode)
	}
	if resp, _ := httpapitest.Do(t, "POST", url, nil, "Authorization", "Bearer wrong"); resp.StatusCode != 401 {
		t.Fatalf("wrong token: %d", resp.StatusCode)
	}
	httpapitest.Do(t, "GET", ts.URL+"/videos/title-0000/200k/1.m4s", nil)
	if resp, _ := httpapitest.Do(t, "POST", url, nil, "Authorization", "Bearer sekrit"); resp.StatusCode != 200 {
		t.Fatalf("with token: %d", resp.StatusCode)
	}
	resp, _ := httpapitest.Do(t, "GET", ts.URL+"/videos/title-0000/200k/1.m4s", nil)
	if resp.Header.Get("X-Strata-Tier") != "origin" || eng.Stats().Invalidations != 1 {
		t.Fatalf("after invalidation served from %s", resp.Header.Get("X-Strata-Tier"))
	}
	if resp, _ := httpapitest.Do(t, "POST", ts.URL+"/admin/invalidate/..", nil, "Authorization", "Bearer sekrit"); resp.StatusCode == 200 {
		t.Fatalf("invalid id accepted")
	}
	_ = context.Background
}

func TestDashboard(t *testing.T) {
	ts, _, _ := testServer(t)
	resp, body := httpapitest.Do(t, "GET", ts.URL+"/", nil)
	if resp.StatusCode != 200 || !bytes.Contains(body, []byte("title-0002")) {
		t.Fatalf("dashboard: %d", resp.StatusCode)
	}
}

// TestETagNamesTheBytes: a title replaced on disk while its old bytes are
// still cached (a re-ingest before its invalidation lands) must not pair
// the old bytes with a tag of the new version, or a client revalidating
// them would keep them; after the invalidation the new bytes get their own.
func TestETagNamesTheBytes(t *testing.T) {
	root := t.TempDir()
	path := filepath.Join(root, "vid", "700k", "1.m4s")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	old, fresh := []byte("old version bytes"), []byte("new version, other bytes")
	if err := os.WriteFile(path, old, 0o644); err != nil {
		t.Fatal(err)
	}
	dir, err := origin.NewDir(root, origin.DirOptions{CatalogTTL: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.DiscardHandler)
	eng, err := engine.New(engine.Options{Tier: tier.Options{RAMBytes: 1 << 20, BlockSize: 256 << 10}, Logger: log},
		device.NewMem(16<<20, 4096), dir)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(newAPI(t, eng, dir, log))
	t.Cleanup(func() { ts.Close(); eng.Close() })
	url := ts.URL + "/videos/vid/700k/1.m4s"
	tag := func(b []byte) string { return fmt.Sprintf(`"%016x-%x"`, engine.Digest(b), len(b)) }

	if resp, body := httpapitest.Do(t, "GET", url, nil); !bytes.Equal(body, old) || resp.Header.Get("ETag") != tag(old) {
		t.Fatalf("first GET: %q, ETag %s", body, resp.Header.Get("ETag"))
	}
	// A re-ingest: the new version is built beside the old and renamed
	// into place, which gives the title a new version (directory times).
	staged := filepath.Join(root, "staging", "700k", "1.m4s")
	if err := os.MkdirAll(filepath.Dir(staged), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(staged, fresh, 0o644); err != nil {
		t.Fatal(err)
	}
	before, _ := dir.Title(context.Background(), "vid")
	if err := os.RemoveAll(filepath.Join(root, "vid")); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(filepath.Join(root, "staging"), filepath.Join(root, "vid")); err != nil {
		t.Fatal(err)
	}
	later := time.Now().Add(time.Hour) // whatever the file system's time granularity
	for _, d := range []string{"vid", "vid/700k"} {
		if err := os.Chtimes(filepath.Join(root, d), later, later); err != nil {
			t.Fatal(err)
		}
	}
	// Past the catalog TTL, the new version shows.
	var after origin.Title
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
		after, _ = dir.Title(context.Background(), "vid")
		if !after.Modified.Equal(before.Modified) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the title's version did not change: %v", after.Modified)
		}
	}
	resp, body := httpapitest.Do(t, "GET", url, nil)
	if !bytes.Equal(body, old) || resp.Header.Get("ETag") != tag(old) {
		t.Fatalf("cached GET after the replacement: %q, ETag %s, want the old bytes under %s", body, resp.Header.Get("ETag"), tag(old))
	}
	// Last-Modified now names the new version while these bytes are the
	// old ones: a date must not validate them.
	newDate := after.Modified.UTC().Format(http.TimeFormat)
	if resp, body := httpapitest.Do(t, "GET", url, nil, "If-Modified-Since", newDate); resp.StatusCode != 200 || !bytes.Equal(body, old) {
		t.Fatalf("If-Modified-Since alone: %d %q, want the full 200", resp.StatusCode, body)
	}
	if resp, body := httpapitest.Do(t, "GET", url, nil, "Range", "bytes=4-", "If-Range", newDate); resp.StatusCode != 200 || !bytes.Equal(body, old) {
		t.Fatalf("If-Range with a date: %d %q, want the whole object", resp.StatusCode, body)
	}
	if resp, body := httpapitest.Do(t, "GET", url, nil, "Range", "bytes=4-", "If-Range", tag(old)); resp.StatusCode != 206 || !bytes.Equal(body, old[4:]) {
		t.Fatalf("If-Range with the ETag: %d %q", resp.StatusCode, body)
	}
	if resp, _ := httpapitest.Do(t, "POST", ts.URL+"/admin/invalidate/vid", nil, "Authorization", "Bearer sekrit"); resp.StatusCode/100 != 2 {
		t.Fatalf("invalidate: %d", resp.StatusCode)
	}
	if resp, body := httpapitest.Do(t, "GET", url, nil, "If-None-Match", tag(old)); resp.StatusCode != 200 || !bytes.Equal(body, fresh) || resp.Header.Get("ETag") != tag(fresh) {
		t.Fatalf("GET after the invalidation: %d %q, ETag %s", resp.StatusCode, body, resp.Header.Get("ETag"))
	}
}

// etag formats as fmt's `"%016x-%x"`, which it replaced on the RAM-hit path.
func TestEtagFormat(t *testing.T) {
	for _, c := range []struct {
		sum uint64
		n   int
	}{{0, 0}, {1, 1}, {0xdeadbeef, 102400}, {^uint64(0), 1 << 20}, {0x0123456789abcdef, 7}} {
		if got, want := etag(c.sum, c.n), fmt.Sprintf(`"%016x-%x"`, c.sum, c.n); got != want {
			t.Fatalf("etag(%#x, %d) = %s, want %s", c.sum, c.n, got, want)
		}
	}
}
