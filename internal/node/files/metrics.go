package files

import "github.com/prometheus/client_golang/prometheus"

var (
	descStreams  = prometheus.NewDesc("strata_files_streams_total", "Whole-file streams admitted, by the device serving them.", []string{"device"}, nil)
	descRejected = prometheus.NewDesc("strata_files_rejected_total", "Whole-file streams refused with 503: no device had the bandwidth (Algorithm 2).", nil, nil)
	descReserved = prometheus.NewDesc("strata_files_reserved_bytes_per_second", "Bandwidth reserved by admitted streams, by device.", []string{"device"}, nil)
	descBudget   = prometheus.NewDesc("strata_files_bandwidth_budget_bytes_per_second", "Bandwidth a device may promise to streams.", []string{"device"}, nil)
	descResident = prometheus.NewDesc("strata_files_resident", "Files with a complete copy on flash.", nil, nil)
	descCopies   = prometheus.NewDesc("strata_files_copies_total", "Flash copies installed or evicted by file-level LFU.", []string{"event"}, nil)
)

// Collector exports the tier's statistics to Prometheus.
func (t *Tier) Collector() prometheus.Collector { return collector{t} }

type collector struct{ t *Tier }

func (c collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descStreams, descRejected, descReserved, descBudget, descResident, descCopies} {
		ch <- d
	}
}

func (c collector) Collect(ch chan<- prometheus.Metric) {
	s := c.t.Stats()
	m := func(d *prometheus.Desc, t prometheus.ValueType, v float64, l ...string) {
		ch <- prometheus.MustNewConstMetric(d, t, v, l...)
	}
	for _, dev := range []string{"flash", "disk"} {
		m(descStreams, prometheus.CounterValue, float64(s.Admitted[dev]), dev)
		m(descReserved, prometheus.GaugeValue, float64(s.Reserved[dev]), dev)
		m(descBudget, prometheus.GaugeValue, float64(s.Capacity[dev]), dev)
	}
	m(descRejected, prometheus.CounterValue, float64(s.Rejected))
	m(descResident, prometheus.GaugeValue, float64(s.ResidentFiles))
	m(descCopies, prometheus.CounterValue, float64(s.Installed), "installed")
	m(descCopies, prometheus.CounterValue, float64(s.Evicted), "evicted")
}
