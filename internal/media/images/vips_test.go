//go:build vips

package images

import (
	"image"
	"testing"
)

// libvips renders every rung at exactly the planned size, upright.
func TestVipsRenderer(t *testing.T) {
	st := openTestStore(t, func(o *Options) { o.Resampler = "libvips" })
	m, _, err := st.Ingest("v", withOrientation(encodeTestJPEG(t, testPhoto(1500, 1000, 13), 90), 6))
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range m.Variants {
		_, _, data, err := st.Get("v", v.Name)
		if err != nil {
			t.Fatal(err)
		}
		if got := decodeSize(t, data); v.Name != OriginalName && got != image.Pt(v.Width, v.Height) {
			t.Errorf("%s: %v, planned %dx%d", v.Name, got, v.Width, v.Height)
		}
	}
}
