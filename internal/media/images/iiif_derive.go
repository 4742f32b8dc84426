package images

import (
	"bytes"
	"fmt"
	"image"
	"image/jpeg"
	"image/png"
	"math"

	"golang.org/x/image/draw"
)

// iiifScaler scales derived responses: box halving, then Catmull-Rom (the
// default resampler of the ladder; it also upscales).
var iiifScaler = GoRenderer{Filter: draw.CatmullRom, Halve: true}

// deriveIIIF makes p's response from the stored bytes of p.Variant:
// decode, upright (an original's EXIF orientation), crop, scale, mirror,
// rotate, reduce to the quality and encode in the format.
func deriveIIIF(body []byte, p IIIFPlan, jpegQuality int) ([]byte, error) {
	img, err := decode(body)
	if err != nil {
		return nil, err
	}
	if o := storedOrientation(p.Variant, body); o != 1 {
		img = orient(toRGBA(img), o)
	}
	if img.Bounds().Size() != image.Pt(p.Variant.Width, p.Variant.Height) {
		return nil, fmt.Errorf("%w: variant %q decodes to %v, not %dx%d", ErrCorrupt, p.Variant.Name, img.Bounds().Size(), p.Variant.Width, p.Variant.Height)
	}
	out := toRGBA(iiifScaler.scale(toRGBA(crop(img, p.Crop)), p.Size))
	if p.req.Rotation.Mirror {
		out = mirror(out)
	}
	out = rotate(out, p.req.Rotation.Degrees)
	return encodeIIIF(out, p.req.Quality, p.req.Format, jpegQuality)
}

// storedOrientation is the EXIF orientation of v's stored bytes: the
// original's, when it is a JPEG; the rungs are stored upright.
func storedOrientation(v Variant, body []byte) int {
	if v.Name == OriginalName && v.ContentType == "image/jpeg" {
		return exifOrientation(body)
	}
	return 1
}

// crop returns the pixels of img within r (relative to img's origin).
func crop(img image.Image, r image.Rectangle) image.Image {
	r = r.Add(img.Bounds().Min)
	if s, ok := img.(interface {
		SubImage(image.Rectangle) image.Image
	}); ok {
		return s.SubImage(r)
	}
	dst := image.NewRGBA(image.Rectangle{Max: r.Size()})
	draw.Draw(dst, dst.Bounds(), img, r.Min, draw.Src)
	return dst
}

// mirror flips img left to right.
func mirror(img *image.RGBA) *image.RGBA {
	b := img.Bounds()
	dst := image.NewRGBA(image.Rectangle{Max: b.Size()})
	for y := range b.Dy() {
		src := img.Pix[img.PixOffset(b.Min.X, b.Min.Y+y):]
		d := dst.Pix[y*dst.Stride:]
		for x := range b.Dx() {
			copy(d[4*(b.Dx()-1-x):4*(b.Dx()-x)], src[4*x:4*x+4])
		}
	}
	return dst
}

// rotate turns img clockwise by deg: exactly by a multiple of 90, else
// onto the bounding box of the turned image, transparent around it
// (white in a JPEG).
func rotate(img *image.RGBA, deg float64) *image.RGBA {
	if math.Mod(deg, 90) == 0 {
		return rotate90s(img, int(deg))
	}
	return rotateArbitrary(img, deg)
}

// rotateArbitrary turns img clockwise by deg, sampling bilinearly.
func rotateArbitrary(img *image.RGBA, deg float64) *image.RGBA {
	b := img.Bounds()
	w, h := float64(b.Dx()), float64(b.Dy())
	sin, cos := math.Sincos(deg * math.Pi / 180)
	ow := max(1, int(math.Ceil(math.Abs(w*cos)+math.Abs(h*sin)-1e-9)))
	oh := max(1, int(math.Ceil(math.Abs(w*sin)+math.Abs(h*cos)-1e-9)))
	dst := image.NewRGBA(image.Rect(0, 0, ow, oh))
	for y := range oh {
		for x := range ow {
			// The inverse of a clockwise turn (y down), about the centres.
			dx, dy := float64(x)+0.5-float64(ow)/2, float64(y)+0.5-float64(oh)/2
			sx, sy := cos*dx+sin*dy+w/2-0.5, -sin*dx+cos*dy+h/2-0.5
			bilinear(img, sx, sy, dst.Pix[dst.PixOffset(x, y):dst.PixOffset(x, y)+4])
		}
	}
	return dst
}

// bilinear writes to out the premultiplied color of img at (x, y), in
// pixel-centre coordinates relative to its origin, pixels outside it
// transparent.
func bilinear(img *image.RGBA, x, y float64, out []uint8) {
	b := img.Bounds()
	x0, y0 := int(math.Floor(x)), int(math.Floor(y))
	fx, fy := x-float64(x0), y-float64(y0)
	var acc [4]float64
	for j := range 2 {
		for i := range 2 {
			px, py := x0+i, y0+j
			if px < 0 || py < 0 || px >= b.Dx() || py >= b.Dy() {
				continue
			}
			wgt := (1 - math.Abs(float64(i)-fx)) * (1 - math.Abs(float64(j)-fy))
			o := img.PixOffset(b.Min.X+px, b.Min.Y+py)
			for k := range 4 {
				acc[k] += wgt * float64(img.Pix[o+k])
			}
		}
	}
	for k := range 4 {
		out[k] = uint8(math.Min(255, acc[k]+0.5))
	}
}

// rotate90s turns img clockwise by deg, a multiple of 90.
func rotate90s(img *image.RGBA, deg int) *image.RGBA {
	if deg == 0 {
		return img
	}
	b := img.Bounds()
	w, h := b.Dx(), b.Dy()
	size := image.Pt(h, w)
	if deg == 180 {
		size = image.Pt(w, h)
	}
	dst := image.NewRGBA(image.Rectangle{Max: size})
	for y := range h {
		for x := range w {
			var dx, dy int
			switch deg {
			case 90:
				dx, dy = h-1-y, x
			case 180:
				dx, dy = w-1-x, h-1-y
			default: // 270
				dx, dy = y, w-1-x
			}
			s := img.PixOffset(b.Min.X+x, b.Min.Y+y)
			copy(dst.Pix[dst.PixOffset(dx, dy):dst.PixOffset(dx, dy)+4], img.Pix[s:s+4])
		}
	}
	return dst
}

// encodeIIIF encodes img at quality (default and color keep the colors,
// gray keeps the luma, bitonal thresholds it at half) in format.
func encodeIIIF(img *image.RGBA, quality, format string, jpegQuality int) ([]byte, error) {
	var pix image.Image = img
	switch quality {
	case "gray":
		pix = gray(img, false)
	case "bitonal":
		pix = gray(img, true)
	}
	if format == "jpg" {
		if g, ok := pix.(*image.Gray); ok {
			return encodeJPEGGray(g, jpegQuality)
		}
		return encodeJPEG(img, jpegQuality)
	}
	var buf bytes.Buffer
	enc := png.Encoder{CompressionLevel: png.BestSpeed}
	if err := enc.Encode(&buf, pix); err != nil {
		return nil, fmt.Errorf("images: encoding a PNG: %w", err)
	}
	return buf.Bytes(), nil
}

// gray is img's luma (Rec. 601, over white where transparent), or with
// bitonal, black below half and white from half on.
func gray(img *image.RGBA, bitonal bool) *image.Gray {
	if !img.Opaque() {
		img = overWhite(img)
	}
	b := img.Bounds()
	dst := image.NewGray(image.Rectangle{Max: b.Size()})
	for y := range b.Dy() {
		src := img.Pix[img.PixOffset(b.Min.X, b.Min.Y+y):]
		d := dst.Pix[y*dst.Stride:]
		for x := range b.Dx() {
			r, g, bl := uint32(src[4*x]), uint32(src[4*x+1]), uint32(src[4*x+2])
			l := (19595*r + 38470*g + 7471*bl + 1<<15) >> 16
			if bitonal {
				l = 255 * (l >> 7)
			}
			d[x] = uint8(l)
		}
	}
	return dst
}

// encodeJPEGGray encodes a one-channel JPEG.
func encodeJPEGGray(img *image.Gray, quality int) ([]byte, error) {
	var buf bytes.Buffer
	if err := jpeg.Encode(&buf, img, &jpeg.Options{Quality: quality}); err != nil {
		return nil, fmt.Errorf("images: encoding a gray JPEG: %w", err)
	}
	return buf.Bytes(), nil
}
