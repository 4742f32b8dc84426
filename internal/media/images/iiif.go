package images

import (
	"errors"
	"fmt"
	"image"
	"math"
	"strconv"
	"strings"

	"github.com/strata-media/strata/internal/httpapi"
)

// IIIF Image API 3.0 at compliance level 2 (https://iiif.io/api/image/3.0/):
// region full, square, x,y,w,h and pct:x,y,w,h; size max, w,, ,h, w,h,
// !w,h and pct:n, each with "^" for upscaling within MaxWidth, MaxHeight
// and MaxArea; rotation by any angle, with "!" mirroring;
// quality default, color, gray and bitonal; format jpg and png. This file
// parses the parameters and resolves them against an image's size;
// iiif_plan.go picks the stored variant a response is derived from and
// iiif_derive.go makes it.

// ErrBadIIIF reports an IIIF request this server cannot parse or serve.
var ErrBadIIIF = errors.New("images: bad IIIF request")

// SizeKind is the form of an IIIF size parameter.
type SizeKind uint8

// The size forms.
const (
	SizeMax    SizeKind = iota // "max"
	SizeWidth                  // "w,"
	SizeHeight                 // ",h"
	SizePct                    // "pct:n"
	SizeExact                  // "w,h"
	SizeFit                    // "!w,h"
)

// A Size is a parsed IIIF size parameter.
type Size struct {
	Kind SizeKind
	W, H int
	Pct  float64
	// Up is the "^" prefix: the result may be larger than the region.
	Up bool
}

// maxPct bounds an upscaling percentage: at most 100 times the region
// (the output limits bound it further).
const maxPct = 10000

// ParseSize parses an IIIF 3.0 size parameter.
func ParseSize(s string) (Size, error) {
	up := strings.HasPrefix(s, "^")
	z, err := parseSize(strings.TrimPrefix(s, "^"), up)
	if err != nil {
		return Size{}, fmt.Errorf("%w: size %q: want [^]max, [^]w,, [^],h, [^]pct:n, [^]w,h or [^]!w,h", ErrBadIIIF, httpapi.ClipID(s))
	}
	z.Up = up
	return z, nil
}

func parseSize(s string, up bool) (Size, error) {
	switch {
	case s == "max":
		return Size{Kind: SizeMax}, nil
	case strings.HasPrefix(s, "pct:"):
		return parsePct(s[len("pct:"):], up)
	case strings.HasPrefix(s, "!"):
		z, err := parseWH(s[1:], true)
		z.Kind = SizeFit
		return z, err
	}
	return parseWH(s, false)
}

func parsePct(num string, up bool) (Size, error) {
	n, err := decimal(num)
	limit := 100.0
	if up {
		limit = maxPct
	}
	if err != nil || !(n > 0 && n <= limit) {
		return Size{}, ErrBadIIIF
	}
	return Size{Kind: SizePct, Pct: n}, nil
}

// decimal parses digits with at most one '.', at most 12 bytes: no signs,
// exponents, NaN or infinities.
func decimal(s string) (float64, error) {
	if s == "" || len(s) > 12 || strings.Trim(s, "0123456789.") != "" || strings.Count(s, ".") > 1 || s == "." {
		return 0, ErrBadIIIF
	}
	return strconv.ParseFloat(s, 64)
}

// parseWH parses "w,", ",h" or "w,h" (both required when both is set).
func parseWH(s string, both bool) (Size, error) {
	ws, hs, ok := strings.Cut(s, ",")
	w, werr := dimension(ws)
	h, herr := dimension(hs)
	switch {
	case !ok:
	case werr == nil && herr == nil:
		return Size{Kind: SizeExact, W: w, H: h}, nil
	case both:
	case werr == nil && hs == "":
		return Size{Kind: SizeWidth, W: w}, nil
	case herr == nil && ws == "":
		return Size{Kind: SizeHeight, H: h}, nil
	}
	return Size{}, ErrBadIIIF
}

// dimension parses a positive pixel count of at most maxSide, digits only.
func dimension(s string) (int, error) {
	if s == "" || len(s) > 5 || strings.Trim(s, "0123456789") != "" {
		return 0, ErrBadIIIF
	}
	n, _ := strconv.Atoi(s)
	if n < 1 || n > maxSide {
		return 0, ErrBadIIIF
	}
	return n, nil
}

// String formats z canonically (ParseSize(z.String()) == z).
func (z Size) String() string {
	up := ""
	if z.Up {
		up = "^"
	}
	switch z.Kind {
	case SizeWidth:
		return fmt.Sprintf("%s%d,", up, z.W)
	case SizeHeight:
		return fmt.Sprintf("%s,%d", up, z.H)
	case SizePct:
		return up + "pct:" + strconv.FormatFloat(z.Pct, 'f', -1, 64)
	case SizeExact:
		return fmt.Sprintf("%s%d,%d", up, z.W, z.H)
	case SizeFit:
		return fmt.Sprintf("%s!%d,%d", up, z.W, z.H)
	}
	return up + "max"
}

// OutputLimits bound the size of an IIIF response, as info.json declares
// them (maxWidth, maxHeight, maxArea). Zero fields do not limit.
type OutputLimits struct {
	MaxWidth, MaxHeight int
	MaxArea             int64
}

// Resolve returns the pixel size z asks of a region of w x h, with no
// output limits.
func (z Size) Resolve(w, h int) (image.Point, error) {
	return z.ResolveLimited(w, h, OutputLimits{})
}

// ResolveLimited returns the pixel size z asks of a region of w x h.
// Without "^", more than w x h is an error (IIIF 3.0 §4.2); beyond lim it
// is an error too, except for max, which is scaled down to fit (and for
// ^max, up to the limits).
func (z Size) ResolveLimited(w, h int, lim OutputLimits) (image.Point, error) {
	var p image.Point
	switch z.Kind {
	case SizeMax:
		p = image.Pt(w, h)
		if z.Up || !lim.fits(p) {
			p = lim.largest(w, h, z.Up)
		}
	case SizeWidth:
		p = image.Pt(z.W, scaled(h, z.W, w))
	case SizeHeight:
		p = image.Pt(scaled(w, z.H, h), z.H)
	case SizePct:
		p = image.Pt(max(1, int(math.Round(float64(w)*z.Pct/100))), max(1, int(math.Round(float64(h)*z.Pct/100))))
	case SizeExact:
		p = image.Pt(z.W, z.H)
	case SizeFit:
		// The best fit in the box, enlarged if need be: without "^", a
		// box whose fit is larger than the region is an error, as the
		// IIIF validator (size_noup: !2000,3000 of a 1000x1000 image)
		// and Cantaloupe read §4.2, not the region at its own size.
		p = fitBox(w, h, image.Pt(z.W, z.H))
	}
	if !z.Up && (p.X > w || p.Y > h) {
		return p, fmt.Errorf("%w: size %s is %dx%d, larger than the %dx%d region (upscaling needs ^)", ErrBadIIIF, z, p.X, p.Y, w, h)
	}
	if p.X > maxSide || p.Y > maxSide || !lim.fits(p) {
		return p, fmt.Errorf("%w: size %s is %dx%d, beyond this server's maxWidth %d, maxHeight %d, maxArea %d",
			ErrBadIIIF, z, p.X, p.Y, lim.MaxWidth, lim.MaxHeight, lim.MaxArea)
	}
	return p, nil
}

// fits reports whether p is within the limits.
func (lim OutputLimits) fits(p image.Point) bool {
	return (lim.MaxWidth == 0 || p.X <= lim.MaxWidth) && (lim.MaxHeight == 0 || p.Y <= lim.MaxHeight) &&
		(lim.MaxArea == 0 || int64(p.X)*int64(p.Y) <= lim.MaxArea)
}

// largest is the largest size of w x h's aspect ratio within the limits,
// never above w x h unless up.
func (lim OutputLimits) largest(w, h int, up bool) image.Point {
	scale := math.Inf(1)
	if !up {
		scale = 1
	}
	if lim.MaxWidth > 0 {
		scale = math.Min(scale, float64(lim.MaxWidth)/float64(w))
	}
	if lim.MaxHeight > 0 {
		scale = math.Min(scale, float64(lim.MaxHeight)/float64(h))
	}
	if lim.MaxArea > 0 {
		scale = math.Min(scale, math.Sqrt(float64(lim.MaxArea)/(float64(w)*float64(h))))
	}
	scale = math.Min(scale, float64(maxSide)/float64(max(w, h)))
	if scale == 1 {
		return image.Pt(w, h)
	}
	// Floor, not round: the result must stay within the limits.
	return image.Pt(max(1, int(float64(w)*scale)), max(1, int(float64(h)*scale)))
}

// fitBox is w x h scaled to fit inside box, aspect ratio kept, enlarged
// if need be.
func fitBox(w, h int, box image.Point) image.Point {
	scale := math.Min(float64(box.X)/float64(w), float64(box.Y)/float64(h))
	return image.Pt(max(1, min(box.X, int(math.Round(float64(w)*scale)))), max(1, min(box.Y, int(math.Round(float64(h)*scale)))))
}

// scaled is n * num / den, rounded, at least 1.
func scaled(n, num, den int) int {
	return max(1, int(math.Round(float64(n)*float64(num)/float64(den))))
}

// RegionKind is the form of an IIIF region parameter.
type RegionKind uint8

// The region forms.
const (
	RegionFull   RegionKind = iota // "full"
	RegionSquare                   // "square"
	RegionPixels                   // "x,y,w,h"
	RegionPct                      // "pct:x,y,w,h"
)

// A Region is a parsed IIIF region parameter: X, Y, W, H are pixels or
// percentages of the full image.
type Region struct {
	Kind       RegionKind
	X, Y, W, H float64
}

// ParseRegion parses an IIIF 3.0 region parameter.
func ParseRegion(s string) (Region, error) {
	switch s {
	case "full":
		return Region{Kind: RegionFull}, nil
	case "square":
		return Region{Kind: RegionSquare}, nil
	}
	kind, list, num := RegionPixels, s, digitsOnly
	if rest, ok := strings.CutPrefix(s, "pct:"); ok {
		kind, list, num = RegionPct, rest, decimal
	}
	parts := strings.Split(list, ",")
	var v [4]float64
	bad := len(parts) != 4
	for i := 0; !bad && i < 4; i++ {
		var err error
		v[i], err = num(parts[i])
		bad = err != nil || (i >= 2 && v[i] <= 0) || (kind == RegionPct && v[i] > 100)
	}
	if bad {
		return Region{}, fmt.Errorf("%w: region %q: want full, square, x,y,w,h or pct:x,y,w,h", ErrBadIIIF, httpapi.ClipID(s))
	}
	return Region{Kind: kind, X: v[0], Y: v[1], W: v[2], H: v[3]}, nil
}

// digitsOnly parses a pixel coordinate: digits only, at most 9.
func digitsOnly(s string) (float64, error) {
	if s == "" || len(s) > 9 || strings.Trim(s, "0123456789") != "" {
		return 0, ErrBadIIIF
	}
	n, err := strconv.Atoi(s)
	return float64(n), err
}

// String formats g as it was requested (ParseRegion(g.String()) == g).
func (g Region) String() string {
	f := func(x float64) string { return strconv.FormatFloat(x, 'f', -1, 64) }
	switch g.Kind {
	case RegionSquare:
		return "square"
	case RegionPixels:
		return f(g.X) + "," + f(g.Y) + "," + f(g.W) + "," + f(g.H)
	case RegionPct:
		return "pct:" + f(g.X) + "," + f(g.Y) + "," + f(g.W) + "," + f(g.H)
	}
	return "full"
}

// Resolve returns the pixels g selects of a w x h image, cropped to the
// image; a region entirely outside it, or empty, is an error (IIIF 3.0
// §4.1).
func (g Region) Resolve(w, h int) (image.Rectangle, error) {
	full := image.Rect(0, 0, w, h)
	var r image.Rectangle
	switch g.Kind {
	case RegionFull:
		return full, nil
	case RegionSquare:
		side := min(w, h)
		x, y := (w-side)/2, (h-side)/2
		return image.Rect(x, y, x+side, y+side), nil
	case RegionPixels:
		r = image.Rect(int(g.X), int(g.Y), int(g.X+g.W), int(g.Y+g.H))
	case RegionPct:
		px := func(p float64, of int) int { return int(math.Round(p * float64(of) / 100)) }
		r = image.Rect(px(g.X, w), px(g.Y, h), px(g.X+g.W, w), px(g.Y+g.H, h))
	}
	r = r.Intersect(full)
	if r.Empty() {
		return r, fmt.Errorf("%w: region %s selects no pixel of the %dx%d image", ErrBadIIIF, g, w, h)
	}
	return r, nil
}

// A Rotation is a parsed IIIF rotation parameter: mirrored first, then
// turned clockwise by Degrees.
type Rotation struct {
	Mirror  bool
	Degrees float64 // [0, 360)
}

// ParseRotation parses an IIIF 3.0 rotation parameter: [!]n with n a
// decimal from 0 to 360 (360 is 0), any angle ("rotationArbitrary").
func ParseRotation(s string) (Rotation, error) {
	num, mirror := strings.CutPrefix(s, "!")
	n, err := decimal(num)
	if err != nil || n > 360 {
		return Rotation{}, fmt.Errorf("%w: rotation %q: want [!]n, n from 0 to 360", ErrBadIIIF, httpapi.ClipID(s))
	}
	if n == 360 {
		n = 0
	}
	return Rotation{Mirror: mirror, Degrees: n}, nil
}

// String formats o canonically.
func (o Rotation) String() string {
	n := strconv.FormatFloat(o.Degrees, 'f', -1, 64)
	if o.Mirror {
		return "!" + n
	}
	return n
}

// The qualities and formats this server serves.
var (
	iiifQualities = []string{"default", "color", "gray", "bitonal"}
	iiifFormats   = map[string]string{"jpg": "image/jpeg", "png": "image/png"}
)

// An IIIFRequest is the parsed parameters of an IIIF image request.
type IIIFRequest struct {
	Region   Region
	Size     Size
	Rotation Rotation
	Quality  string // default, color, gray or bitonal
	Format   string // jpg or png
}

// ParseIIIF parses the four path segments after an image request's
// identifier: region, size, rotation and quality.format.
func ParseIIIF(region, size, rotation, file string) (IIIFRequest, error) {
	var q IIIFRequest
	var err1, err2, err3 error
	q.Region, err1 = ParseRegion(region)
	q.Size, err2 = ParseSize(size)
	q.Rotation, err3 = ParseRotation(rotation)
	if err := errors.Join(err1, err2, err3); err != nil {
		return IIIFRequest{}, err
	}
	quality, format, ok := strings.Cut(file, ".")
	if !ok || !containsString(iiifQualities, quality) {
		return IIIFRequest{}, fmt.Errorf("%w: %q: want quality default, color, gray or bitonal, then .format", ErrBadIIIF, httpapi.ClipID(file))
	}
	if _, ok := iiifFormats[format]; !ok {
		return IIIFRequest{}, fmt.Errorf("%w: format %q: this server serves jpg and png", ErrBadIIIF, httpapi.ClipID(format))
	}
	q.Quality, q.Format = quality, format
	return q, nil
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
