package edge

import (
	"bytes"
	"testing"
)

// A representation that shrank at the upstream answers a slice's range
// with a shorter Content-Range, or 416 when the slice starts past its new
// end: the representation changed, as with another ETag, and the edge drops
// the object, so that the next request fetches the new one instead of
// failing on the same slice for as long as the first slice stays fresh.
// The crash torture found it: after a restart, every GET of an object
// whose first slice was recovered from flash was cut at that slice.
func TestSliceShrunk(t *testing.T) {
	const s = 64 << 10
	for name, n := range map[string]int{"shorter Content-Range": 2*s + 100, "416": s + 100} {
		t.Run(name, func(t *testing.T) {
			f := newFixture(t, nil)
			body := payload(3*s, 8)
			f.up.put("/media/c.mp4", body, "Cache-Control", "max-age=600", "Etag", `"c1"`)
			f.want(f.get("/cdn/c.mp4", "Range", "bytes=0-9"), 206, CacheMiss, body[:10])
			shrunk := payload(n, 9)
			f.up.put("/media/c.mp4", shrunk, "Cache-Control", "max-age=600", "Etag", `"c2"`)
			r := f.get("/cdn/c.mp4", "Range", "bytes=131100-131109")
			if r.err == nil && r.status/100 == 2 && bytes.Equal(r.body, body[131100:131110]) {
				t.Fatalf("a slice of another representation was served")
			}
			r = f.get("/cdn/c.mp4")
			f.want(r, 200, CacheMiss, shrunk)
		})
	}
}
