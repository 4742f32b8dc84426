package server

import (
	"fmt"
	"net/http"
	"testing"
	"time"
)

// TestETagFormat: the hand-formatted ETag is the %016x-%x it replaces,
// at the widths where zero padding starts and stops.
func TestETagFormat(t *testing.T) {
	for _, sum := range []uint64{0, 1, 0xf, 0x10, 1<<60 - 1, 1 << 60, 0xdeadbeef, ^uint64(0)} {
		for _, n := range []int{0, 1, 102400, 1 << 20} {
			if got, want := etag(sum, n), fmt.Sprintf(`"%016x-%x"`, sum, n); got != want {
				t.Errorf("etag(%x, %d) = %s, want %s", sum, n, got, want)
			}
		}
	}
}

// TestHeaderCache: the shared values are those formatted per request
// before, and a wrapper appending to one cannot change it for others.
func TestHeaderCache(t *testing.T) {
	c := newHeaderCache(*(&Options{SegmentMaxAge: 90 * time.Second, ManifestMaxAge: 7 * time.Second}).EnsureDefaults())
	if v := c.cacheControl("a.M3U8"); len(v) != 1 || v[0] != "public, max-age=7" {
		t.Errorf("manifest Cache-Control %q", v)
	}
	if v := c.cacheControl("1.m4s"); len(v) != 1 || v[0] != "public, max-age=90" {
		t.Errorf("segment Cache-Control %q", v)
	}
	for range 2 { // the second from the cache
		if v := c.contentType("1.m4s"); len(v) != 1 || v[0] != "video/iso.segment" {
			t.Errorf("Content-Type %q", v)
		}
	}
	if c.lastModified(time.Time{}) != nil {
		t.Error("a Last-Modified for the zero time")
	}
	at := time.Date(2026, 11, 24, 2, 30, 0, 5e8, time.FixedZone("X", 3600))
	for range 2 {
		if v := c.lastModified(at); len(v) != 1 || v[0] != at.UTC().Format(http.TimeFormat) {
			t.Errorf("Last-Modified %q", v)
		}
	}
	h := http.Header{}
	h["Vary"] = c.segment
	h.Add("Vary", "Accept-Encoding")
	if c.segment[0] != "public, max-age=90" || len(c.segment) != 1 {
		t.Errorf("appending to a response's header changed the shared value: %q", c.segment)
	}
}
