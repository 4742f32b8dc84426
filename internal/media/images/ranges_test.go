package images

import (
	"strconv"
	"testing"

	"github.com/strata-media/strata/internal/httpapi/httpapitest"
)

// TestHTTPVariantRanges: a variant's ranges are capped like every other
// route's (thousands of one-byte ranges amplified a variant many times),
// every 416 says the size, and HEAD answers what GET answers.
func TestHTTPVariantRanges(t *testing.T) {
	ts, _ := newTestServer(t, nil)
	put(t, ts.URL+"/images/r", encodeTestJPEG(t, testPhoto(640, 480, 3), 90))
	url := ts.URL + "/images/r/thumbnail"
	_, whole := do(t, "GET", url, nil)
	size := strconv.Itoa(len(whole))
	for _, c := range []struct {
		rng    string
		code   int
		crange string
	}{
		{httpapitest.OneByteRanges(2000), 416, "bytes */" + size},
		{"bytes=-0", 416, "bytes */" + size},
		{"bytes=99999999-", 416, "bytes */" + size},
		{"pixels=0-1", 200, ""},
		{"bytes=0-9", 206, "bytes 0-9/" + size},
	} {
		for _, method := range []string{"GET", "HEAD"} {
			resp, body := do(t, method, url, nil, "Range", c.rng)
			if resp.StatusCode != c.code || resp.Header.Get("Content-Range") != c.crange {
				t.Errorf("%s %.30s: %d Content-Range %q; want %d %q", method, c.rng, resp.StatusCode, resp.Header.Get("Content-Range"), c.code, c.crange)
			}
			if len(body) > 2*len(whole) {
				t.Errorf("%s %.30s: %d bytes for a variant of %d", method, c.rng, len(body), len(whole))
			}
		}
	}
}
