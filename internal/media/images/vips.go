//go:build vips

package images

// A build with -tags vips adds the "libvips" resampler (Options.Resampler,
// strata serve --images-resampler libvips): libvips through govips, which
// needs cgo and libvips-dev (apt-get install -y libvips-dev). The default
// build stays pure Go so that `go run ./cmd/strata serve` works on a fresh
// machine.

import (
	"fmt"
	"image"
	"sync"

	"github.com/davidbyttow/govips/v2/vips"
)

func init() { renderers["libvips"] = VipsRenderer{} }

var vipsOnce sync.Once

// VipsRenderer renders with libvips' thumbnail operation: each size is
// decoded with JPEG shrink-on-load, scaled, EXIF-rotated and encoded in C.
type VipsRenderer struct{}

// Render implements Renderer.
func (VipsRenderer) Render(body []byte, src Source, sizes []image.Point, quality int) ([][]byte, error) {
	vipsOnce.Do(func() {
		vips.LoggingSettings(nil, vips.LogLevelError)
		vips.Startup(&vips.Config{ConcurrencyLevel: 1})
	})
	out := make([][]byte, len(sizes))
	for i, s := range sizes {
		b, err := vipsThumbnail(body, s, quality)
		if err != nil {
			return nil, err
		}
		out[i] = b
	}
	return out, nil
}

func vipsThumbnail(body []byte, s image.Point, quality int) ([]byte, error) {
	img, err := vips.NewThumbnailWithSizeFromBuffer(body, s.X, s.Y, vips.InterestingNone, vips.SizeDown)
	if err != nil {
		return nil, fmt.Errorf("%w: libvips: %v", ErrCorrupt, err)
	}
	defer img.Close()
	ep := vips.NewJpegExportParams()
	ep.Quality, ep.StripMetadata = quality, true
	b, _, err := img.ExportJpeg(ep)
	if err != nil {
		return nil, fmt.Errorf("images: libvips encode: %w", err)
	}
	return b, nil
}
