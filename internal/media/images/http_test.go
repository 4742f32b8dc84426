package images

import (
	"bytes"
	"encoding/json"
	"fmt"
	"image"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/strata-media/strata/internal/httpapi"
	"github.com/strata-media/strata/internal/httpapi/httpapitest"
	"github.com/strata-media/strata/internal/node/engine"
)

// The node's engine is the Cache the server passes.
var _ Cache = (*engine.Engine)(nil)

const testToken = "secret"

// newTestServer serves a store through the real HTTP edge (its token
// check and error format) and a RAM-only tier engine.
func newTestServer(t *testing.T, mod func(*Options)) (*httptest.Server, *Store) {
	t.Helper()
	st := openTestStore(t, mod)
	return serve(t, st), st
}

func do(t *testing.T, method, url string, body []byte, hdr ...string) (*http.Response, []byte) {
	t.Helper()
	return httpapitest.Do(t, method, url, bytes.NewReader(body), hdr...)
}

func put(t *testing.T, url string, body []byte) (*http.Response, []byte) {
	return do(t, "PUT", url, body, "Authorization", "Bearer "+testToken)
}

// Upload, then get every variant over HTTP: byte-identical to the store,
// with type, ETag, caching headers and conditional requests; large
// variants pass through the tier engine (value log, then RAM).
func TestHTTPUploadAndGet(t *testing.T) {
	ts, st := newTestServer(t, nil)
	body := encodeTestJPEG(t, testPhoto(1600, 1200, 7), 92)
	if resp, _ := do(t, "PUT", ts.URL+"/images/p1", body); resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("upload without token: %d", resp.StatusCode)
	}
	resp, b := put(t, ts.URL+"/images/p1", body)
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("upload: %d %s", resp.StatusCode, b)
	}
	var m Meta
	if err := json.Unmarshal(b, &m); err != nil || len(m.Variants) != 5 {
		t.Fatalf("meta %s: %v", b, err)
	}
	cached := map[string]bool{}
	for _, v := range m.Variants {
		checkVariant(t, ts.URL, st, v, cached[v.BlobName()])
		cached[v.BlobName()] = true
	}
	resp, part := do(t, "GET", ts.URL+"/images/p1/large", nil, "Range", "bytes=0-99")
	if resp.StatusCode != http.StatusPartialContent || len(part) != 100 {
		t.Fatalf("range: %d, %d bytes", resp.StatusCode, len(part))
	}
	if resp, b := do(t, "GET", ts.URL+"/images/p1", nil); resp.StatusCode != 200 || !bytes.Contains(b, []byte(`"generation": 1`)) {
		t.Fatalf("metadata: %d %s", resp.StatusCode, b)
	}
	if resp, _ := do(t, "GET", ts.URL+"/images/p1/huge", nil); resp.StatusCode != http.StatusNotFound {
		t.Fatalf("unknown variant: %d", resp.StatusCode)
	}
	if resp, _ := do(t, "GET", ts.URL+"/images/nope", nil); resp.StatusCode != http.StatusNotFound {
		t.Fatalf("unknown image: %d", resp.StatusCode)
	}
}

// checkVariant gets v twice; cached says its bytes are in RAM already
// (another variant shares them).
func checkVariant(t *testing.T, base string, st *Store, v Variant, cached bool) {
	t.Helper()
	_, _, want, _ := st.Get("p1", v.Name)
	tiers := []string{}
	for range 2 {
		resp, got := do(t, "GET", base+"/images/p1/"+v.Name, nil)
		if resp.StatusCode != 200 || !bytes.Equal(got, want) {
			t.Fatalf("%s: %d, %d bytes, want %d", v.Name, resp.StatusCode, len(got), len(want))
		}
		h := resp.Header
		if h.Get("ETag") != v.ETag || h.Get("Content-Type") != v.ContentType || !strings.HasPrefix(h.Get("Cache-Control"), "public, max-age=") {
			t.Fatalf("%s: headers %v", v.Name, h)
		}
		tiers = append(tiers, h.Get("X-Strata-Tier"))
	}
	wantTiers := "lsm lsm"
	if v.Bytes >= DefaultSizeThreshold {
		wantTiers = "vlog ram"
		if cached {
			wantTiers = "ram ram"
		}
	}
	if strings.Join(tiers, " ") != wantTiers {
		t.Errorf("%s (%d bytes) served from %v, want %s", v.Name, v.Bytes, tiers, wantTiers)
	}
	if resp, _ := do(t, "GET", base+"/images/p1/"+v.Name, nil, "If-None-Match", v.ETag); resp.StatusCode != http.StatusNotModified {
		t.Fatalf("%s: conditional GET %d", v.Name, resp.StatusCode)
	}
}

// A re-upload replaces the variants: the cached large variant of the old
// generation is not served.
func TestHTTPReplace(t *testing.T) {
	ts, _ := newTestServer(t, nil)
	put(t, ts.URL+"/images/r", encodeTestJPEG(t, testPhoto(1600, 1200, 8), 92))
	_, old := do(t, "GET", ts.URL+"/images/r/medium", nil)
	resp, b := put(t, ts.URL+"/images/r", encodeTestJPEG(t, testPhoto(1600, 1200, 9), 92))
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("replace: %d %s", resp.StatusCode, b)
	}
	resp, cur := do(t, "GET", ts.URL+"/images/r/medium", nil)
	if bytes.Equal(old, cur) || resp.Header.Get("X-Strata-Tier") != "vlog" {
		t.Fatalf("old bytes served after the replacement (tier %s)", resp.Header.Get("X-Strata-Tier"))
	}
}

// Bad uploads get a clear 4xx as a problem, and nothing is stored.
func TestHTTPRejects(t *testing.T) {
	ts, st := newTestServer(t, func(o *Options) { o.MaxUploadBytes = 1 << 20; o.MaxPixels = 10_000_000 })
	cases := []struct {
		name string
		body []byte
		code int
	}{
		{"text", []byte("<html>not an image</html>"), http.StatusUnsupportedMediaType},
		{"bomb", pngBomb(t, 50_000, 50_000), http.StatusUnprocessableEntity},
		{"corrupt", encodeTestJPEG(t, testPhoto(300, 200, 1), 90)[:2000], http.StatusUnprocessableEntity},
		{"big", make([]byte, 2<<20), http.StatusRequestEntityTooLarge},
	}
	for _, c := range cases {
		resp, b := put(t, ts.URL+"/images/"+c.name, c.body)
		if p, err := httpapi.ReadProblem(resp, b); resp.StatusCode != c.code || err != nil || p.Detail == "" {
			t.Errorf("%s: %d %s, want %d (%v)", c.name, resp.StatusCode, b, c.code, err)
		}
	}
	if resp, _ := put(t, ts.URL+"/images/.hidden", []byte("x")); resp.StatusCode != http.StatusBadRequest {
		t.Errorf("bad id: %d", resp.StatusCode)
	}
	if n := countKeys(t, st, "img/"); n != 0 {
		t.Fatalf("%d keys stored by rejected uploads", n)
	}
}

// IIIF: info.json declares level 2 and lists the stored sizes; an image
// request is derived from the smallest stored variant with the pixels it
// asks for, at exactly the size asked, and says which in X-Strata-Variant.
func TestHTTPIIIF(t *testing.T) {
	// The default ladder at a quarter of its size, so that the race
	// detector's pass stays short.
	ladder := []Spec{{"thumbnail", 25, 25}, {"small", 150, 200}, {"medium", 320, 320}, {"large", 512, 768}}
	ts, _ := newTestServer(t, func(o *Options) { o.Ladder = ladder })
	put(t, ts.URL+"/images/m", encodeTestPNG(t, testPhoto(600, 400, 10)))
	resp, b := do(t, "GET", ts.URL+"/iiif/3/m/info.json", nil)
	var info infoJSON
	if resp.StatusCode != 200 || json.Unmarshal(b, &info) != nil {
		t.Fatalf("info.json: %d %s", resp.StatusCode, b)
	}
	if info.ID != ts.URL+"/iiif/3/m" || info.Type != "ImageService3" || info.Profile != "level2" || info.Width != 600 ||
		fmt.Sprint(info.Sizes) != "[{25 17} {150 100} {320 213} {512 341} {600 400}]" || info.MaxArea != DefaultIIIFMaxOutputPixels {
		t.Fatalf("info %+v", info)
	}
	for _, c := range []struct {
		path, variant, ctype string
		size                 image.Point
	}{
		{"full/max/0/default.jpg", "original", "image/jpeg", image.Pt(600, 400)},
		{"full/25,/0/default.jpg", "thumbnail", "image/jpeg", image.Pt(25, 17)},
		{"full/26,/0/default.jpg", "small", "image/jpeg", image.Pt(26, 17)},
		{"full/,100/0/default.png", "small", "image/png", image.Pt(150, 100)},
		{"full/!150,150/90/gray.jpg", "small", "image/jpeg", image.Pt(100, 150)},
		{"full/150,101/0/default.jpg", "medium", "image/jpeg", image.Pt(150, 101)},
		{"full/pct:50/0/default.jpg", "medium", "image/jpeg", image.Pt(300, 200)},
		{"full/pct:90/0/default.jpg", "original", "image/jpeg", image.Pt(540, 360)},
		{"square/50,/0/bitonal.png", "small", "image/png", image.Pt(50, 50)},
		{"300,200,300,200/50,/!270/color.jpg", "small", "image/jpeg", image.Pt(33, 50)},
		{"25,25,12,12/max/0/default.jpg", "original", "image/jpeg", image.Pt(12, 12)},
		{"25,25,12,12/^25,/0/default.jpg", "original", "image/jpeg", image.Pt(25, 25)},
		{"full/150,/45/default.png", "small", "image/png", image.Pt(177, 177)},
	} {
		resp, b := do(t, "GET", ts.URL+"/iiif/3/m/"+c.path, nil)
		if resp.StatusCode != 200 || resp.Header.Get("X-Strata-Variant") != c.variant || resp.Header.Get("Content-Type") != c.ctype {
			t.Errorf("%s: %d variant %q %s, want %s", c.path, resp.StatusCode, resp.Header.Get("X-Strata-Variant"), resp.Header.Get("Content-Type"), c.variant)
			continue
		}
		if got := decodeSize(t, b); got != c.size {
			t.Errorf("%s: %v, want %v", c.path, got, c.size)
		}
	}
	for _, path := range []string{"full/601,/0/default.jpg", "full/max/450/default.jpg", "full/max/0/default.webp",
		"full/max/0/sepia.jpg", "full/!1200,1200/0/default.jpg", "full/abc/0/default.jpg", "800,0,10,10/max/0/default.jpg",
		"full/^pct:5000/0/default.jpg"} {
		if resp, _ := do(t, "GET", ts.URL+"/iiif/3/m/"+path, nil); resp.StatusCode != http.StatusBadRequest {
			t.Errorf("%s: %d, want 400", path, resp.StatusCode)
		}
	}
}

// TestHTTPErrorsAreProblems: every image route answers its errors as
// RFC 9457 problems, with client ids clipped.
func TestHTTPErrorsAreProblems(t *testing.T) {
	ts, _ := newTestServer(t, nil)
	put(t, ts.URL+"/images/m", encodeTestPNG(t, testPhoto(300, 200, 10)))
	long := strings.Repeat("x", 100)
	auth := []string{"Authorization", "Bearer " + testToken}
	cases := []struct {
		method, path string
		hdr          []string
		code         int
	}{
		{"PUT", "/images/m", nil, http.StatusUnauthorized},
		{"PUT", "/images/.bad", auth, http.StatusBadRequest},
		{"DELETE", "/images/" + long, auth, http.StatusNotFound},
		{"GET", "/images/nope", nil, http.StatusNotFound},
		{"GET", "/images/m/" + long, nil, http.StatusNotFound},
		{"GET", "/iiif/3/.bad", nil, http.StatusBadRequest},
		{"GET", "/iiif/3/nope/info.json", nil, http.StatusNotFound},
		{"GET", "/iiif/3/m/full/abc/0/default.jpg", nil, http.StatusBadRequest},
	}
	for _, c := range cases {
		resp, b := do(t, c.method, ts.URL+c.path, nil, c.hdr...)
		p, err := httpapi.ReadProblem(resp, b)
		if resp.StatusCode != c.code || err != nil || p.Detail == "" {
			t.Errorf("%s %s: %d, want %d: %v", c.method, c.path, resp.StatusCode, c.code, err)
		}
		if strings.Contains(p.Detail, long) {
			t.Errorf("%s %s: the detail echoes the whole id: %s", c.method, c.path, p.Detail)
		}
	}
}
