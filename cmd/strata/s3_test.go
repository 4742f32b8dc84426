package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"testing"

	"github.com/strata-media/strata/internal/media/mediatest"
	"github.com/strata-media/strata/internal/node/app"
	"github.com/strata-media/strata/internal/storage/s3test"
)

// strata ingest video --origin packages a title and uploads it to a real
// S3 server (versitygw), with progress on stderr and no secret printed;
// strata serve --origin then serves it from the bucket.
func TestIngestVideoS3(t *testing.T) {
	mediatest.Require(t)
	srv := s3test.Start(t)
	t.Setenv("AWS_ACCESS_KEY_ID", s3test.AccessKey)
	t.Setenv("AWS_SECRET_ACCESS_KEY", s3test.SecretKey)
	s3url := "s3://" + s3test.Bucket + "/vod?endpoint=" + url.QueryEscape(srv.Endpoint) + "&path_style=true&region=us-east-1"
	var out, errb bytes.Buffer
	err := runIngestVideo([]string{"--id", "cli", "--origin", s3url, "--segment-duration", "1s", "--levels", "none",
		"low=" + mediatest.Video(t, "nob-200k.mp4")}, &out, &errb)
	if err != nil {
		t.Fatalf("%v\n%s%s", err, out.String(), errb.String())
	}
	if !strings.Contains(errb.String(), "upload: ") || !strings.Contains(out.String(), "uploaded ") ||
		strings.Contains(out.String()+errb.String(), s3test.SecretKey) {
		t.Fatalf("output:\n%s\nstderr:\n%s", out.String(), errb.String())
	}
	cfg := smallConfig(t.TempDir())
	cfg.Origin = s3url
	if err := cfg.Resolve(); err != nil {
		t.Fatal(err)
	}
	var banner bytes.Buffer
	n, err := app.Open(context.Background(), cfg, app.Options{Logger: warnLogger(&banner)})
	if err != nil {
		t.Fatal(err)
	}
	printStart(&banner, n.Description(), "text")
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- n.Serve(ctx) }()
	defer func() {
		cancel()
		if err := errors.Join(<-served, n.Close()); err != nil {
			t.Error(err)
		}
	}()
	if !strings.Contains(banner.String(), "s3://strata-test/vod") || strings.Contains(banner.String(), s3test.SecretKey) {
		t.Fatalf("banner:\n%s", banner.String())
	}
	for _, path := range []string{"/videos/cli/manifest.mpd", "/videos/cli/low/1.m4s"} {
		resp, err := http.Get(n.Description().URL + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 || resp.Header.Get("X-Strata-Tier") != "origin" {
			t.Fatalf("GET %s: %d from %s", path, resp.StatusCode, resp.Header.Get("X-Strata-Tier"))
		}
	}
	// The bucket's request counters: the two reads were GETs; read again,
	// from RAM, they send none.
	base := n.Description().URL
	gets := getStats(t, base)["s3"]["get"]
	if gets < 2 {
		t.Fatalf("/stats s3 section after two reads from the bucket: %v", getStats(t, base)["s3"])
	}
	for _, path := range []string{"/videos/cli/manifest.mpd", "/videos/cli/low/1.m4s"} {
		if _, tier := get(t, base+path); tier != "ram" {
			t.Fatalf("GET %s again: from %s", path, tier)
		}
	}
	if again := getStats(t, base)["s3"]["get"]; again != gets {
		t.Fatalf("reads from RAM sent %v GETs to the bucket", again-gets)
	}
	if m := metricsText(t, base); !strings.Contains(m, `strata_s3_requests_total{kind="get"}`) {
		t.Fatal("/metrics has no strata_s3_requests_total")
	}
	// strata ingest file --origin stores a whole file in the bucket,
	// probed there (its play-out time read with ranged GETs), and the
	// node serves it.
	out.Reset()
	mp4 := mediatest.Video(t, "nob-200k.mp4")
	if err := runIngestFile([]string{"--id", "f.mp4", "--origin", s3url, mp4}, &out, &errb); err != nil {
		t.Fatalf("ingest file --origin: %v\n%s", err, errb.String())
	}
	if !strings.Contains(out.String(), "stored f.mp4") || strings.Contains(out.String(), ", 0 s") {
		t.Fatalf("ingest file --origin: %s", out.String())
	}
	want, err := os.ReadFile(mp4)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.Get(n.Description().URL + "/files/f.mp4")
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || resp.StatusCode != 200 || !bytes.Equal(got, want) {
		t.Fatalf("GET /files/f.mp4: %d, %d bytes of %d: %v", resp.StatusCode, len(got), len(want), err)
	}
}

// metricsText is GET /metrics of the server at base.
func metricsText(t *testing.T, base string) string {
	t.Helper()
	resp, err := http.Get(base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("GET /metrics: %d %v", resp.StatusCode, err)
	}
	return string(b)
}
