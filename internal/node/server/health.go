package server

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/strata-media/strata/internal/core/health"
	"github.com/strata-media/strata/internal/httpapi"
	"github.com/strata-media/strata/internal/node/feed"
)

// A ReadyCheck is one condition of readiness besides the devices: the
// capacity tier or an upstream is reachable.
type ReadyCheck struct {
	// Name names it in /readyz ("capacity", "upstream /cdn/").
	Name string
	// Check returns nil when the condition holds. It is called at most
	// once per HealthOptions.TTL, however often /readyz is asked.
	Check func(ctx context.Context) error
	// Serves, if set, is asked when Check fails: true means the node
	// still serves without the condition (an edge whose upstream is down
	// but which holds content answers it, stale), so the failure makes
	// the node "degraded", not "not ready".
	Serves func() bool
}

// HealthOptions configure the health module.
type HealthOptions struct {
	// Devices returns the health of the flash devices. Nil: none.
	Devices func() []feed.DeviceReport
	// Checks are the other conditions of readiness.
	Checks []ReadyCheck
	// TTL is how long a check's result is reused. Default 5 s.
	TTL time.Duration
	// Timeout bounds one check. Default 2 s.
	Timeout time.Duration
}

// Health is the module of GET /healthz and GET /readyz, for load
// balancers and orchestrators: cheap, unauthenticated, never counted as
// media requests. It also exports the devices' health metrics.
type Health struct {
	opts     HealthOptions
	checks   []*cachedCheck
	draining atomic.Bool
}

// Drain makes /readyz answer 503 from now on: the node is shutting down,
// and a load balancer should send it nothing new while it drains.
func (h *Health) Drain() { h.draining.Store(true) }

// NewHealth returns the health module.
func NewHealth(o HealthOptions) *Health {
	if o.TTL <= 0 {
		o.TTL = 5 * time.Second
	}
	if o.Timeout <= 0 {
		o.Timeout = 2 * time.Second
	}
	if o.Devices == nil {
		o.Devices = func() []feed.DeviceReport { return nil }
	}
	h := &Health{opts: o}
	for _, c := range o.Checks {
		h.checks = append(h.checks, &cachedCheck{ReadyCheck: c})
	}
	return h
}

// Mount registers the two routes and the device metrics.
func (h *Health) Mount(m *httpapi.Mounter) {
	m.Handle("GET /healthz", http.HandlerFunc(h.healthz))
	m.Handle("GET /readyz", http.HandlerFunc(h.readyz))
	m.Metrics(deviceCollector{devices: h.opts.Devices})
	m.Metrics(readyCollector{h})
}

// readyStates are the values of Readiness.Status, as strata_ready_state
// labels them.
var readyStates = []struct{ status, label string }{{"ready", "ready"}, {"degraded", "degraded"}, {"not ready", "not_ready"}}

var descReadyState = prometheus.NewDesc("strata_ready_state",
	"1 for the node's readiness state now (/readyz: ready, degraded, not_ready), 0 for the others.", []string{"state"}, nil)

// readyCollector exports the readiness state at scrape time (the checks'
// results are cached for HealthOptions.TTL, as /readyz's are).
type readyCollector struct{ h *Health }

func (c readyCollector) Describe(ch chan<- *prometheus.Desc) { ch <- descReadyState }

func (c readyCollector) Collect(ch chan<- prometheus.Metric) {
	status := c.h.Readiness(context.Background()).Status
	for _, s := range readyStates {
		v := 0.0
		if s.status == status {
			v = 1
		}
		ch <- prometheus.MustNewConstMetric(descReadyState, prometheus.GaugeValue, v, s.label)
	}
}

// healthz answers 200 while the process serves: liveness, nothing more.
func (h *Health) healthz(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	fmt.Fprintln(w, "ok")
}

// Readiness is /readyz's body. Status is "ready", "degraded" (serving:
// a flash device degraded, its requests going to the capacity tier; or a
// check failed that the node serves without, as an edge holding content
// with its upstream down) or "not ready" (a check failed: 503).
type Readiness struct {
	Status  string              `json:"status"`
	Checks  []CheckResult       `json:"checks"`
	Devices []feed.DeviceReport `json:"devices"`
}

// CheckResult is one check's last result.
type CheckResult struct {
	Name  string `json:"name"`
	OK    bool   `json:"ok"`
	Error string `json:"error,omitempty"`
	// Degraded says the check failed but the node serves without it
	// (ReadyCheck.Serves): it makes the node degraded, not unready.
	Degraded bool `json:"degraded,omitempty"`
	// AgeSeconds is how old the result is, seconds to the millisecond.
	AgeSeconds float64 `json:"age_s"`
}

// readyz answers 200 while every check holds, "degraded" in its body if
// a device is; 503 with a problem body saying what is not ready
// otherwise. A degraded flash device does not make the node unready: it
// serves from the capacity tier, and taking every node whose SSD fails
// out of rotation would move its load onto the others' capacity tiers.
func (h *Health) readyz(w http.ResponseWriter, r *http.Request) {
	rd := h.Readiness(r.Context())
	if rd.Status != "not ready" {
		httpapi.Write(w, http.StatusOK, "no-store", rd) //nolint:errcheck // the status is sent
		return
	}
	var failed []string
	for _, c := range rd.Checks {
		if !c.OK {
			failed = append(failed, c.Name+": "+c.Error)
		}
	}
	// A problem (its status is the code), with the checks and devices.
	body := struct {
		httpapi.Problem
		Checks  []CheckResult       `json:"checks"`
		Devices []feed.DeviceReport `json:"devices"`
	}{httpapi.Problem{Type: "about:blank", Title: http.StatusText(http.StatusServiceUnavailable), Status: http.StatusServiceUnavailable,
		Detail: httpapi.Clip("not ready: "+strings.Join(failed, "; "), httpapi.MaxDetail)}, rd.Checks, rd.Devices}
	hd := w.Header()
	hd.Set("Content-Type", httpapi.ProblemType)
	hd.Set("Cache-Control", "no-store")
	hd.Set("Retry-After", strconv.Itoa(int(httpapi.RetryAfter/time.Second)))
	w.WriteHeader(http.StatusServiceUnavailable)
	httpapi.EncodeJSON(w, body) //nolint:errcheck // the status is sent
}

// Readiness runs the stale checks (one run at a time each, however many
// ask) and returns the node's readiness.
func (h *Health) Readiness(ctx context.Context) Readiness {
	rd := Readiness{Status: "ready", Checks: make([]CheckResult, 0, len(h.checks)), Devices: h.opts.Devices()}
	if rd.Devices == nil {
		rd.Devices = []feed.DeviceReport{}
	}
	for _, d := range rd.Devices {
		if d.Degraded {
			rd.Status = "degraded"
		}
	}
	draining := h.draining.Load()
	if draining {
		rd.Checks = append(rd.Checks, CheckResult{Name: "serving", Error: "shutting down: draining requests"})
	}
	for _, c := range h.checks {
		res := c.result(ctx, h.opts.TTL, h.opts.Timeout)
		switch {
		case res.OK:
		case c.Serves != nil && c.Serves():
			res.Degraded = true
			if rd.Status == "ready" {
				rd.Status = "degraded"
			}
		default:
			rd.Status = "not ready"
		}
		rd.Checks = append(rd.Checks, res)
	}
	if draining {
		rd.Status = "not ready"
	}
	return rd
}

// cachedCheck is a check and its last result.
type cachedCheck struct {
	ReadyCheck
	mu  sync.Mutex // held while the check runs: concurrent askers wait for its result
	at  time.Time  // of the last run; zero before the first
	err error
}

func (c *cachedCheck) result(ctx context.Context, ttl, timeout time.Duration) CheckResult {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.at.IsZero() || time.Since(c.at) >= ttl {
		// The check outlives a client that goes away: others may wait.
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), timeout)
		c.err = c.Check(cctx)
		cancel()
		c.at = time.Now()
	}
	res := CheckResult{Name: c.Name, OK: c.err == nil, AgeSeconds: time.Since(c.at).Round(time.Millisecond).Seconds()}
	if c.err != nil {
		res.Error = httpapi.Clip(c.err.Error(), 200)
	}
	return res
}

// deviceCollector exports the devices' health at scrape time.
type deviceCollector struct {
	devices func() []feed.DeviceReport
}

var (
	descDegraded   = prometheus.NewDesc("strata_device_degraded", "1 while a flash device's reads or writes are degraded (served from the next tier, probed after a backoff), else 0.", []string{"device", "op"}, nil)
	descDevErrors  = prometheus.NewDesc("strata_device_errors_total", "Failed flash device operations by kind: io (EIO, torn writes), nospace (ENOSPC), timeout (past the read deadline, or a slow write).", []string{"device", "op", "kind"}, nil)
	descProbes     = prometheus.NewDesc("strata_device_probes_total", "Operations let through to a degraded device as probes.", []string{"device", "op"}, nil)
	descRecoveries = prometheus.NewDesc("strata_device_recoveries_total", "Probes that found a degraded device healthy again.", []string{"device", "op"}, nil)
	descLate       = prometheus.NewDesc("strata_device_late_reads", "Reads abandoned at their deadline that the device has not completed yet.", []string{"device"}, nil)
	descSkipped    = prometheus.NewDesc("strata_device_skipped_reads_total", "Reads served from the next tier without trying the device: its reads degraded, or too many reads late on it.", []string{"device"}, nil)
	descReadLimit  = prometheus.NewDesc("strata_device_read_limit", "Flash hits that may read the device at once: lower while its reads wait in its queue (flash_read_target).", []string{"device"}, nil)
	descShed       = prometheus.NewDesc("strata_device_shed_reads_total", "Flash hits the read limit turned away, the device overloaded: served from the next tier (the edge relays them from the upstream).", []string{"device"}, nil)
)

func (c deviceCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descDegraded, descDevErrors, descProbes, descRecoveries, descLate, descSkipped, descReadLimit, descShed} {
		ch <- d
	}
}

func (c deviceCollector) Collect(ch chan<- prometheus.Metric) {
	for _, d := range c.devices() {
		for _, op := range []struct {
			name string
			r    health.OpReport
		}{{"read", d.Read}, {"write", d.Write}} {
			degraded := 0.0
			if op.r.Degraded {
				degraded = 1
			}
			ch <- prometheus.MustNewConstMetric(descDegraded, prometheus.GaugeValue, degraded, d.Device, op.name)
			for _, k := range health.Kinds() {
				ch <- prometheus.MustNewConstMetric(descDevErrors, prometheus.CounterValue, float64(op.r.Errors[k.String()]), d.Device, op.name, k.String())
			}
			ch <- prometheus.MustNewConstMetric(descProbes, prometheus.CounterValue, float64(op.r.Probes), d.Device, op.name)
			ch <- prometheus.MustNewConstMetric(descRecoveries, prometheus.CounterValue, float64(op.r.Recoveries), d.Device, op.name)
		}
		ch <- prometheus.MustNewConstMetric(descLate, prometheus.GaugeValue, float64(d.LateReads), d.Device)
		ch <- prometheus.MustNewConstMetric(descSkipped, prometheus.CounterValue, float64(d.SkippedReads), d.Device)
		ch <- prometheus.MustNewConstMetric(descReadLimit, prometheus.GaugeValue, float64(d.ReadLimit), d.Device)
		ch <- prometheus.MustNewConstMetric(descShed, prometheus.CounterValue, float64(d.ShedReads), d.Device)
	}
}
