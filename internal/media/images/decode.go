package images

import (
	"bytes"
	"errors"
	"fmt"
	"image"
	"image/color"
	_ "image/jpeg" // registers the JPEG decoder
	_ "image/png"  // registers the PNG decoder

	_ "golang.org/x/image/webp" // registers the WebP decoder
)

// Source describes an uploaded original, from its header alone.
type Source struct {
	Format string // "jpeg", "png" or "webp"
	// Width and Height are as displayed, after the EXIF orientation.
	Width, Height int
	// Orientation is the JPEG's EXIF orientation, 1 (none) to 8.
	Orientation int
	Bytes       int64
}

// ContentType is the MIME type of the original's format.
func (s Source) ContentType() string { return "image/" + s.Format }

// Limits bound what an upload may make the server hold.
type Limits struct {
	// MaxPixels bounds width x height.
	MaxPixels int64
	// MaxDecodeBytes bounds the RAM the decode and the rendering of the
	// variants take, bytes: DecodeCost.
	MaxDecodeBytes int64
}

// Probe reads an original's header and checks it against the limits
// without decoding the pixels: the type must be JPEG, PNG or WebP, the
// declared dimensions at most MaxPixels and the RAM their decode takes
// (DecodeCost: bytes per pixel count, a 16-bit PNG takes twice an 8-bit
// one) at most MaxDecodeBytes, so that a small file declaring a huge
// image (an image bomb) is refused before it allocates anything.
func Probe(body []byte, lim Limits) (Source, error) {
	cfg, format, err := image.DecodeConfig(bytes.NewReader(body))
	switch {
	case errors.Is(err, image.ErrFormat):
		return Source{}, ErrUnsupported
	case err != nil:
		return Source{}, fmt.Errorf("%w: %v", ErrCorrupt, err)
	case format != "jpeg" && format != "png" && format != "webp":
		return Source{}, fmt.Errorf("%w: %s", ErrUnsupported, format)
	case cfg.Width < 1 || cfg.Height < 1:
		return Source{}, fmt.Errorf("%w: %dx%d pixels", ErrCorrupt, cfg.Width, cfg.Height)
	case int64(cfg.Width)*int64(cfg.Height) > lim.MaxPixels:
		return Source{}, fmt.Errorf("%w: %dx%d is more than %d pixels", ErrTooManyPixels, cfg.Width, cfg.Height, lim.MaxPixels)
	case DecodeCost(cfg) > lim.MaxDecodeBytes:
		return Source{}, fmt.Errorf("%w: %dx%d at %d bytes a pixel takes %d bytes to decode, more than %d",
			ErrTooManyPixels, cfg.Width, cfg.Height, bytesPerPixel(cfg.ColorModel), DecodeCost(cfg), lim.MaxDecodeBytes)
	}
	src := Source{Format: format, Width: cfg.Width, Height: cfg.Height, Orientation: 1, Bytes: int64(len(body))}
	if format == "jpeg" {
		src.Orientation = exifOrientation(body)
	}
	if src.Orientation >= 5 { // transposed: displayed sideways
		src.Width, src.Height = src.Height, src.Width
	}
	return src, nil
}

// DecodeCost is the RAM, in bytes, that decoding an image of cfg and
// rendering its variants take at most (GoRenderer): the decoded pixels at
// their model's bytes per pixel, their RGBA copy (4 bytes a pixel) and
// the halvings down from it (4/3 bytes a pixel).
func DecodeCost(cfg image.Config) int64 {
	px := int64(cfg.Width) * int64(cfg.Height)
	return px*int64(bytesPerPixel(cfg.ColorModel)) + px*4 + px*4/3
}

// bytesPerPixel is what a decoder allocates a pixel for images of model
// m: 8 for 16-bit colour, 3 for YCbCr (4:4:4 at worst), 8 for a model
// it does not know.
func bytesPerPixel(m color.Model) int {
	switch m {
	case color.GrayModel, color.AlphaModel:
		return 1
	case color.Gray16Model, color.Alpha16Model:
		return 2
	case color.YCbCrModel:
		return 3
	case color.RGBAModel, color.NRGBAModel, color.CMYKModel, color.NYCbCrAModel:
		return 4
	case color.RGBA64Model, color.NRGBA64Model:
		return 8
	}
	if _, ok := m.(color.Palette); ok {
		return 1
	}
	return 8
}

// decode decodes the pixels of an original that Probe accepted. A decoder
// that panics on hostile input is reported as a corrupt image.
func decode(body []byte) (img image.Image, err error) {
	defer func() {
		if r := recover(); r != nil {
			img, err = nil, fmt.Errorf("%w: decoder panic: %v", ErrCorrupt, r)
		}
	}()
	img, _, err = image.Decode(bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrCorrupt, err)
	}
	return img, nil
}
