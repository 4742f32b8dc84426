package server

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/strata-media/strata/internal/core/health"
	"github.com/strata-media/strata/internal/httpapi"
	"github.com/strata-media/strata/internal/httpapi/httpapitest"
	"github.com/strata-media/strata/internal/node/feed"
)

// healthServer serves the health module alone with one check whose
// error is *fail, and one device whose report is *dev.
func healthServer(t *testing.T, fail *atomic.Pointer[error], dev *atomic.Pointer[feed.DeviceReport], calls *atomic.Int64) string {
	t.Helper()
	api := httpapi.New(httpapi.Options{})
	h := NewHealth(HealthOptions{
		TTL: time.Hour,
		Devices: func() []feed.DeviceReport {
			return []feed.DeviceReport{*dev.Load()}
		},
		Checks: []ReadyCheck{{Name: "capacity", Check: func(context.Context) error {
			calls.Add(1)
			if p := fail.Load(); p != nil {
				return *p
			}
			return nil
		}}},
	})
	if err := api.Mount(h); err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(api.Handler())
	t.Cleanup(ts.Close)
	return ts.URL
}

// TestReadyz: ready with a healthy device; "degraded" (still 200) with a
// degraded one; a failing check is a 503 problem naming it; checks run
// once per TTL however often /readyz is asked; /healthz is 200 whatever.
func TestReadyz(t *testing.T) {
	var fail atomic.Pointer[error]
	var dev atomic.Pointer[feed.DeviceReport]
	var calls atomic.Int64
	dev.Store(&feed.DeviceReport{Device: "segments"})
	url := healthServer(t, &fail, &dev, &calls)
	readiness := func(code int) Readiness {
		t.Helper()
		resp, body := httpapitest.Do(t, "GET", url+"/readyz", nil)
		if resp.StatusCode != code || resp.Header.Get("Cache-Control") != "no-store" {
			t.Fatalf("/readyz: %d %q %s, want %d", resp.StatusCode, resp.Header.Get("Cache-Control"), body, code)
		}
		var rd Readiness
		if err := json.Unmarshal(body, &rd); err != nil {
			t.Fatal(err)
		}
		return rd
	}
	for range 20 {
		if rd := readiness(http.StatusOK); rd.Status != "ready" || len(rd.Checks) != 1 || !rd.Checks[0].OK {
			t.Fatalf("%+v", rd)
		}
	}
	if calls.Load() != 1 {
		t.Errorf("the check ran %d times for 20 probes within its TTL", calls.Load())
	}
	dev.Store(&feed.DeviceReport{Device: "segments", Report: health.Report{Degraded: true, Read: health.OpReport{Degraded: true}}})
	if rd := readiness(http.StatusOK); rd.Status != "degraded" || !rd.Devices[0].Read.Degraded {
		t.Fatalf("degraded device: %+v", rd)
	}

	// A fresh server: the check fails from the start.
	var calls2 atomic.Int64
	err := errors.New("bucket unreachable")
	fail.Store(&err)
	url = healthServer(t, &fail, &dev, &calls2)
	resp, body := httpapitest.Do(t, "GET", url+"/readyz", nil)
	p, perr := httpapi.ReadProblem(resp, body)
	if resp.StatusCode != http.StatusServiceUnavailable || perr != nil || !strings.Contains(p.Detail, "capacity: bucket unreachable") {
		t.Fatalf("failing check: %d %s (%v)", resp.StatusCode, body, perr)
	}
	if resp.Header.Get("Retry-After") == "" {
		t.Error("503 without Retry-After")
	}
	if resp, body := httpapitest.Do(t, "GET", url+"/healthz", nil); resp.StatusCode != http.StatusOK || string(body) != "ok\n" {
		t.Errorf("/healthz: %d %q", resp.StatusCode, body)
	}
}

// TestReadyzDraining: once the node drains, /readyz is 503 and says so;
// /healthz still answers 200.
func TestReadyzDraining(t *testing.T) {
	api := httpapi.New(httpapi.Options{})
	h := NewHealth(HealthOptions{})
	if err := api.Mount(h); err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(api.Handler())
	defer ts.Close()
	if resp, body := httpapitest.Do(t, "GET", ts.URL+"/readyz", nil); resp.StatusCode != http.StatusOK {
		t.Fatalf("before draining: %d %s", resp.StatusCode, body)
	}
	h.Drain()
	resp, body := httpapitest.Do(t, "GET", ts.URL+"/readyz", nil)
	if p, err := httpapi.ReadProblem(resp, body); err != nil || resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(p.Detail, "shutting down") {
		t.Fatalf("draining: %d %s (%v)", resp.StatusCode, body, err)
	}
	if resp, _ := httpapitest.Do(t, "GET", ts.URL+"/healthz", nil); resp.StatusCode != http.StatusOK {
		t.Errorf("/healthz while draining: %d", resp.StatusCode)
	}
}

// TestDeviceMetrics: the degraded gauge and the error counters per kind.
func TestDeviceMetrics(t *testing.T) {
	var fail atomic.Pointer[error]
	var dev atomic.Pointer[feed.DeviceReport]
	var calls atomic.Int64
	dev.Store(&feed.DeviceReport{Device: "segments", LateReads: 2, Report: health.Report{Degraded: true,
		Read: health.OpReport{Degraded: true, Errors: map[string]uint64{"timeout": 7}}}})
	url := healthServer(t, &fail, &dev, &calls)
	_, body := httpapitest.Do(t, "GET", url+"/metrics", nil)
	for _, want := range []string{
		`strata_device_degraded{device="segments",op="read"} 1`,
		`strata_device_degraded{device="segments",op="write"} 0`,
		`strata_device_errors_total{device="segments",kind="timeout",op="read"} 7`,
		`strata_device_late_reads{device="segments"} 2`,
	} {
		if !strings.Contains(string(body), want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
}

// exponent matches a JSON number in scientific notation.
var exponent = regexp.MustCompile(`[0-9][eE][-+]?[0-9]`)

// /readyz gives each check's age in seconds to the millisecond, never in
// scientific notation (a check that ran a few nanoseconds ago printed
// 4.9e-8), ready or not.
func TestReadyzAgesArePlainDecimals(t *testing.T) {
	var fail atomic.Pointer[error]
	var dev atomic.Pointer[feed.DeviceReport]
	var calls atomic.Int64
	dev.Store(&feed.DeviceReport{Device: "segments"})
	url := healthServer(t, &fail, &dev, &calls)
	age := regexp.MustCompile(`"age_s": ([0-9.]+)[,\n]`)
	for _, code := range []int{200, 503} {
		if code == 503 {
			err := errors.New("down")
			fail.Store(&err)
			url = healthServer(t, &fail, &dev, &calls) // a new node: the check runs afresh
		}
		resp, body := httpapitest.Do(t, "GET", url+"/readyz", nil)
		m := age.FindSubmatch(body)
		if resp.StatusCode != code || m == nil || exponent.Match(body) {
			t.Fatalf("/readyz (%d, want %d): %s", resp.StatusCode, code, body)
		}
		if _, frac, ok := strings.Cut(string(m[1]), "."); ok && len(frac) > 3 {
			t.Errorf("age_s %s: more than milliseconds", m[1])
		}
	}
}
