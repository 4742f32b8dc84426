package plot

import (
	"math"
	"strconv"
	"strings"
	"unicode"
)

// siPrefixes are the compact suffixes of large numbers, largest first.
var siPrefixes = []struct {
	scale  float64
	suffix string
}{{1e12, "T"}, {1e9, "G"}, {1e6, "M"}, {1e3, "k"}}

// compact formats v with three significant digits and an SI suffix:
// 0.25, 42, 15k, 2M, 1.23G. Numbers from 1000 to 9999 are rounded to
// integers instead (1460); magnitudes below 0.001 or from 10^15 up use
// exponent notation (5e-5).
func compact(v float64) string {
	a := math.Abs(v)
	switch {
	case a == 0:
		return "0"
	case a < 1e-3 || a >= 1e15:
		return scientific(v, 2)
	case a >= 999.5 && math.Round(a) < 1e4:
		return strconv.FormatFloat(math.Round(v), 'f', 0, 64)
	}
	r, _ := strconv.ParseFloat(strconv.FormatFloat(a, 'g', 3, 64), 64)
	scale, suffix := prefix(r)
	dec := max(0, 2-int(math.Floor(math.Log10(r/scale)+1e-9)))
	return trimZeros(strconv.FormatFloat(v/scale, 'f', dec, 64)) + suffix
}

// prefix returns the SI scale and suffix for numbers of magnitude m.
func prefix(m float64) (float64, string) {
	for _, p := range siPrefixes {
		if m >= p.scale {
			return p.scale, p.suffix
		}
	}
	return 1, ""
}

// tickFormat formats the ticks of a linear axis: all labels share the
// SI suffix chosen by the largest tick and show as many decimals as the
// step needs.
type tickFormat struct {
	step, scale float64
	suffix      string
	sci         bool
	digits      int // decimals, or mantissa decimals when sci
}

// newTickFormat returns the format for multiples of step up to magnitude m.
func newTickFormat(step, m float64) tickFormat {
	f := tickFormat{step: step, scale: 1}
	if m < 1e-3 || m >= 1e15 {
		f.sci = true
		f.digits = min(15, max(0, magnitude(m)-magnitude(step)))
		return f
	}
	if m >= 1e4 { // 1000 to 9999 read well without a suffix
		f.scale, f.suffix = prefix(m)
	}
	f.digits = min(15, max(0, -magnitude(step/f.scale)))
	return f
}

// label formats the tick at v.
func (f tickFormat) label(v float64) string {
	if math.Abs(v) < f.step*1e-6 {
		return "0"
	}
	if f.sci {
		return scientific(v, f.digits)
	}
	return trimZeros(strconv.FormatFloat(v/f.scale, 'f', f.digits, 64)) + f.suffix
}

// magnitude returns the decimal exponent of v: 2 for 500, -1 for 0.2.
func magnitude(v float64) int {
	return int(math.Floor(math.Log10(v) + 1e-9))
}

// scientific formats v as 1.5e-5 with up to digits mantissa decimals.
func scientific(v float64, digits int) string {
	s := strconv.FormatFloat(v, 'e', digits, 64)
	mant, exp, _ := strings.Cut(s, "e")
	sign := ""
	if exp[0] == '-' {
		sign = "-"
	}
	exp = strings.TrimLeft(exp[1:], "0")
	return trimZeros(mant) + "e" + sign + exp
}

// trimZeros drops trailing zeros after a decimal point, and the point.
func trimZeros(s string) string {
	if !strings.Contains(s, ".") {
		return s
	}
	s = strings.TrimRight(s, "0")
	s = strings.TrimSuffix(s, ".")
	if s == "-0" {
		return "0"
	}
	return s
}

// num formats a pixel coordinate with at most two decimals.
func num(v float64) string {
	r := math.Round(v*100) / 100
	if r == 0 {
		r = 0 // no "-0"
	}
	return strconv.FormatFloat(r, 'f', -1, 64)
}

// textWidth estimates the rendered width in pixels of s at the given font
// size. The widths are those of DejaVu Sans, a little wider than Helvetica
// or Arial, so the estimate errs on the roomy side.
func textWidth(s string, size float64) float64 {
	w := 0.0
	for _, r := range s {
		w += runeWidth(r)
	}
	return w * size
}

// runeWidth is the advance of r in ems.
func runeWidth(r rune) float64 {
	switch {
	case strings.ContainsRune("il.,:;'|!", r):
		return 0.3
	case strings.ContainsRune(" fjtI()[]-r", r):
		return 0.38
	case strings.ContainsRune("mwMW%@", r):
		return 0.92
	case unicode.IsUpper(r):
		return 0.7
	case r < 0x80:
		return 0.62
	case r >= 0x2E80: // CJK and other full-width scripts
		return 1
	}
	return 0.65
}

// fitText shortens s with an ellipsis so it is at most width pixels wide.
func fitText(s string, size, width float64) string {
	if textWidth(s, size) <= width {
		return s
	}
	room := width - textWidth("…", size)
	w := 0.0
	for i, r := range s {
		w += runeWidth(r) * size
		if w > room {
			return s[:i] + "…"
		}
	}
	return s
}
