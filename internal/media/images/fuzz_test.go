package images

import (
	"errors"
	"image"
	"net/http/httptest"
	"testing"
)

// FuzzProbe probes arbitrary bytes as an upload: no panic, a typed
// error, and what it accepts is within the limits.
func FuzzProbe(f *testing.F) {
	jpg := encodeTestJPEG(f, testPhoto(32, 24, 1), 80)
	f.Add(jpg)
	f.Add(withOrientation(jpg, 6))
	f.Add(encodeTestPNG(f, testPhoto(16, 16, 2)))
	f.Add(pngBomb(f, 50000, 50000))
	f.Add(pngBomb16(f, 10000, 10000))
	lim := Limits{MaxPixels: 1_000_000, MaxDecodeBytes: 8 << 20}
	f.Fuzz(func(t *testing.T, b []byte) {
		src, err := Probe(b, lim)
		if err != nil {
			if !errors.Is(err, ErrUnsupported) && !errors.Is(err, ErrCorrupt) && !errors.Is(err, ErrTooManyPixels) {
				t.Fatalf("untyped error %v", err)
			}
			return
		}
		px := int64(src.Width) * int64(src.Height)
		if src.Width < 1 || src.Height < 1 || px > lim.MaxPixels || src.Orientation < 1 || src.Orientation > 8 {
			t.Fatalf("accepted %+v", src)
		}
	})
}

// FuzzExifOrientation reads the orientation of arbitrary bytes after a
// JPEG's start marker: no panic, always 1 to 8.
func FuzzExifOrientation(f *testing.F) {
	jpg := encodeTestJPEG(f, testPhoto(8, 8, 3), 80)
	for o := uint16(0); o <= 9; o += 3 {
		f.Add(withOrientation(jpg, o)[2:])
	}
	f.Add([]byte("\xff\xe1\x00\x10Exif\x00\x00II\x2a\x00\xff\xff\xff\x7f"))
	f.Fuzz(func(t *testing.T, b []byte) {
		if o := exifOrientation(append([]byte{0xFF, 0xD8}, b...)); o < 1 || o > 8 {
			t.Fatalf("orientation %d", o)
		}
	})
}

// FuzzIIIFPath checks the four IIIF path parameters of a level-0 image
// request: no panic, only ErrBadIIIF, and an accepted size resolves
// within the image or says why not.
func FuzzIIIFPath(f *testing.F) {
	f.Add("full", "max", "0", "default.jpg", 4000, 3000)
	f.Add("full", "!640,480", "0", "default.jpg", 300, 200)
	f.Add("square", "pct:50", "90", "gray.png", 1, 1)
	f.Add("full", "^max", "0", "default.jpg", 10, 10)
	f.Fuzz(func(t *testing.T, region, size, rotation, file string, w, h int) {
		r := httptest.NewRequest("GET", "/", nil)
		r.SetPathValue("region", region)
		r.SetPathValue("size", size)
		r.SetPathValue("rotation", rotation)
		r.SetPathValue("file", file)
		z, err := parseIIIFPath(r)
		if err != nil {
			if !errors.Is(err, ErrBadIIIF) {
				t.Fatalf("untyped error %v", err)
			}
			return
		}
		w, h = 1+int(uint(w)%maxSide), 1+int(uint(h)%maxSide)
		p, err := z.Resolve(w, h)
		if err == nil && !p.In(image.Rect(1, 1, w+1, h+1)) {
			t.Fatalf("%q on %dx%d: %v", size, w, h, p)
		}
		if err != nil && !errors.Is(err, ErrBadIIIF) {
			t.Fatalf("untyped error %v", err)
		}
	})
}
