package images

import (
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// imageSources are where a served image's bytes came from (its
// X-Strata-Tier): the LSM tree (small variants), the tier engine's RAM
// or flash, the value log or the bucket (large variants read from the
// store), or an IIIF derivation.
var imageSources = [...]string{"lsm", "ram", "ssd", "vlog", "bucket", "render"}

// handlerCounters count the handler's work since start.
type handlerCounters struct {
	served      [len(imageSources)]atomic.Uint64 // responses with a body, by source
	servedBytes [len(imageSources)]atomic.Uint64
	notModified atomic.Uint64 // 304s, answered before reading any bytes
	uploads     atomic.Uint64 // images stored
	refused     atomic.Uint64 // uploads refused (4xx, 5xx)
	renders     atomic.Uint64 // IIIF derivations run
	renderNanos atomic.Uint64 // their total time
	errors      atomic.Uint64 // read requests answered with an error
}

// served counts a response of n bytes from source.
func (c *handlerCounters) servedFrom(source string, n int) {
	for i, s := range imageSources {
		if s == source {
			c.served[i].Add(1)
			c.servedBytes[i].Add(uint64(n))
			return
		}
	}
}

// rendered counts one IIIF derivation that took d.
func (c *handlerCounters) rendered(d time.Duration) {
	c.renders.Add(1)
	c.renderNanos.Add(uint64(d.Nanoseconds()))
}

// HandlerStats are the image handler's counters and the store's size, the
// "images" section of GET /stats.
type HandlerStats struct {
	// Served counts responses with a body by where their bytes came from.
	Served map[string]uint64 `json:"served"`
	// ServedBytes are their body bytes, by source.
	ServedBytes map[string]uint64 `json:"served_bytes"`
	// NotModified counts 304 answers.
	NotModified uint64 `json:"not_modified"`
	// Uploads counts images stored, Refused uploads refused.
	Uploads uint64 `json:"uploads"`
	Refused uint64 `json:"uploads_refused"`
	// Renders counts IIIF derivations, RenderSeconds their total time.
	Renders       uint64  `json:"iiif_renders"`
	RenderSeconds float64 `json:"iiif_render_seconds"`
	// Errors counts reads answered with an error.
	Errors uint64 `json:"errors"`
	// LSMBytes and VlogBytes are the store's on-disk sizes: the LSM tree
	// on flash and the value log (Badger's estimate, refreshed about once
	// a minute; 0 until then).
	LSMBytes  int64 `json:"lsm_bytes"`
	VlogBytes int64 `json:"vlog_bytes"`
	// OrphansRemoved counts objects deleted from the bucket by the sweep:
	// left by uploads that crashed before their commit.
	OrphansRemoved uint64 `json:"bucket_orphans_removed"`
}

// Stats returns a snapshot of the handler's counters and the store's size.
func (h *Handler) Stats() HandlerStats {
	c := &h.counters
	s := HandlerStats{Served: map[string]uint64{}, ServedBytes: map[string]uint64{},
		NotModified: c.notModified.Load(), Uploads: c.uploads.Load(), Refused: c.refused.Load(),
		Renders: c.renders.Load(), RenderSeconds: float64(c.renderNanos.Load()) / 1e9, Errors: c.errors.Load()}
	for i, src := range imageSources {
		s.Served[src] = c.served[i].Load()
		s.ServedBytes[src] = c.servedBytes[i].Load()
	}
	s.LSMBytes, s.VlogBytes = h.st.db.Size()
	s.OrphansRemoved = h.st.orphansRemoved.Load()
	return s
}

var (
	descServed      = prometheus.NewDesc("strata_images_served_total", "Image responses with a body, by where their bytes came from (lsm, ram, ssd, vlog, bucket, render).", []string{"source"}, nil)
	descServedBytes = prometheus.NewDesc("strata_images_served_bytes_total", "Body bytes of image responses, by source.", []string{"source"}, nil)
	descNotModified = prometheus.NewDesc("strata_images_not_modified_total", "Image requests answered 304.", nil, nil)
	descUploads     = prometheus.NewDesc("strata_images_uploads_total", "Image uploads, by result (stored, refused).", []string{"result"}, nil)
	descRenders     = prometheus.NewDesc("strata_images_iiif_renders_total", "IIIF derivations run (cached results are not counted).", nil, nil)
	descRenderTime  = prometheus.NewDesc("strata_images_iiif_render_seconds_total", "Total time of IIIF derivations.", nil, nil)
	descImgErrors   = prometheus.NewDesc("strata_images_errors_total", "Image reads answered with an error.", nil, nil)
	descOrphans     = prometheus.NewDesc("strata_images_bucket_orphans_removed_total", "Objects no pointer names (left by an upload that crashed before its commit) deleted from the bucket by the sweep.", nil, nil)
	descStoreBytes  = prometheus.NewDesc("strata_images_store_bytes", "The image store's on-disk size by part (lsm on flash, vlog).", []string{"part"}, nil)
)

// handlerMetrics exports Stats to Prometheus at scrape time, so /metrics
// and /stats agree.
type handlerMetrics struct{ h *Handler }

func (m handlerMetrics) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descServed, descServedBytes, descNotModified, descUploads, descRenders,
		descRenderTime, descImgErrors, descOrphans, descStoreBytes} {
		ch <- d
	}
}

func (m handlerMetrics) Collect(ch chan<- prometheus.Metric) {
	s := m.h.Stats()
	counter := func(d *prometheus.Desc, v float64, l ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, v, l...)
	}
	for _, src := range imageSources {
		counter(descServed, float64(s.Served[src]), src)
		counter(descServedBytes, float64(s.ServedBytes[src]), src)
	}
	counter(descNotModified, float64(s.NotModified))
	counter(descUploads, float64(s.Uploads), "stored")
	counter(descUploads, float64(s.Refused), "refused")
	counter(descRenders, float64(s.Renders))
	counter(descRenderTime, s.RenderSeconds)
	counter(descImgErrors, float64(s.Errors))
	counter(descOrphans, float64(s.OrphansRemoved))
	ch <- prometheus.MustNewConstMetric(descStoreBytes, prometheus.GaugeValue, float64(s.LSMBytes), "lsm")
	ch <- prometheus.MustNewConstMetric(descStoreBytes, prometheus.GaugeValue, float64(s.VlogBytes), "vlog")
}
