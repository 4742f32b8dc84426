package sim

import (
	"fmt"

	"github.com/strata-media/strata/internal/report"
)

// A Figure is an SVG written beside a report.
type Figure = report.Figure

// md builds Markdown.
type md = report.Markdown

// f formats a float compactly.
func f(v float64, prec int) string { return fmt.Sprintf("%.*f", prec, v) }

func pct(v float64) string { return fmt.Sprintf("%.1f%%", 100*v) }
