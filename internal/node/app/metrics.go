package app

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/strata-media/strata/internal/httpapi"
)

// originLatency is the histogram of capacity-tier reads (directory or
// bucket), timed where the node calls them: what a miss costs.
type originLatency struct{ h prometheus.Histogram }

func newOriginLatency() originLatency {
	return originLatency{prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    "strata_origin_read_duration_seconds",
		Help:    "Time of reads of the capacity tier (directory or bucket), failed ones included.",
		Buckets: []float64{.0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30},
	})}
}

func (l originLatency) observe(d time.Duration) { l.h.Observe(d.Seconds()) }

// module exports the histogram on /metrics.
func (l originLatency) module() httpapi.Module {
	return httpapi.ModuleFunc(func(m *httpapi.Mounter) { m.Metrics(l.h) })
}
