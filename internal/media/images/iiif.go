package images

import (
	"errors"
	"fmt"
	"image"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/strata-media/strata/internal/httpapi"
)

// IIIF Image API 3.0, level 0 plus the size forms a level-0 client asks
// for (https://iiif.io/api/image/3.0/): region "full", rotation "0",
// quality "default", format "jpg", and sizes "max", "w,", ",h", "pct:n",
// "w,h" and "!w,h", without upscaling ("^"). The server stores a fixed
// ladder, so it answers a size with the nearest stored variant at or above
// it (the smallest one at least as wide and as tall as asked), and when
// the request exceeds every variant, with the original if it is a JPEG,
// else the largest variant: the client may get more pixels than it asked
// for, never fewer unless nothing larger exists. info.json's sizes list
// exactly what is stored, so a client that sticks to them gets exact sizes.

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
}

// ParseSize parses an IIIF 3.0 size parameter. Upscaling ("^...") is not
// supported.
func ParseSize(s string) (Size, error) {
	switch {
	case s == "max":
		return Size{Kind: SizeMax}, nil
	case strings.HasPrefix(s, "^"):
		return Size{}, fmt.Errorf("%w: size %q: upscaling is not supported", ErrBadIIIF, httpapi.ClipID(s))
	case strings.HasPrefix(s, "pct:"):
		return parsePct(s)
	case strings.HasPrefix(s, "!"):
		z, err := parseWH(s[1:], true)
		z.Kind = SizeFit
		return z, err
	}
	return parseWH(s, false)
}

func parsePct(s string) (Size, error) {
	num := s[len("pct:"):]
	n, err := strconv.ParseFloat(num, 64)
	if err != nil || !(n > 0 && n <= 100) || strings.Trim(num, "0123456789.") != "" {
		return Size{}, fmt.Errorf("%w: size %q: want pct:n with 0 < n <= 100", ErrBadIIIF, httpapi.ClipID(s))
	}
	return Size{Kind: SizePct, Pct: n}, nil
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
	return Size{}, fmt.Errorf("%w: size %q: want max, w,, ,h, pct:n, w,h or !w,h", ErrBadIIIF, httpapi.ClipID(s))
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
	switch z.Kind {
	case SizeWidth:
		return fmt.Sprintf("%d,", z.W)
	case SizeHeight:
		return fmt.Sprintf(",%d", z.H)
	case SizePct:
		return "pct:" + strconv.FormatFloat(z.Pct, 'f', -1, 64)
	case SizeExact:
		return fmt.Sprintf("%d,%d", z.W, z.H)
	case SizeFit:
		return fmt.Sprintf("!%d,%d", z.W, z.H)
	}
	return "max"
}

// Resolve returns the pixel size z asks of a full image of w x h. Without
// upscaling, asking for more than w x h is an error (IIIF 3.0 §4.2).
func (z Size) Resolve(w, h int) (image.Point, error) {
	var p image.Point
	switch z.Kind {
	case SizeMax:
		p = image.Pt(w, h)
	case SizeWidth:
		p = image.Pt(z.W, scaled(h, z.W, w))
	case SizeHeight:
		p = image.Pt(scaled(w, z.H, h), z.H)
	case SizePct:
		p = image.Pt(max(1, int(math.Round(float64(w)*z.Pct/100))), max(1, int(math.Round(float64(h)*z.Pct/100))))
	case SizeExact:
		p = image.Pt(z.W, z.H)
	case SizeFit:
		p = fit(w, h, image.Pt(z.W, z.H))
	}
	if p.X > w || p.Y > h {
		return p, fmt.Errorf("%w: size %s is %dx%d, larger than the %dx%d image (no upscaling)", ErrBadIIIF, z, p.X, p.Y, w, h)
	}
	return p, nil
}

// scaled is n * num / den, rounded, at least 1.
func scaled(n, num, den int) int {
	return max(1, int(math.Round(float64(n)*float64(num)/float64(den))))
}

// iiifCandidates are the stored JPEGs an IIIF image request may be served
// from, one per size, smallest first.
func iiifCandidates(m *Meta) []Variant {
	var out []Variant
	for _, v := range m.Variants {
		dup := slices.ContainsFunc(out, func(o Variant) bool { return o.Width == v.Width && o.Height == v.Height })
		if v.ContentType == "image/jpeg" && !dup {
			out = append(out, v)
		}
	}
	slices.SortStableFunc(out, func(a, b Variant) int { return a.Width*a.Height - b.Width*b.Height })
	return out
}

// SelectVariant returns the smallest candidate at least want.X wide and
// want.Y tall, or the largest candidate when none is. ok is false when
// there is no candidate.
func SelectVariant(cands []Variant, want image.Point) (v Variant, ok bool) {
	if len(cands) == 0 {
		return Variant{}, false
	}
	best := -1
	for i, c := range cands {
		covers := c.Width >= want.X && c.Height >= want.Y
		if covers && (best < 0 || area(image.Pt(c.Width, c.Height)) < area(image.Pt(cands[best].Width, cands[best].Height))) {
			best = i
		}
	}
	if best < 0 {
		return slices.MaxFunc(cands, func(a, b Variant) int { return a.Width*a.Height - b.Width*b.Height }), true
	}
	return cands[best], true
}

// infoJSON is an IIIF 3.0 image information document, level 0.
type infoJSON struct {
	Context  string     `json:"@context"`
	ID       string     `json:"id"`
	Type     string     `json:"type"`
	Protocol string     `json:"protocol"`
	Profile  string     `json:"profile"`
	Width    int        `json:"width"`
	Height   int        `json:"height"`
	Sizes    []iiifSize `json:"sizes"`
}

type iiifSize struct {
	Width  int `json:"width"`
	Height int `json:"height"`
}

// newInfo describes m at base URI id.
func newInfo(id string, m *Meta) infoJSON {
	info := infoJSON{
		Context: "http://iiif.io/api/image/3/context.json", ID: id, Type: "ImageService3",
		Protocol: "http://iiif.io/api/image", Profile: "level0", Width: m.Width, Height: m.Height,
		Sizes: []iiifSize{},
	}
	for _, v := range iiifCandidates(m) {
		info.Sizes = append(info.Sizes, iiifSize{v.Width, v.Height})
	}
	return info
}
