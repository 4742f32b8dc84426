package images

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// TestHandlerStatsAndMetrics: uploads, reads by source, 304s, IIIF
// derivations and errors are counted, and /metrics says what /stats says.
func TestHandlerStatsAndMetrics(t *testing.T) {
	ts, _ := newTestServer(t, nil)
	body := encodeTestJPEG(t, testPhoto(1600, 1200, 7), 92)
	if resp, b := put(t, ts.URL+"/images/p1", body); resp.StatusCode != http.StatusCreated {
		t.Fatalf("upload: %d %s", resp.StatusCode, b)
	}
	put(t, ts.URL+"/images/bad", []byte("not an image"))
	resp, _ := do(t, "GET", ts.URL+"/images/p1/large", nil)
	etag := resp.Header.Get("ETag")
	do(t, "GET", ts.URL+"/images/p1/large", nil)                        // RAM now
	do(t, "GET", ts.URL+"/images/p1/thumbnail", nil)                    // small: the LSM tree
	do(t, "GET", ts.URL+"/images/p1/large", nil, "If-None-Match", etag) // 304
	do(t, "GET", ts.URL+"/iiif/3/p1/full/200,/0/default.jpg", nil)      // derived
	do(t, "GET", ts.URL+"/iiif/3/p1/full/200,/0/default.jpg", nil)      // cached
	do(t, "GET", ts.URL+"/images/nope/large", nil)                      // 404

	_, b := do(t, "GET", ts.URL+"/stats", nil)
	var st struct{ Images HandlerStats }
	if err := json.Unmarshal(b, &st); err != nil {
		t.Fatalf("/stats: %v: %s", err, b)
	}
	s := st.Images
	if s.Uploads != 1 || s.Refused != 1 || s.NotModified != 1 || s.Renders != 1 || s.Errors != 1 {
		t.Errorf("counters %+v", s)
	}
	if s.Served["vlog"] != 1 || s.Served["ram"] != 2 || s.Served["lsm"] != 1 || s.Served["render"] != 1 {
		t.Errorf("served by source %v", s.Served)
	}
	if s.ServedBytes["vlog"] == 0 { // (the store sizes are Badger's estimate, refreshed once a minute)
		t.Errorf("vlog bytes served %d", s.ServedBytes["vlog"])
	}
	_, m := do(t, "GET", ts.URL+"/metrics", nil)
	for _, want := range []string{`strata_images_served_total{source="ram"} 2`, `strata_images_uploads_total{result="refused"} 1`,
		`strata_images_iiif_renders_total 1`, `strata_images_store_bytes{part="lsm"}`} {
		if !strings.Contains(string(m), want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
}
