package app

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil/promlint"
)

// TestMetricsFollowPrometheusConventions lints a full node's /metrics
// (engine, files, edge, HTTP routes, build info) with Prometheus's own
// linter: base units, _total on counters, no unit-less rates. It also
// checks that requests are counted by route and status.
func TestMetricsFollowPrometheusConventions(t *testing.T) {
	cfg := testConfig(t)
	cfg.Upstreams = []UpstreamConfig{{Prefix: "/edge/", URL: "http://127.0.0.1:9"}}
	cfg.Images.Enabled = true // an edge opens its image store only when told to
	n, err := Open(context.Background(), cfg, Options{Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	runNode(t, n)
	url := n.Description().URL
	get(t, url+"/videos/none/r/x.m4s")
	get(t, url+"/nothing")
	_, body := get(t, url+"/metrics")
	checkGrafanaDashboard(t, body)
	problems, err := promlint.New(bytes.NewReader(body)).Lint()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("%s: %s", p.Metric, p.Text)
	}
	for _, want := range []string{
		`strata_http_requests_total{code="404",route="GET /videos/{video}/{rendition}/{name}"} 1`,
		`strata_http_requests_total{code="404",route="unmatched"} 1`,
		`strata_build_info{`,
		`strata_tier_budget_bytes{tier="ram"}`,
		`strata_edge_requests_total`,
		`strata_origin_read_duration_seconds_count 1`,
		`strata_edge_upstream_response_duration_seconds_count`,
	} {
		if !bytes.Contains(body, []byte(want)) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	if t.Failed() {
		for _, l := range strings.Split(string(body), "\n") {
			if strings.HasPrefix(l, "strata_http_requests") {
				t.Log(l)
			}
		}
	}
}

// checkGrafanaDashboard: every metric deploy/grafana-dashboard.json
// queries is one a node exports, so that the dashboard in the
// repository does not drift from the code.
func checkGrafanaDashboard(t *testing.T, metrics []byte) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "..", "deploy", "grafana-dashboard.json"))
	if err != nil {
		t.Fatal(err)
	}
	var dash struct {
		Panels []struct {
			Title   string
			Targets []struct{ Expr string }
		}
	}
	if err := json.Unmarshal(b, &dash); err != nil {
		t.Fatalf("grafana-dashboard.json: %v", err)
	}
	name := regexp.MustCompile(`\b(?:strata|process)_[a-z0-9_]+`)
	seen := 0
	for _, p := range dash.Panels {
		for _, tg := range p.Targets {
			for _, m := range name.FindAllString(tg.Expr, -1) {
				seen++
				if !bytes.Contains(metrics, []byte("\n"+m+"{")) && !bytes.Contains(metrics, []byte("\n"+m+" ")) {
					t.Errorf("panel %q queries %s, which the node does not export", p.Title, m)
				}
			}
		}
	}
	if seen < 10 {
		t.Fatalf("the dashboard queries only %d metrics", seen)
	}
}
