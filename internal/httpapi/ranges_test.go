package httpapi

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	"github.com/strata-media/strata/internal/httpapi/httpapitest"
)

func TestParseRange(t *testing.T) {
	const size = 100
	for _, c := range []struct {
		h       string
		verdict RangeVerdict
		ranges  []ByteRange
	}{
		{"", RangeIgnore, nil},
		{"items=0-1", RangeIgnore, nil},
		{"bytes=0-9", RangeServe, []ByteRange{{0, 9}}},
		{"Bytes = 0-9 ,, 20-", RangeServe, []ByteRange{{0, 9}, {20, 99}}},
		{"bytes=-10", RangeServe, []ByteRange{{90, 99}}},
		{"bytes=-1000", RangeServe, []ByteRange{{0, 99}}},
		{"bytes=50-1000", RangeServe, []ByteRange{{50, 99}}},
		{"bytes=200-300,0-0", RangeServe, []ByteRange{{0, 0}}},
		{"bytes=-0", RangeRefuse, nil},
		{"bytes=-0,-0", RangeRefuse, nil},
		{"bytes=100-", RangeRefuse, nil},
		{"bytes=5-4", RangeRefuse, nil},
		{"bytes=a-b", RangeRefuse, nil},
		{"bytes=+1-2", RangeRefuse, nil},
		{"bytes=1", RangeRefuse, nil},
		{"bytes=", RangeRefuse, nil},
		{"bytes", RangeRefuse, nil},
		{"bytes=0-1,2-3,4-5,6-7,8-9,10-11,12-13,14-15,16-17", RangeRefuse, nil},
		{"bytes=0-50,40-60", RangeIgnore, nil},
		{"bytes=0-0,0-0", RangeIgnore, nil},
		{"bytes=99999999999999999999-", RangeRefuse, nil},
	} {
		got, v, why := ParseRange(c.h, size)
		if v != c.verdict || !slices.Equal(got, c.ranges) {
			t.Errorf("ParseRange(%q) = %v, %v (%s); want %v, %v", c.h, got, v, why, c.ranges, c.verdict)
		}
		if v == RangeRefuse && why == "" {
			t.Errorf("ParseRange(%q): refused without a reason", c.h)
		}
	}
}

// serveChecked is a handler serving body with ranges the way every route
// does: CheckRange, then http.ServeContent, behind the API's edge.
func serveChecked(body []byte) http.Handler {
	a := New(Options{})
	a.Mount(ModuleFunc(func(m *Mounter) {
		m.Handle("GET /x", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if CheckRange(w, r, int64(len(body))) {
				http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(body))
			}
		}))
	}))
	return a.Handler()
}

// TestCheckRange: bytes=-0 and every other refused set get 416 with
// Content-Range: bytes */size, an unknown unit gets the whole body, and
// HEAD answers what GET answers.
func TestCheckRange(t *testing.T) {
	body := bytes.Repeat([]byte("0123456789"), 4070) // 40700 bytes
	h := serveChecked(body)
	many := httpapitest.OneByteRanges(20000)
	for _, c := range []struct {
		rng      string
		code     int
		crange   string
		bodySize int
	}{
		{"bytes=-0", 416, "bytes */40700", -1},
		{"bytes=40700-", 416, "bytes */40700", -1},
		{"bytes=x-y", 416, "bytes */40700", -1},
		{many, 416, "bytes */40700", -1},
		{"pages=1-2", 200, "", 40700},
		{"bytes=0-9", 206, "bytes 0-9/40700", 10},
		{"bytes=-0,0-9", 206, "bytes 0-9/40700", 10},
		{"bytes=0-99,50-149", 200, "", 40700},
	} {
		for _, method := range []string{"GET", "HEAD"} {
			req := httptest.NewRequest(method, "/x", nil)
			req.Header.Set("Range", c.rng)
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			name := method + " " + Clip(c.rng, 40)
			if rec.Code != c.code || rec.Header().Get("Content-Range") != c.crange {
				t.Errorf("%s: %d, Content-Range %q; want %d, %q", name, rec.Code, rec.Header().Get("Content-Range"), c.code, c.crange)
			}
			if method == "GET" && c.bodySize >= 0 && rec.Body.Len() != c.bodySize {
				t.Errorf("%s: %d body bytes, want %d", name, rec.Body.Len(), c.bodySize)
			}
			if rec.Code == 416 && method == "GET" && rec.Body.Len() > 1024 {
				t.Errorf("%s: a 416 of %d bytes", name, rec.Body.Len())
			}
		}
	}
}

// TestCheckRangeAfterPreconditions: a matching If-None-Match is a 304
// whatever the Range, and an If-Range that does not match the ETag makes
// the Range ignored (200), refusable or not (RFC 9110 §13.2.2).
func TestCheckRangeAfterPreconditions(t *testing.T) {
	body := []byte("0123456789")
	a := New(Options{})
	a.Mount(ModuleFunc(func(m *Mounter) {
		m.Handle("GET /x", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("ETag", `"v1"`)
			if CheckRange(w, r, int64(len(body))) {
				http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(body))
			}
		}))
	}))
	for _, c := range []struct {
		hdr  []string
		code int
	}{
		{[]string{"Range", "bytes=-0", "If-None-Match", `W/"v1"`}, 304},
		{[]string{"Range", "bytes=-0", "If-None-Match", `"v0"`}, 416},
		{[]string{"Range", "bytes=-0", "If-Range", `"v0"`}, 200},
		{[]string{"Range", "bytes=0-1", "If-Range", `"v0"`}, 200},
		{[]string{"Range", "bytes=0-1", "If-Range", `"v1"`}, 206},
		{[]string{"Range", "bytes=-0", "If-Range", `"v1"`}, 416},
	} {
		req := httptest.NewRequest("GET", "/x", nil)
		for i := 0; i < len(c.hdr); i += 2 {
			req.Header.Set(c.hdr[i], c.hdr[i+1])
		}
		rec := httptest.NewRecorder()
		a.Handler().ServeHTTP(rec, req)
		if rec.Code != c.code {
			t.Errorf("%q: %d, want %d", c.hdr, rec.Code, c.code)
		}
	}
}

// FuzzParseRange: any header parses without panicking, and what it
// serves is at most MaxRanges non-empty, disjoint ranges inside the size.
func FuzzParseRange(f *testing.F) {
	for _, s := range []string{"bytes=0-1", "bytes=-0", "bytes=1-,-5", "items=1-2", "bytes= 1 - 2 ,,3-"} {
		f.Add(s, int64(100))
	}
	f.Fuzz(func(t *testing.T, h string, size int64) {
		if size < 0 {
			size = -size
		}
		ranges, v, _ := ParseRange(h, size)
		if v != RangeServe {
			if len(ranges) != 0 {
				t.Fatalf("verdict %v with ranges %v", v, ranges)
			}
			return
		}
		if len(ranges) == 0 || len(ranges) > MaxRanges || overlap(ranges) {
			t.Fatalf("%q: ranges %v", h, ranges)
		}
		for _, r := range ranges {
			if r.First < 0 || r.Last < r.First || r.Last >= size {
				t.Fatalf("%q size %d: range %v", h, size, r)
			}
		}
	})
}
