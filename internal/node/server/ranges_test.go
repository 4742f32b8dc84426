package server

import (
	"strconv"
	"testing"

	"github.com/strata-media/strata/internal/httpapi/httpapitest"
	"github.com/strata-media/strata/internal/ident"
)

// TestSegmentRanges: thousands of one-byte ranges are refused (they
// returned 5.66 MB for a 40 KB segment), bytes=-0 gets 416 rather than an
// invalid 206, every 416 says the size in Content-Range, another unit is
// ignored, and HEAD answers what GET answers.
func TestSegmentRanges(t *testing.T) {
	ts, syn, _ := testServer(t)
	o := ident.Object{Video: "title-0000", Rendition: "700k", Name: "2.m4s"}
	want, _ := syn.Expected(o)
	size := strconv.Itoa(len(want))
	url := ts.URL + "/videos/" + o.Path()
	for _, c := range []struct {
		rng    string
		code   int
		crange string
	}{
		{httpapitest.OneByteRanges(2000), 416, "bytes */" + size},
		{"bytes=-0", 416, "bytes */" + size},
		{"bytes=" + size + "-", 416, "bytes */" + size},
		{"bytes=1-x", 416, "bytes */" + size},
		{"seconds=1-2", 200, ""},
		{"bytes=0-0,4-4", 206, ""},
	} {
		for _, method := range []string{"GET", "HEAD"} {
			resp, body := httpapitest.Do(t, method, url, nil, "Range", c.rng)
			if resp.StatusCode != c.code || resp.Header.Get("Content-Range") != c.crange {
				t.Errorf("%s %.30s: %d Content-Range %q; want %d %q", method, c.rng, resp.StatusCode, resp.Header.Get("Content-Range"), c.code, c.crange)
			}
			if method == "GET" && len(body) > 2*len(want) {
				t.Errorf("GET %.30s: %d bytes for a segment of %d", c.rng, len(body), len(want))
			}
		}
	}
}
