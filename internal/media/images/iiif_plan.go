package images

import (
	"errors"
	"fmt"
	"image"
	"runtime"
	"slices"
)

// ErrTooMuchWork reports an IIIF request whose derivation would decode
// more pixels than IIIFOptions.MaxDecodePixels (413).
var ErrTooMuchWork = errors.New("images: IIIF request needs more work than this server allows")

// Defaults of IIIFOptions.
const (
	DefaultIIIFMaxOutputPixels = 16 << 20 // 16 Mi pixels, 4096 x 4096
	DefaultIIIFMaxOutputSide   = 16384
	DefaultIIIFMaxDecodePixels = 64 << 20
	DefaultIIIFTileSize        = 512
)

// IIIFOptions bound the work of IIIF image requests. Zero and negative
// fields take the defaults of EnsureDefaults.
type IIIFOptions struct {
	// MaxOutputPixels is info.json's maxArea: the largest response, in
	// pixels. Default 16 Mi (4096 x 4096).
	MaxOutputPixels int64
	// MaxOutputSide is info.json's maxWidth and maxHeight, in pixels.
	// Default 16384; at most 65535 (JPEG's limit).
	MaxOutputSide int
	// MaxDecodePixels bounds the stored variant a response may be derived
	// from, in pixels: a request that would decode a larger one (an
	// upscaled or full-resolution request of a huge original) is answered
	// 413. Default 64 Mi pixels (about 256 MiB of RGBA).
	MaxDecodePixels int64
	// MaxConcurrent bounds the derivations running at once (each decodes
	// one variant); the others wait. Default GOMAXPROCS.
	MaxConcurrent int
	// TileSize is the tile width and height info.json declares. Default
	// 512.
	TileSize int
	// Quality is the JPEG quality of derived responses. Default
	// DefaultQuality.
	Quality int
}

// EnsureDefaults fills zero and negative fields with defaults and returns
// o.
func (o *IIIFOptions) EnsureDefaults() *IIIFOptions {
	positive(&o.MaxOutputPixels, DefaultIIIFMaxOutputPixels)
	positive(&o.MaxOutputSide, DefaultIIIFMaxOutputSide)
	positive(&o.MaxDecodePixels, DefaultIIIFMaxDecodePixels)
	positive(&o.MaxConcurrent, runtime.GOMAXPROCS(0))
	positive(&o.TileSize, DefaultIIIFTileSize)
	positive(&o.Quality, DefaultQuality)
	o.Quality = min(o.Quality, 100)
	o.MaxOutputSide = min(o.MaxOutputSide, maxSide)
	return o
}

// positive sets *p to def unless it is positive.
func positive[T int | int64](p *T, def T) {
	if *p <= 0 {
		*p = def
	}
}

// limits are the output limits info.json declares.
func (o *IIIFOptions) limits() OutputLimits {
	return OutputLimits{MaxWidth: o.MaxOutputSide, MaxHeight: o.MaxOutputSide, MaxArea: o.MaxOutputPixels}
}

// An IIIFPlan is how one IIIF image response is derived: which stored
// variant is decoded, which of its pixels are cropped, and the size they
// are scaled to before rotation.
type IIIFPlan struct {
	// Region is the requested region in the full image's pixels.
	Region image.Rectangle
	// Size is the scaled region's size, before rotation.
	Size image.Point
	// Variant is the stored variant decoded.
	Variant Variant
	// Crop is Region in Variant's pixels.
	Crop image.Rectangle
	// Canonical is the request's canonical form,
	// "region/size/rotation/quality.format" (IIIF 3.0 §4.7).
	Canonical string
	req       IIIFRequest
}

// PlanIIIF resolves q against m: the region and size in pixels, and the
// smallest stored variant whose crop of the region has at least the
// requested pixels (the original only when nothing smaller does). A
// request that needs a variant above MaxDecodePixels is ErrTooMuchWork,
// except max (and ^max), which is then the most the largest decodable
// variant holds: the largest size this server serves.
func PlanIIIF(m *Meta, q IIIFRequest, o *IIIFOptions) (IIIFPlan, error) {
	reg, err := q.Region.Resolve(m.Width, m.Height)
	if err != nil {
		return IIIFPlan{}, err
	}
	size, err := q.Size.ResolveLimited(reg.Dx(), reg.Dy(), o.limits())
	if err != nil {
		return IIIFPlan{}, err
	}
	v, ok := selectSource(iiifCandidates(m), m, reg, size)
	if !ok {
		return IIIFPlan{}, fmt.Errorf("%w: %s has no decodable variant", ErrNotFound, m.ID)
	}
	if !o.decodable(v) {
		d, ok := largestDecodable(m, o)
		if q.Size.Kind != SizeMax || !ok {
			return IIIFPlan{}, fmt.Errorf("%w: %s at %dx%d needs the %dx%d variant %q, more than %d pixels to decode",
				ErrTooMuchWork, reg, size.X, size.Y, v.Width, v.Height, v.Name, o.MaxDecodePixels)
		}
		size = maxIn(d, m, reg, size)
		v, _ = selectSource([]Variant{d}, m, reg, size)
	}
	p := IIIFPlan{Region: reg, Size: size, Variant: v, Crop: cropIn(v, m, reg), req: q}
	p.Canonical = canonical(m, p)
	return p, nil
}

// decodable reports whether v is within MaxDecodePixels.
func (o *IIIFOptions) decodable(v Variant) bool {
	return int64(v.Width)*int64(v.Height) <= o.MaxDecodePixels
}

// largestDecodable is m's largest variant within MaxDecodePixels.
func largestDecodable(m *Meta, o *IIIFOptions) (Variant, bool) {
	cands := iiifCandidates(m)
	for i := len(cands) - 1; i >= 0; i-- {
		if o.decodable(cands[i]) {
			return cands[i], true
		}
	}
	return Variant{}, false
}

// maxIn is size reduced to what reg holds in d's pixels, per axis as
// d's own size was rounded.
func maxIn(d Variant, m *Meta, reg image.Rectangle, size image.Point) image.Point {
	x := int(int64(reg.Dx()) * int64(d.Width) / int64(m.Width))
	y := int(int64(reg.Dy()) * int64(d.Height) / int64(m.Height))
	return image.Pt(max(1, min(size.X, x)), max(1, min(size.Y, y)))
}

// iiifCandidates are the stored variants a response may be derived from,
// one per size (the first listed: a JPEG rung before the original),
// smallest first.
func iiifCandidates(m *Meta) []Variant {
	var out []Variant
	for _, v := range m.Variants {
		dup := slices.ContainsFunc(out, func(o Variant) bool { return o.Width == v.Width && o.Height == v.Height })
		if !dup && v.Width > 0 && v.Height > 0 {
			out = append(out, v)
		}
	}
	slices.SortStableFunc(out, func(a, b Variant) int { return a.Width*a.Height - b.Width*b.Height })
	return out
}

// selectSource returns the smallest candidate in which reg (in the full
// image's pixels) spans at least size, or the largest candidate when none
// does (an upscaled request). ok is false when there is no candidate.
func selectSource(cands []Variant, m *Meta, reg image.Rectangle, size image.Point) (Variant, bool) {
	if len(cands) == 0 {
		return Variant{}, false
	}
	for _, c := range cands { // smallest first
		// reg.Dx() * c.Width / m.Width >= size.X, in integers.
		if int64(reg.Dx())*int64(c.Width) >= int64(size.X)*int64(m.Width) &&
			int64(reg.Dy())*int64(c.Height) >= int64(size.Y)*int64(m.Height) {
			return c, true
		}
	}
	return cands[len(cands)-1], true
}

// cropIn is reg, in the full image's pixels, in v's pixels: rounded
// outwards, within v, never empty.
func cropIn(v Variant, m *Meta, reg image.Rectangle) image.Rectangle {
	lo := func(p, vs, ms int) int { return int(int64(p) * int64(vs) / int64(ms)) }
	hi := func(p, vs, ms int) int { return int((int64(p)*int64(vs) + int64(ms) - 1) / int64(ms)) }
	r := image.Rect(lo(reg.Min.X, v.Width, m.Width), lo(reg.Min.Y, v.Height, m.Height),
		hi(reg.Max.X, v.Width, m.Width), hi(reg.Max.Y, v.Height, m.Height))
	r = r.Intersect(image.Rect(0, 0, v.Width, v.Height))
	if r.Dx() < 1 {
		r.Max.X = min(r.Min.X+1, v.Width)
		r.Min.X = r.Max.X - 1
	}
	if r.Dy() < 1 {
		r.Max.Y = min(r.Min.Y+1, v.Height)
		r.Min.Y = r.Max.Y - 1
	}
	return r
}

// canonical is p's canonical request, "region/size/rotation/quality.format":
// region full or x,y,w,h; size max (the whole region, unscaled), w,h, or
// ^w,h when upscaled; quality default for color (the same pixels).
func canonical(m *Meta, p IIIFPlan) string {
	reg := "full"
	if p.Region != image.Rect(0, 0, m.Width, m.Height) {
		reg = fmt.Sprintf("%d,%d,%d,%d", p.Region.Min.X, p.Region.Min.Y, p.Region.Dx(), p.Region.Dy())
	}
	size := fmt.Sprintf("%d,%d", p.Size.X, p.Size.Y)
	switch {
	case p.Size == p.Region.Size():
		size = "max"
	case p.Size.X > p.Region.Dx() || p.Size.Y > p.Region.Dy():
		size = "^" + size
	}
	quality := p.req.Quality
	if quality == "color" {
		quality = "default"
	}
	return reg + "/" + size + "/" + p.req.Rotation.String() + "/" + quality + "." + p.req.Format
}
