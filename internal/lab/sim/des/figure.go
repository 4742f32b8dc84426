package des

import "github.com/strata-media/strata/internal/lab/report"

// A Figure is an SVG written beside a simulator's report.
type Figure = report.Figure
