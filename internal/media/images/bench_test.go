package images

import (
	"fmt"
	"image"
	"sort"
	"sync"
	"testing"
)

// benchPhoto is a 12-megapixel (4032x3024, a phone camera's) photo-like
// JPEG at quality 90, made once.
var benchPhoto = sync.OnceValue(func() []byte {
	return encodeTestJPEG(&testing.B{}, testPhoto(4032, 3024, 42), 90)
})

// BenchmarkRender generates the default ladder from a 12 MP JPEG with each
// resampler (decode, scale, encode: the whole upload pipeline). With
// -tags vips it includes libvips.
func BenchmarkRender(b *testing.B) {
	body := benchPhoto()
	src, err := Probe(body, Limits{MaxPixels: DefaultMaxPixels, MaxDecodeBytes: DefaultMaxDecodeBytes})
	if err != nil {
		b.Fatal(err)
	}
	var sizes []image.Point
	for _, s := range DefaultLadder() {
		sizes = append(sizes, fit(src.Width, src.Height, image.Pt(s.Width, s.Height)))
	}
	names := make([]string, 0, len(renderers))
	for n := range renderers {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, name := range names {
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := renderers[name].Render(body, src, sizes, DefaultQuality); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkPut stores a prepared image (ladder of a 1600x1200 photo:
// variants of 5-400 KiB, the large ones in the value log) with and without
// fsync before the acknowledgement: the cost of durability per upload.
func BenchmarkPut(b *testing.B) {
	for _, sync := range []bool{true, false} {
		b.Run(fmt.Sprintf("sync=%v", sync), func(b *testing.B) {
			st := openTestStore(b, func(o *Options) { o.NoSync = !sync; o.GCInterval = -1 })
			p, err := st.Pipeline().Prepare(encodeTestJPEG(b, testPhoto(1600, 1200, 43), 90))
			if err != nil {
				b.Fatal(err)
			}
			var n int64
			for _, blob := range p.blobs {
				n += int64(len(blob))
			}
			b.SetBytes(n)
			i := 0
			for b.Loop() {
				if _, _, err := st.Put(fmt.Sprintf("b%d", i), p); err != nil {
					b.Fatal(err)
				}
				i++
			}
		})
	}
}
