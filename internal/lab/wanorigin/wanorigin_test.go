package wanorigin

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/strata-media/strata/internal/ident"
)

func testServer(t *testing.T) (*server, *Library, string) {
	t.Helper()
	lib, err := NewLibrary(LibraryOptions{TitlesPerDuration: 2, SegmentDurations: []time.Duration{2 * time.Second, 10 * time.Second}, MaxLength: time.Minute, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := New(lib, Options{Bandwidth: 1 << 30, Link: 1 << 30})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv)
	t.Cleanup(ts.Close)
	return srv, lib, ts.URL
}

func get(t *testing.T, url string, hdr ...string) (*http.Response, []byte) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, b
}

func TestCatalogInterleavesDurations(t *testing.T) {
	_, lib, url := testServer(t)
	_, body := get(t, url+"/videos")
	var c struct {
		Titles []struct {
			ID  string  `json:"id"`
			Dur float64 `json:"segment_duration_s"`
		} `json:"titles"`
	}
	if err := json.Unmarshal(body, &c); err != nil {
		t.Fatal(err)
	}
	want := []string{"d2s-0000", "d10s-0000", "d2s-0001", "d10s-0001"}
	if len(c.Titles) != len(want) {
		t.Fatalf("catalog has %d titles, want %d", len(c.Titles), len(want))
	}
	for i, id := range want {
		if c.Titles[i].ID != id || lib.Titles()[i].ID != id {
			t.Errorf("title %d = %s, want %s", i, c.Titles[i].ID, id)
		}
	}
	if c.Titles[1].Dur != 10 {
		t.Errorf("d10s title has segment duration %v", c.Titles[1].Dur)
	}
}

func TestSegmentValidatorsRangesAndCounters(t *testing.T) {
	srv, lib, url := testServer(t)
	path := "d10s-0001/700k/2.m4s"
	o, _ := ident.ParseObject(path)
	want, _, err := lib.get(t.Context(), o)
	if err != nil {
		t.Fatal(err)
	}
	resp, body := get(t, url+"/videos/"+path)
	if resp.StatusCode != 200 || string(body) != string(want) {
		t.Fatalf("GET: %s, %d bytes, want 200 and %d bytes", resp.Status, len(body), len(want))
	}
	for _, f := range []string{"ETag", "Last-Modified", "Cache-Control"} {
		if resp.Header.Get(f) == "" {
			t.Errorf("no %s", f)
		}
	}
	for f := range resp.Header {
		if len(f) > 2 && (f[:2] == "X-") {
			t.Errorf("non-standard field %s", f)
		}
	}
	r2, part := get(t, url+"/videos/"+path, "Range", "bytes=100-199")
	if r2.StatusCode != 206 || string(part) != string(want[100:200]) {
		t.Errorf("range: %s, %d bytes", r2.Status, len(part))
	}
	r3, _ := get(t, url+"/videos/"+path, "If-None-Match", resp.Header.Get("ETag"))
	if r3.StatusCode != 304 {
		t.Errorf("conditional: %s, want 304", r3.Status)
	}
	r4, _ := get(t, url+"/videos/d10s-0001/700k/99999.m4s")
	if r4.StatusCode != 404 {
		t.Errorf("missing segment: %s", r4.Status)
	}
	r5, _ := get(t, url+"/videos/..%2f/x")
	if r5.StatusCode/100 != 4 {
		t.Errorf("bad path: %s", r5.Status)
	}
	st := srv.Stats()
	if st.Segments != 2 || st.SegmentFetches != 1 || st.SegmentBytes != int64(len(want))+100 || st.NotModified != 1 || st.Requests != 5 {
		t.Errorf("stats %+v", st)
	}
}

func TestParseLinkReserveIsFIFO(t *testing.T) {
	l := newLink(1000)
	now := time.Unix(0, 0)
	a := l.reserve(now, 500)
	b := l.reserve(now, 500)
	if a.Sub(now) != 500*time.Millisecond || b.Sub(now) != time.Second {
		t.Errorf("reserve: %v %v", a.Sub(now), b.Sub(now))
	}
	if c := newLink(0).reserve(now, 1<<20); !c.Equal(now) {
		t.Errorf("unlimited link delays to %v", c)
	}
}
