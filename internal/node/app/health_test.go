package app

import (
	"encoding/json"
	"net"
	"strings"
	"testing"

	"github.com/strata-media/strata/internal/httpapi"
	"github.com/strata-media/strata/internal/httpapi/httpapitest"
	"github.com/strata-media/strata/internal/node/server"
)

// TestReadyzOfANode: a node with a reachable upstream is ready, with its
// flash devices (segments, whole files) listed healthy and /healthz 200; routes "/" of the
// edge do not shadow them. One whose upstream refuses connections is 503,
// and the problem names the upstream.
func TestReadyzOfANode(t *testing.T) {
	up := newTestUpstream(t)
	cfg := testConfig(t)
	cfg.Upstreams = []UpstreamConfig{{Prefix: "/", URL: up.URL + "/"}}
	_, base := serveNode(t, cfg)
	resp, body := httpapitest.Do(t, "GET", base+"/readyz", nil)
	var rd server.Readiness
	if err := json.Unmarshal(body, &rd); err != nil || resp.StatusCode != 200 || rd.Status != "ready" ||
		len(rd.Checks) != 2 || len(rd.Devices) != 2 || rd.Devices[0].Device != "segments" || rd.Devices[1].Device != "files" ||
		rd.Devices[0].Degraded || rd.Devices[1].Degraded {
		t.Fatalf("/readyz: %d %s (%v)", resp.StatusCode, body, err)
	}
	if resp, body := httpapitest.Do(t, "GET", base+"/healthz", nil); resp.StatusCode != 200 || string(body) != "ok\n" {
		t.Fatalf("/healthz: %d %q", resp.StatusCode, body)
	}

	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := "http://" + closed.Addr().String() + "/"
	closed.Close()
	cfg = testConfig(t)
	cfg.Upstreams = []UpstreamConfig{{Prefix: "/cdn/", URL: dead}}
	_, base = serveNode(t, cfg)
	resp, body = httpapitest.Do(t, "GET", base+"/readyz", nil)
	if p, err := httpapi.ReadProblem(resp, body); err != nil || resp.StatusCode != 503 || !strings.Contains(p.Detail, "upstream /cdn/") {
		t.Fatalf("/readyz with a dead upstream: %d %s (%v)", resp.StatusCode, body, err)
	}
	// Nothing held: nothing to serve, not ready.
	if got := metric(t, base, `strata_ready_state{state="not_ready"}`); got != 1 {
		t.Errorf("strata_ready_state not_ready = %v", got)
	}
}

// TestReadyzDegradedEdge: an edge whose upstream goes down while it holds
// content stays ready (200) so a load balancer keeps it, with "degraded"
// in /readyz's body, the upstream's check marked degraded, the
// strata_ready_state gauge on "degraded", and what it holds still served.
func TestReadyzDegradedEdge(t *testing.T) {
	up := newTestUpstream(t)
	cfg := testConfig(t)
	cfg.Upstreams = []UpstreamConfig{{Prefix: "/cdn/", URL: up.URL + "/"}}
	_, base := serveNode(t, cfg)
	if resp, body := httpapitest.Do(t, "GET", base+"/cdn/seg.m4s", nil); resp.StatusCode != 200 {
		t.Fatalf("GET through the edge: %d %s", resp.StatusCode, body)
	}
	up.Close()
	resp, body := httpapitest.Do(t, "GET", base+"/readyz", nil)
	var rd server.Readiness
	if err := json.Unmarshal(body, &rd); err != nil || resp.StatusCode != 200 || rd.Status != "degraded" {
		t.Fatalf("/readyz with the upstream down and content held: %d %s (%v)", resp.StatusCode, body, err)
	}
	var up0 *server.CheckResult
	for i := range rd.Checks {
		if rd.Checks[i].Name == "upstream /cdn/" {
			up0 = &rd.Checks[i]
		}
	}
	if up0 == nil || up0.OK || !up0.Degraded || up0.Error == "" {
		t.Fatalf("upstream check: %+v", rd.Checks)
	}
	if got := metric(t, base, `strata_ready_state{state="degraded"}`); got != 1 {
		t.Errorf("strata_ready_state degraded = %v", got)
	}
	if got := metric(t, base, `strata_ready_state{state="not_ready"}`); got != 0 {
		t.Errorf("strata_ready_state not_ready = %v", got)
	}
	if resp, body := httpapitest.Do(t, "GET", base+"/cdn/seg.m4s", nil); resp.StatusCode != 200 || string(body) != "upstream bytes of /seg.m4s" {
		t.Fatalf("held content with the upstream down: %d %q", resp.StatusCode, body)
	}
}

// An edge whose primary upstream is down but whose backup answers is
// ready, not degraded: it can fetch what it lacks.
func TestReadyzPrimaryDownBackupUp(t *testing.T) {
	dead, backup := newTestUpstream(t), newTestUpstream(t)
	deadURL := dead.URL + "/"
	dead.Close()
	cfg := testConfig(t)
	cfg.Upstreams = []UpstreamConfig{{Prefix: "/cdn/", URL: deadURL, UpstreamSettings: UpstreamSettings{Backup: []string{backup.URL + "/"}}}}
	_, base := serveNode(t, cfg)
	resp, body := httpapitest.Do(t, "GET", base+"/readyz", nil)
	var rd server.Readiness
	if err := json.Unmarshal(body, &rd); err != nil || resp.StatusCode != 200 || rd.Status != "ready" {
		t.Fatalf("/readyz with the primary down and the backup up: %d %s (%v)", resp.StatusCode, body, err)
	}
}
