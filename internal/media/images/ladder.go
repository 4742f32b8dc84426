package images

import (
	"fmt"
	"image"
	"math"
	"strconv"
	"strings"
)

// OriginalName is the reserved variant name of the uploaded bytes.
const OriginalName = "original"

// A Spec is one rung of the variant ladder: the image scaled, aspect ratio
// kept, to fit inside Width x Height pixels, never enlarged.
type Spec struct {
	Name          string
	Width, Height int
}

// DefaultLadder is MRIS §2.3's resolutions plus a medium: thumbnail
// 100x100, small 600x800, medium 1280 on the longest side, large
// 2048x3072 (Haystack's four sizes).
func DefaultLadder() []Spec {
	return []Spec{
		{"thumbnail", 100, 100},
		{"small", 600, 800},
		{"medium", 1280, 1280},
		{"large", 2048, 3072},
	}
}

// String formats s as ParseLadder reads it.
func (s Spec) String() string {
	if s.Width == s.Height {
		return fmt.Sprintf("%s=%d", s.Name, s.Width)
	}
	return fmt.Sprintf("%s=%dx%d", s.Name, s.Width, s.Height)
}

// FormatLadder formats a ladder as ParseLadder reads it.
func FormatLadder(l []Spec) string {
	parts := make([]string, len(l))
	for i, s := range l {
		parts[i] = s.String()
	}
	return strings.Join(parts, ",")
}

// ParseLadder parses "name=WxH,name=N,...": each variant fits inside W x H
// pixels, or N x N (N on the longest side).
func ParseLadder(s string) ([]Spec, error) {
	var out []Spec
	for part := range strings.SplitSeq(s, ",") {
		sp, err := parseSpec(strings.TrimSpace(part))
		if err != nil {
			return nil, err
		}
		out = append(out, sp)
	}
	return out, validateLadder(out)
}

func parseSpec(s string) (Spec, error) {
	name, box, ok := strings.Cut(s, "=")
	if !ok {
		return Spec{}, fmt.Errorf("%w: variant %q is not name=WxH or name=N", ErrOptions, s)
	}
	ws, hs, two := strings.Cut(box, "x")
	if !two {
		hs = ws
	}
	w, err1 := strconv.Atoi(ws)
	h, err2 := strconv.Atoi(hs)
	if err1 != nil || err2 != nil {
		return Spec{}, fmt.Errorf("%w: variant %q: bad size %q", ErrOptions, name, box)
	}
	return Spec{Name: name, Width: w, Height: h}, nil
}

// maxSide bounds a ladder box and an IIIF size: JPEG's limit.
const maxSide = 65535

func validateLadder(l []Spec) error {
	seen := map[string]bool{}
	for _, s := range l {
		if err := validID(s.Name); err != nil {
			return fmt.Errorf("%w: variant name: %w", ErrOptions, err)
		}
		if s.Name == OriginalName || seen[s.Name] {
			return fmt.Errorf("%w: variant name %q is reserved or repeated", ErrOptions, s.Name)
		}
		if s.Width < 1 || s.Height < 1 || s.Width > maxSide || s.Height > maxSide {
			return fmt.Errorf("%w: variant %q: size %dx%d out of range", ErrOptions, s.Name, s.Width, s.Height)
		}
		seen[s.Name] = true
	}
	return nil
}

// fit returns the size of a w x h image scaled to fit inside box, aspect
// ratio kept, never enlarged, at least 1x1.
func fit(w, h int, box image.Point) image.Point {
	scale := math.Min(1, math.Min(float64(box.X)/float64(w), float64(box.Y)/float64(h)))
	if scale == 1 {
		return image.Pt(w, h)
	}
	return image.Pt(max(1, int(math.Round(float64(w)*scale))), max(1, int(math.Round(float64(h)*scale))))
}
