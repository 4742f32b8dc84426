package flashstream

import (
	"fmt"

	"github.com/strata-media/strata/internal/lab/report"
)

// md builds Markdown.
type md = report.Markdown

// f formats a float compactly.
func f(v float64, prec int) string { return fmt.Sprintf("%.*f", prec, v) }

func pct(v float64) string { return fmt.Sprintf("%.1f%%", 100*v) }
