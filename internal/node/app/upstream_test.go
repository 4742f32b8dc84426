package app

import (
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// The [[upstream]] settings are read from the file, defaults filled for
// those left out; bad values are refused naming the key.
func TestUpstreamSettings(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "c.toml")
	os.WriteFile(p, []byte("[[upstream]]\nprefix = \"/cdn/\"\nurl = \"http://127.0.0.1:9/\"\nconnect_timeout = \"2s\"\nattempts = 3\nmax_idle_conns = 8\n"), 0o644)
	cfg := testConfig(t)
	if err := DecodeConfigFile(p, &cfg, io.Discard); err != nil {
		t.Fatal(err)
	}
	if err := cfg.Resolve(); err != nil {
		t.Fatal(err)
	}
	want := DefaultUpstreamSettings()
	want.ConnectTimeout, want.Attempts, want.MaxIdleConns = Duration{2 * time.Second}, 3, 8
	if got := cfg.Upstreams[0].UpstreamSettings; !reflect.DeepEqual(got, want) {
		t.Errorf("settings %+v, want %+v", got, want)
	}
	for _, c := range []struct {
		mod  func(*UpstreamConfig)
		want string
	}{
		{func(u *UpstreamConfig) { u.URL = "ftp://origin/" }, "url"},
		{func(u *UpstreamConfig) { u.URL = "http:///x" }, "url"},
		{func(u *UpstreamConfig) { u.ConnectTimeout.Duration = -time.Second }, "connect_timeout"},
		{func(u *UpstreamConfig) { u.HeaderTimeout.Duration = -time.Second }, "header_timeout"},
		{func(u *UpstreamConfig) { u.FetchTimeout.Duration = -time.Second }, "fetch_timeout"},
		{func(u *UpstreamConfig) { u.IdleTimeout.Duration = -time.Second }, "idle_timeout"},
		{func(u *UpstreamConfig) { u.RetryBackoff.Duration = -time.Second }, "retry_backoff"},
		{func(u *UpstreamConfig) { u.MaxIdleConns = -1 }, "max_idle_conns"},
		{func(u *UpstreamConfig) { u.Attempts = 11 }, "attempts"},
		{func(u *UpstreamConfig) { u.Attempts = -1 }, "attempts"},
		{func(u *UpstreamConfig) { u.Prefix = "cdn" }, "prefix"},
		{func(u *UpstreamConfig) { u.Backup = []string{"http://b/", "ftp://c/"} }, "backup"},
		{func(u *UpstreamConfig) { u.FailTimeout.Duration = -time.Second }, "fail_timeout"},
	} {
		bad := cfg
		bad.Upstreams = []UpstreamConfig{cfg.Upstreams[0]}
		c.mod(&bad.Upstreams[0])
		if err := bad.Resolve(); !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v", c.want, err)
		}
	}
}

// A reload with a bad upstream setting is refused, naming the key, and
// the running settings stay; one with a good setting is put in force.
func TestReloadUpstreamSettings(t *testing.T) {
	up := newTestUpstream(t)
	cfg := testConfig(t)
	cfg.Upstreams = []UpstreamConfig{{Prefix: "/cdn/", URL: up.URL + "/"}}
	n, _, _ := servedNode(t, cfg)
	same := cfg
	same.Upstreams = []UpstreamConfig{{Prefix: "/cdn/", URL: up.URL + "/", UpstreamSettings: DefaultUpstreamSettings()}}
	if r, err := n.Reload(same); err != nil || len(r.Changed) != 0 {
		t.Errorf("the defaults written out: %+v %v", r, err)
	}
	bad := cfg
	bad.Upstreams = []UpstreamConfig{{Prefix: "/cdn/", URL: up.URL + "/", UpstreamSettings: UpstreamSettings{Attempts: 99}}}
	if _, err := n.Reload(bad); err == nil || !strings.Contains(err.Error(), "attempts") {
		t.Errorf("attempts 99: %v", err)
	}
	good := cfg
	good.Upstreams = []UpstreamConfig{{Prefix: "/cdn/", URL: up.URL + "/", UpstreamSettings: UpstreamSettings{Attempts: 1}}}
	if r, err := n.Reload(good); err != nil || len(r.Changed) != 1 || r.Changed[0] != "upstream" {
		t.Errorf("attempts 1: %+v %v", r, err)
	}
}

// An [[upstream]] table's backup answers when its primary is down: the
// node's client sees no error.
func TestNodeUpstreamBackup(t *testing.T) {
	dead := newTestUpstream(t)
	deadURL := dead.URL + "/"
	dead.Close()
	backup := newTestUpstream(t)
	cfg := testConfig(t)
	cfg.Upstreams = []UpstreamConfig{{Prefix: "/cdn/", URL: deadURL, UpstreamSettings: UpstreamSettings{Backup: []string{backup.URL + "/"}}}}
	if err := cfg.Resolve(); err != nil {
		t.Fatal(err)
	}
	_, base := serveNode(t, cfg)
	for i := range 3 {
		p := "/cdn/seg-" + string(rune('a'+i))
		if resp, body := get(t, base+p); resp.StatusCode != 200 || string(body) != "upstream bytes of /seg-"+string(rune('a'+i)) {
			t.Fatalf("%s: %d %q", p, resp.StatusCode, body)
		}
	}
	if backup.requests("/seg-c") != 1 {
		t.Errorf("the backup was not asked")
	}
}

// An edge node's dashboard shows the edge: its history samples carry the
// cache's answers and each upstream server's requests, errors and time,
// the page a table of them and what to do without titles; neither names
// the upstream's address.
func TestEdgeDashboard(t *testing.T) {
	up := newTestUpstream(t)
	cfg := testConfig(t)
	cfg.Upstreams = []UpstreamConfig{{Prefix: "/cdn/", URL: up.URL + "/"}}
	_, base := serveNode(t, cfg)
	for range 2 {
		get(t, base+"/cdn/a.m4s")
	}
	_, body := get(t, base+"/stats/history")
	var h struct {
		Current struct {
			Edge *struct {
				Hits, Misses uint64
				Upstreams    []struct {
					Name     string  `json:"name"`
					Requests uint64  `json:"requests"`
					WaitedMS float64 `json:"waited_ms"`
				} `json:"upstreams"`
			} `json:"edge"`
		} `json:"current"`
	}
	if err := json.Unmarshal(body, &h); err != nil {
		t.Fatal(err)
	}
	e := h.Current.Edge
	if e == nil || e.Hits != 1 || e.Misses != 1 || len(e.Upstreams) != 1 || e.Upstreams[0].Name != "/cdn/ primary" ||
		e.Upstreams[0].Requests != 1 || e.Upstreams[0].WaitedMS <= 0 {
		t.Fatalf("history's edge sample: %s", body)
	}
	if _, m := get(t, base+"/metrics"); !strings.Contains(string(m), `strata_edge_upstream_server_requests_total{prefix="/cdn/",server="primary"} 1`) {
		t.Error("/metrics lacks the upstream server's requests")
	}
	_, page := get(t, base+"/")
	for _, want := range []string{"Edge (at page load)", "<code>/cdn/ primary</code>", "An edge node has no titles of its own", "edgeCharts"} {
		if !strings.Contains(string(page), want) {
			t.Errorf("the dashboard lacks %q", want)
		}
	}
	for _, p := range []string{"/", "/stats", "/stats/history"} {
		if _, b := get(t, base+p); strings.Contains(string(b), up.URL) {
			t.Errorf("%s names the upstream's address", p)
		}
	}
}
