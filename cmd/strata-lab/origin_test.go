package main

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestParseBits(t *testing.T) {
	for in, want := range map[string]float64{"100Mbit": 12.5e6, "1Gbit": 125e6, "500kbit": 62500, "8": 1, "0": 0, "2mbit/s": 250e3} {
		got, err := parseBits(in)
		if err != nil || got != want {
			t.Errorf("parseBits(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "abc", "-1Mbit", "1e9Gbit", "NaN"} {
		if _, err := parseBits(in); err == nil {
			t.Errorf("parseBits(%q) accepted", in)
		}
	}
	d, err := parseDurations("2s, 6s,10s")
	if err != nil || len(d) != 3 || d[2] != 10*time.Second {
		t.Errorf("parseDurations = %v, %v", d, err)
	}
	if _, err := parseDurations("2s,0s"); err == nil {
		t.Error("a zero segment duration was accepted")
	}
}

// TestPeersReport tabulates the committed full run (docs/results/2026-11-24-peers) into a
// copy and checks the table and figures are written.
func TestPeersReport(t *testing.T) {
	dir := t.TempDir()
	for _, s := range []string{"strata", "nginx", "varnish", "trafficserver"} {
		b, err := os.ReadFile(filepath.Join("../../docs/results/2026-11-24-peers", s+".json"))
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(dir, s+".json"), b, 0o644)
	}
	var stdout, stderr bytes.Buffer
	if code := run([]string{"peers", dir}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	if !strings.Contains(stdout.String(), "| metric | strata | nginx | varnish | trafficserver | best peer |") {
		t.Errorf("table header missing:\n%s", stdout.String())
	}
	for _, f := range []string{"report.md", "peers-max-rate.svg", "peers-flash-writes.svg"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Error(err)
		}
	}
	if code := run([]string{"peers", t.TempDir()}, &stdout, &stderr); code == 0 {
		t.Error("an empty directory was tabulated")
	}
}

// TestOriginMaxAgeFlags: --max-age and --catalog-max-age reach the
// Cache-Control of the media and of the catalog; bad values are refused.
func TestOriginMaxAgeFlags(t *testing.T) {
	_, lib, h, err := parseOrigin([]string{"--titles", "1", "--segment-durations", "2s", "--max-length", "10s", "--delay", "0",
		"--bandwidth", "0", "--max-age", "7s", "--catalog-max-age", "3s"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(h)
	defer ts.Close()
	seg := ts.URL + "/videos/" + lib.Titles()[0].ID + "/" + lib.Titles()[0].Renditions[0].ID + "/1.m4s"
	for url, want := range map[string]string{seg: "public, max-age=7", ts.URL + "/videos": "public, max-age=3"} {
		resp, err := http.Get(url)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || resp.Header.Get("Cache-Control") != want {
			t.Errorf("GET %s: %d, Cache-Control %q; want 200, %q", url, resp.StatusCode, resp.Header.Get("Cache-Control"), want)
		}
	}
	for _, bad := range [][]string{{"--max-age", "0s"}, {"--max-age", "-5s"}, {"--max-age", "1500ms"}, {"--catalog-max-age", "0s"}} {
		if _, _, _, err := parseOrigin(bad, io.Discard); err == nil {
			t.Errorf("parseOrigin(%v) accepted", bad)
		}
	}
}
