package httpapi

import (
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// routeMetrics count every request by the route that answered it (its
// ServeMux pattern, a bounded set) and its status code, and time it.
// Requests no route matched are counted under route "unmatched".
type routeMetrics struct {
	requests *prometheus.CounterVec
	duration *prometheus.HistogramVec
	// series keeps each (route, code)'s counter and histogram: the
	// vectors' label lookups (hashing, strconv of the code) cost every
	// request otherwise. Bounded: routes are the mux's patterns, codes
	// three digits.
	series sync.Map // routeCode -> routeSeries
	// front counts what the Front did with connections (front.go).
	front *prometheus.CounterVec
	// frontAnswers, frontHandovers, frontReclaims, frontLaid are front's series.
	frontAnswers, frontHandovers, frontReclaims, frontLaid prometheus.Counter
}

type routeCode struct {
	route string
	code  int
}

type routeSeries struct {
	requests prometheus.Counter
	duration prometheus.Observer
}

// unmatchedRoute labels requests the mux answered itself (404, 405).
const unmatchedRoute = "unmatched"

func newRouteMetrics() *routeMetrics {
	m := newRouteVecs()
	m.frontAnswers = m.front.WithLabelValues("answer")
	m.frontHandovers = m.front.WithLabelValues("handover")
	m.frontReclaims = m.front.WithLabelValues("reclaim")
	m.frontLaid = m.front.WithLabelValues("laid")
	return m
}

func newRouteVecs() *routeMetrics {
	return &routeMetrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "strata_http_requests_total",
			Help: "HTTP requests answered, by route (the server's URL pattern) and status code.",
		}, []string{"route", "code"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "strata_http_request_duration_seconds",
			Help:    "Time from a request's arrival to its handler's return, by route.",
			Buckets: []float64{.0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30},
		}, []string{"route"}),
		front: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "strata_http_front_events_total",
			Help: "What the Front (the HTTP/1.1 server of plain reads) did: answered a request itself (answer), handed a connection to net/http (handover), took one back after net/http's answer (reclaim), sent an answer with the header laid out for an earlier one of the same stored response (laid).",
		}, []string{"event"}),
	}
}

func (m *routeMetrics) Describe(ch chan<- *prometheus.Desc) {
	m.requests.Describe(ch)
	m.duration.Describe(ch)
	m.front.Describe(ch)
}

func (m *routeMetrics) Collect(ch chan<- prometheus.Metric) {
	m.requests.Collect(ch)
	m.duration.Collect(ch)
	m.front.Collect(ch)
}

// observe records one answered request.
func (m *routeMetrics) observe(route string, code int, d time.Duration) {
	if route == "" {
		route = unmatchedRoute
	}
	if code == 0 {
		code = http.StatusOK // a handler that wrote nothing: net/http sends 200
	}
	k := routeCode{route, code}
	v, ok := m.series.Load(k)
	if !ok {
		v, _ = m.series.LoadOrStore(k, routeSeries{
			requests: m.requests.WithLabelValues(route, strconv.Itoa(code)),
			duration: m.duration.WithLabelValues(route),
		})
	}
	s := v.(routeSeries)
	s.requests.Inc()
	s.duration.Observe(d.Seconds())
}

// named wraps h so that the API's writer learns which route answered.
func named(pattern string, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch p := w.(type) {
		case *problemWriter:
			p.route = pattern
		case *localWriter:
			p.pw.route = pattern
		}
		h.ServeHTTP(w, r)
	})
}

// buildInfo is the gauge strata_build_info: 1, labelled with the build
// (ReadBuild: the version, the VCS revision, "+dirty" for a modified
// tree, and the Go version), so a dashboard can show which build each
// node runs.
func buildInfo() prometheus.Collector {
	b := ReadBuild()
	revision := b.Revision
	if b.Modified {
		revision += "+dirty"
	}
	g := prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "strata_build_info",
		Help: "Always 1; its labels name the build: module version, VCS revision, Go version.",
		ConstLabels: prometheus.Labels{"version": b.Version, "revision": revision,
			"goversion": b.GoVersion},
	})
	g.Set(1)
	return g
}
