package server

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/strata-media/strata/internal/core/tier"
	"github.com/strata-media/strata/internal/node/engine"
)

// metrics exports the engine's counters and the request latencies to
// Prometheus. The counters are read from engine.Stats at scrape time, so
// /metrics and /stats always agree.
type metrics struct {
	stats   statsCollector
	latency *prometheus.HistogramVec
	byTier  [3]prometheus.Observer // indexed by tier.Tier
}

func newMetrics(eng *engine.Engine) *metrics {
	m := &metrics{
		stats: statsCollector{eng: eng},
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "strata_request_duration_seconds",
			Help:    "Time to serve an object request, by the tier that served it.",
			Buckets: []float64{.0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10},
		}, []string{"tier"}),
	}
	for _, t := range []tier.Tier{tier.Miss, tier.RAM, tier.SSD} {
		m.byTier[t] = m.latency.WithLabelValues(tierName(t))
	}
	return m
}

// Describe sends the descriptions of the latencies and the counters.
func (m *metrics) Describe(ch chan<- *prometheus.Desc) {
	m.latency.Describe(ch)
	m.stats.Describe(ch)
}

// Collect sends the latencies and a snapshot of the counters.
func (m *metrics) Collect(ch chan<- prometheus.Metric) {
	m.latency.Collect(ch)
	m.stats.Collect(ch)
}

// observe records the time to serve a request up to its response body.
func (m *metrics) observe(t tier.Tier, d time.Duration) {
	m.byTier[t].Observe(d.Seconds())
}

// statsCollector turns an engine.Stats snapshot into metrics.
type statsCollector struct{ eng *engine.Engine }

var (
	descHits        = prometheus.NewDesc("strata_tier_hits_total", "Requests served by a cache tier.", []string{"tier"}, nil)
	descMisses      = prometheus.NewDesc("strata_tier_misses_total", "Lookups that missed a cache tier.", []string{"tier"}, nil)
	descHitBytes    = prometheus.NewDesc("strata_tier_hit_bytes_total", "Bytes served from a cache tier.", []string{"tier"}, nil)
	descTierBytes   = prometheus.NewDesc("strata_tier_bytes", "Bytes held by a tier (ram, ring).", []string{"tier"}, nil)
	descTierBudget  = prometheus.NewDesc("strata_tier_budget_bytes", "The most bytes a tier (ram, ring) may hold.", []string{"tier"}, nil)
	descSegments    = prometheus.NewDesc("strata_tier_segments", "Segments held by a tier.", []string{"tier"}, nil)
	descOrigin      = prometheus.NewDesc("strata_origin_reads_total", "Reads of the capacity tier.", nil, nil)
	descOriginBytes = prometheus.NewDesc("strata_origin_bytes_total", "Bytes read from the capacity tier.", nil, nil)
	descOriginErr   = prometheus.NewDesc("strata_origin_errors_total", "Failed reads of the capacity tier.", nil, nil)
	descCoalesced   = prometheus.NewDesc("strata_origin_coalesced_total", "Requests that shared another request's capacity read.", nil, nil)
	descUtil        = prometheus.NewDesc("strata_ssd_utilization_ratio", "Flash device busy fraction over the last epoch (io_ticks).", nil, nil)
	descAdmission   = prometheus.NewDesc("strata_ssd_admission_total", "Feed admission decisions for ready blocks.", []string{"decision"}, nil)
	descBlocksW     = prometheus.NewDesc("strata_ssd_blocks_written_total", "Whole blocks written to flash.", nil, nil)
	descBytesW      = prometheus.NewDesc("strata_ssd_bytes_written_total", "Bytes written to flash (whole blocks).", nil, nil)
	descPadding     = prometheus.NewDesc("strata_ssd_padding_bytes_total", "Of the bytes written to flash, zero padding.", nil, nil)
	descBlocks      = prometheus.NewDesc("strata_ssd_blocks", "Flash data blocks by state.", []string{"state"}, nil)
	descReadErrors  = prometheus.NewDesc("strata_ssd_read_errors_total", "Flash reads that failed or did not verify and fell back to the capacity tier.", nil, nil)
	descWriteErrors = prometheus.NewDesc("strata_ssd_write_errors_total", "Failed flash writes.", nil, nil)
	descRecovered   = prometheus.NewDesc("strata_ssd_recovered_segments", "Segments found on flash by the recovery scan at start.", nil, nil)
	descRecoveredB  = prometheus.NewDesc("strata_ssd_recovered_bytes", "Bytes of the segments found on flash at start.", nil, nil)
	descRecoveryBad = prometheus.NewDesc("strata_ssd_recovery_records", "Records the recovery scan dropped, by reason.", []string{"reason"}, nil)
	descInval       = prometheus.NewDesc("strata_invalidations_total", "Invalidations of titles.", nil, nil)
	descByClass     = prometheus.NewDesc("strata_ssd_written_bytes_by_class_total", "Bytes written to the flash cache per write lifetime class.", []string{"class"}, nil)
	descWriteRate   = prometheus.NewDesc("strata_ssd_write_rate_bytes_per_second", "Recent flash write rate in bytes per second.", nil, nil)
	descHitMemory   = prometheus.NewDesc("strata_ssd_hit_memory_bytes", "Bytes of the buffers flash hits hold until their answer is written (held), and their bound (limit).", []string{"state"}, nil)
	descHitWaits    = prometheus.NewDesc("strata_ssd_hit_waits_total", "Flash hits that waited for hit memory (waited), and that waited in vain, answered 503 (busy).", []string{"outcome"}, nil)
	descLifetime    = prometheus.NewDesc("strata_ssd_projected_lifetime_seconds", "Projected flash lifetime at the average write rate since start (VoD paper: T = C x 1024 x N / (W x 3600)).", nil, nil)
)

func (c *statsCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descHits, descMisses, descHitBytes, descTierBytes, descTierBudget, descSegments,
		descOrigin, descOriginBytes, descOriginErr, descCoalesced, descUtil, descAdmission, descBlocksW,
		descBytesW, descPadding, descBlocks, descReadErrors, descWriteErrors, descRecovered, descRecoveredB,
		descRecoveryBad, descInval, descByClass, descWriteRate, descLifetime, descHitMemory, descHitWaits} {
		ch <- d
	}
}

func (c *statsCollector) Collect(ch chan<- prometheus.Metric) {
	s := c.eng.Stats()
	counter := func(d *prometheus.Desc, v float64, l ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, v, l...)
	}
	gauge := func(d *prometheus.Desc, v float64, l ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, l...)
	}
	counter(descHits, float64(s.RAM.Hits), "ram")
	counter(descHits, float64(s.SSD.Hits), "ssd")
	counter(descMisses, float64(s.RAM.Misses), "ram")
	counter(descMisses, float64(s.SSD.Misses), "ssd")
	counter(descHitBytes, float64(s.RAM.HitBytes), "ram")
	counter(descHitBytes, float64(s.SSD.HitBytes), "ssd")
	gauge(descTierBytes, float64(s.RAM.Bytes), "ram")
	gauge(descTierBudget, float64(s.RAM.BudgetBytes), "ram")
	gauge(descTierBytes, float64(s.Ring.Bytes), "ring")
	gauge(descTierBudget, float64(s.Ring.CapacityBytes), "ring")
	gauge(descSegments, float64(s.RAM.Segments), "ram")
	gauge(descSegments, float64(s.Ring.Segments), "ring")
	gauge(descSegments, float64(s.SSD.Segments), "ssd")
	counter(descOrigin, float64(s.Origin.Reads))
	counter(descOriginBytes, float64(s.Origin.Bytes))
	counter(descOriginErr, float64(s.Origin.Errors))
	counter(descCoalesced, float64(s.Origin.Coalesced))
	c.collectSSD(s.SSD, counter, gauge)
	counter(descInval, float64(s.Invalidations))
}

func (c *statsCollector) collectSSD(s engine.SSDStats, counter, gauge func(*prometheus.Desc, float64, ...string)) {
	gauge(descUtil, s.Utilization)
	counter(descAdmission, float64(s.AdmissionAccepts), "accept")
	counter(descAdmission, float64(s.AdmissionRejects), "reject")
	counter(descBlocksW, float64(s.BlocksWritten))
	counter(descBytesW, float64(s.BytesWritten))
	counter(descPadding, float64(s.PaddingBytes))
	gauge(descBlocks, float64(s.BlocksUsed), "used")
	gauge(descBlocks, float64(s.BlocksFree), "free")
	counter(descReadErrors, float64(s.ReadErrors))
	counter(descWriteErrors, float64(s.WriteErrors))
	gauge(descRecovered, float64(s.RecoveredSegments))
	gauge(descRecoveredB, float64(s.RecoveredBytes))
	gauge(descRecoveryBad, float64(s.RecoveryCorrupt), "corrupt")
	gauge(descRecoveryBad, float64(s.RecoveryOrphans), "orphan")
	for class, n := range s.WrittenByClass {
		counter(descByClass, float64(n), class)
	}
	gauge(descWriteRate, s.WriteRate)
	gauge(descLifetime, s.ProjectedLifetimeHours*3600)
	if h := s.HitMemory; h != nil {
		gauge(descHitMemory, float64(h.HeldBytes), "held")
		gauge(descHitMemory, float64(h.LimitBytes), "limit")
		counter(descHitWaits, float64(h.Waits), "waited")
		counter(descHitWaits, float64(h.Busy), "busy")
	}
}
