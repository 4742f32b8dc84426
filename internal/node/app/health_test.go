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
}
