package des

import "github.com/strata-media/strata/internal/report"

// A Figure is an SVG written beside a simulator's report.
type Figure = report.Figure
