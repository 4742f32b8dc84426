package images

import (
	"errors"
	"image"
	"strings"
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

// FuzzIIIFPath parses the four IIIF path parameters of an image request
// and plans it against a w x h image: no panic, only ErrBadIIIF (or
// ErrTooMuchWork), the canonical form parses back to the same plan, and
// the plan stays within the image, its variant and the output limits.
func FuzzIIIFPath(f *testing.F) {
	f.Add("full", "max", "0", "default.jpg", 4000, 3000)
	f.Add("full", "!640,480", "0", "default.jpg", 300, 200)
	f.Add("square", "pct:50", "90", "gray.png", 1, 1)
	f.Add("pct:10,10,80,80", "^max", "!270", "bitonal.jpg", 10, 10)
	f.Add("10,10,100,100", "^!300,200", "180", "color.png", 50, 60)
	o := (&IIIFOptions{MaxOutputPixels: 1 << 20, MaxOutputSide: 2000}).EnsureDefaults()
	f.Fuzz(func(t *testing.T, region, size, rotation, file string, w, h int) {
		q, err := ParseIIIF(region, size, rotation, file)
		if err != nil {
			if !errors.Is(err, ErrBadIIIF) {
				t.Fatalf("untyped error %v", err)
			}
			return
		}
		w, h = 1+int(uint(w)%maxSide), 1+int(uint(h)%maxSide)
		m := &Meta{ID: "f", Width: w, Height: h, Variants: []Variant{
			{Name: "small", Width: max(1, w/4), Height: max(1, h/4)}, {Name: OriginalName, Width: w, Height: h}}}
		p, err := PlanIIIF(m, q, o)
		if err != nil {
			if !errors.Is(err, ErrBadIIIF) && !errors.Is(err, ErrTooMuchWork) {
				t.Fatalf("untyped error %v", err)
			}
			return
		}
		full := image.Rect(0, 0, w, h)
		if !p.Region.In(full) || p.Region.Empty() || p.Size.X < 1 || p.Size.Y < 1 || !o.limits().fits(p.Size) ||
			!p.Crop.In(image.Rect(0, 0, p.Variant.Width, p.Variant.Height)) || p.Crop.Empty() {
			t.Fatalf("%s/%s on %dx%d: %+v", region, size, w, h, p)
		}
		parts := strings.SplitN(p.Canonical, "/", 4)
		q2, err := ParseIIIF(parts[0], parts[1], parts[2], parts[3])
		if err != nil {
			t.Fatalf("canonical %q: %v", p.Canonical, err)
		}
		p2, err := PlanIIIF(m, q2, o)
		if err != nil || p2.Region != p.Region || p2.Size != p.Size || p2.Canonical != p.Canonical {
			t.Fatalf("canonical %q plans %+v %v, not %+v", p.Canonical, p2, err, p)
		}
	})
}
