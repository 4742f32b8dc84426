package app

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/strata-media/strata/internal/httpapi"
	"github.com/strata-media/strata/internal/storage/origin"
)

// s3Requests is the module of an S3 capacity tier's request counters: the
// /stats section "s3" and strata_s3_requests_total{kind}, the requests
// that reached the bucket (what a cache in front of it spares). It is nil
// for a directory.
func s3Requests(titles capacityOrigin) httpapi.Module {
	s3, ok := titles.(*origin.S3)
	if !ok {
		return nil
	}
	return httpapi.ModuleFunc(func(m *httpapi.Mounter) {
		m.Stats("s3", func() any { return s3.Requests() })
		m.Metrics(s3Metrics{s3})
	})
}

// s3Metrics exports S3.Requests, read at scrape time so that /metrics and
// /stats agree.
type s3Metrics struct{ s3 *origin.S3 }

var (
	descS3Requests = prometheus.NewDesc("strata_s3_requests_total",
		"HTTP requests sent to the S3 capacity tier's store, retries included, by kind (get, head, list, other).", []string{"kind"}, nil)
	descS3Failed = prometheus.NewDesc("strata_s3_requests_failed_total",
		"Requests to the S3 store that got no answer or a 4xx/5xx status.", nil, nil)
)

// Describe sends the metrics' descriptions.
func (m s3Metrics) Describe(ch chan<- *prometheus.Desc) {
	ch <- descS3Requests
	ch <- descS3Failed
}

// Collect sends a snapshot of the counters.
func (m s3Metrics) Collect(ch chan<- prometheus.Metric) {
	r := m.s3.Requests()
	for kind, v := range map[string]uint64{"get": r.Get, "head": r.Head, "list": r.List, "other": r.Other} {
		ch <- prometheus.MustNewConstMetric(descS3Requests, prometheus.CounterValue, float64(v), kind)
	}
	ch <- prometheus.MustNewConstMetric(descS3Failed, prometheus.CounterValue, float64(r.Failed))
}
