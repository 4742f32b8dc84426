package images

import (
	"bytes"
	"errors"
	"fmt"
	"image"
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

// Probe reads an original's header and checks it against the limits
// without decoding the pixels: the type must be JPEG, PNG or WebP and the
// declared dimensions at most maxPixels, so that a small file declaring a
// huge image (an image bomb) is refused before it allocates anything.
func Probe(body []byte, maxPixels int64) (Source, error) {
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
	case int64(cfg.Width)*int64(cfg.Height) > maxPixels:
		return Source{}, fmt.Errorf("%w: %dx%d is more than %d pixels", ErrTooManyPixels, cfg.Width, cfg.Height, maxPixels)
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
