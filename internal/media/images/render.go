package images

import (
	"bytes"
	"fmt"
	"image"
	stddraw "image/draw"
	"image/jpeg"
	"slices"
	"sort"

	"golang.org/x/image/draw"
)

// A Renderer generates the JPEG variants of an original.
type Renderer interface {
	// Render decodes body (described by src, which Probe returned) and
	// returns its JPEG encoding at each size, upright (EXIF orientation
	// applied) and in the order of sizes. Sizes are in display
	// orientation and never larger than the original.
	Render(body []byte, src Source, sizes []image.Point, quality int) ([][]byte, error)
}

// DefaultResampler is the pure-Go filter used unless Options.Resampler
// names another: box halving down to less than twice the target, then
// Catmull-Rom (see BenchmarkRender and the package doc for the numbers).
const DefaultResampler = "catmullrom"

// renderers are the Renderers by Options.Resampler name; a build with the
// vips tag adds "libvips".
var renderers = map[string]Renderer{
	"catmullrom":        GoRenderer{Filter: draw.CatmullRom, Halve: true},
	"catmullrom-direct": GoRenderer{Filter: draw.CatmullRom},
	"bilinear":          GoRenderer{Filter: draw.BiLinear, Halve: true},
	"approx-bilinear":   GoRenderer{Filter: draw.ApproxBiLinear},
}

func resamplerNamed(name string) (Renderer, error) {
	r, ok := renderers[name]
	if !ok {
		names := make([]string, 0, len(renderers))
		for n := range renderers {
			names = append(names, n)
		}
		sort.Strings(names)
		return nil, fmt.Errorf("%w: unknown resampler %q (have %v)", ErrOptions, name, names)
	}
	return r, nil
}

// GoRenderer renders with the standard library's decoders and encoder and
// golang.org/x/image/draw: no cgo. Each size is scaled from the previous,
// larger result, so the full-size original is filtered once.
type GoRenderer struct {
	// Filter scales to the exact size.
	Filter draw.Interpolator
	// Halve first averages 2x2 blocks while the image is at least twice
	// the target in both directions: cheap, alias-free, and it bounds the
	// filter's work to under four source pixels per target pixel.
	Halve bool
}

// Render implements Renderer.
func (g GoRenderer) Render(body []byte, src Source, sizes []image.Point, quality int) ([][]byte, error) {
	img, err := decode(body)
	if err != nil {
		return nil, err
	}
	out := make([][]byte, len(sizes))
	cur := img
	for _, i := range largestFirst(sizes) {
		stored := storedSize(sizes[i], src.Orientation)
		cur = g.scale(cur, stored)
		if out[i], err = encodeJPEG(orient(toRGBA(cur), src.Orientation), quality); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// scale returns img scaled to size.
func (g GoRenderer) scale(img image.Image, size image.Point) image.Image {
	if img.Bounds().Size() == size {
		return img
	}
	rgba := toRGBA(img) // x/image/draw converts YCbCr per tap: converting once is faster
	for g.Halve && rgba.Bounds().Dx() >= 2*size.X && rgba.Bounds().Dy() >= 2*size.Y {
		rgba = halve(rgba)
	}
	dst := image.NewRGBA(image.Rectangle{Max: size})
	g.Filter.Scale(dst, dst.Bounds(), rgba, rgba.Bounds(), draw.Src, nil)
	return dst
}

// largestFirst returns the indexes of sizes by decreasing area.
func largestFirst(sizes []image.Point) []int {
	idx := make([]int, len(sizes))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int { return area(sizes[b]) - area(sizes[a]) })
	return idx
}

func area(p image.Point) int { return p.X * p.Y }

// storedSize is a display size in the stored image's orientation.
func storedSize(p image.Point, orientation int) image.Point {
	if orientation >= 5 {
		return image.Pt(p.Y, p.X)
	}
	return p
}

// toRGBA returns img as *image.RGBA, converting when it is another type.
func toRGBA(img image.Image) *image.RGBA {
	if r, ok := img.(*image.RGBA); ok {
		return r
	}
	b := img.Bounds()
	dst := image.NewRGBA(image.Rectangle{Max: b.Size()})
	stddraw.Draw(dst, dst.Bounds(), img, b.Min, stddraw.Src)
	return dst
}

// halve averages each 2x2 block of src (a trailing odd row or column is
// dropped).
func halve(src *image.RGBA) *image.RGBA {
	b := src.Bounds()
	w, h := b.Dx()/2, b.Dy()/2
	dst := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		r0 := src.Pix[src.PixOffset(b.Min.X, b.Min.Y+2*y):]
		r1 := src.Pix[src.PixOffset(b.Min.X, b.Min.Y+2*y+1):]
		d := dst.Pix[y*dst.Stride:]
		for x := range 4 * w {
			i := x/4*8 + x%4
			d[x] = uint8((uint(r0[i]) + uint(r0[i+4]) + uint(r1[i]) + uint(r1[i+4]) + 2) / 4)
		}
	}
	return dst
}

// encodeJPEG encodes img as a baseline JPEG, transparent pixels over
// white.
func encodeJPEG(img *image.RGBA, quality int) ([]byte, error) {
	if !img.Opaque() {
		img = overWhite(img)
	}
	var buf bytes.Buffer
	if err := jpeg.Encode(&buf, img, &jpeg.Options{Quality: quality}); err != nil {
		return nil, fmt.Errorf("images: encoding a variant: %w", err)
	}
	return buf.Bytes(), nil
}

// overWhite composites a premultiplied image over white.
func overWhite(img *image.RGBA) *image.RGBA {
	out := image.NewRGBA(img.Bounds())
	for i := 0; i+3 < len(img.Pix); i += 4 {
		bg := 255 - img.Pix[i+3]
		out.Pix[i], out.Pix[i+1], out.Pix[i+2], out.Pix[i+3] = img.Pix[i]+bg, img.Pix[i+1]+bg, img.Pix[i+2]+bg, 255
	}
	return out
}
