// Command webp-probe compares, on a 600x400 photo-like image (the image
// package tests' testPhoto, copied), the encoders an IIIF response could use:
// JPEG, PNG, and a pure-Go WebP encoder from the Go proxy
// (nativewebp, lossless only). Its own module, so that Strata does not
// depend on nativewebp: cd scripts/webp-probe && go run .
package main

import (
	"bytes"
	"fmt"
	"image/jpeg"
	"image/png"
	"sort"
	"time"

	"github.com/HugoSmits86/nativewebp"
)

func med(f func() int) (time.Duration, int) {
	var ds []time.Duration
	n := 0
	for range 7 {
		t := time.Now()
		n = f()
		ds = append(ds, time.Since(t))
	}
	sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
	return ds[3], n
}

func main() {
	img := testPhoto(600, 400, 7)
	for _, c := range []struct {
		name string
		f    func() int
	}{
		{"jpeg q85", func() int { var b bytes.Buffer; jpeg.Encode(&b, img, &jpeg.Options{Quality: 85}); return b.Len() }},
		{"png bestspeed", func() int {
			var b bytes.Buffer
			(&png.Encoder{CompressionLevel: png.BestSpeed}).Encode(&b, img)
			return b.Len()
		}},
		{"png default", func() int { var b bytes.Buffer; png.Encode(&b, img); return b.Len() }},
		{"webp lossless (nativewebp)", func() int {
			var b bytes.Buffer
			if err := nativewebp.Encode(&b, img, nil); err != nil {
				panic(err)
			}
			return b.Len()
		}},
	} {
		d, n := med(c.f)
		fmt.Printf("%-28s median %8.2f ms  %7d bytes\n", c.name, float64(d.Microseconds())/1000, n)
	}
}
