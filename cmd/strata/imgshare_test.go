package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/strata-media/strata/internal/media/images"
	"github.com/strata-media/strata/internal/node/app"
	"github.com/strata-media/strata/internal/storage/s3test"
)

// Two nodes (two data directories) over one bucket, as behind a load
// balancer: an image uploaded through one is served by the other, and a
// re-upload or a delete through one is seen by the other within
// [files] stat_ttl (1 s here; the loops below give it 20 s).
func TestServeImagesSharedBucket(t *testing.T) {
	if testing.Short() {
		t.Skip("two nodes and an S3 server")
	}
	srv := s3test.Start(t)
	t.Setenv("AWS_ACCESS_KEY_ID", s3test.AccessKey)
	t.Setenv("AWS_SECRET_ACCESS_KEY", s3test.SecretKey)
	s3url := "s3://" + s3test.Bucket + "/shared?endpoint=" + url.QueryEscape(srv.Endpoint) + "&path_style=true&region=us-east-1"
	const token = "imgshare-token"
	var nodes []string
	for range 2 {
		cfg := smallConfig(t.TempDir())
		cfg.Origin, cfg.AdminToken = s3url, token
		cfg.Files.StatTTL.Duration = time.Second
		if err := cfg.Resolve(); err != nil {
			t.Fatal(err)
		}
		n, err := app.Open(context.Background(), cfg, app.Options{Logger: warnLogger(io.Discard)})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		served := make(chan error, 1)
		go func() { served <- n.Serve(ctx) }()
		t.Cleanup(func() {
			cancel()
			if err := errors.Join(<-served, n.Close()); err != nil {
				t.Error(err)
			}
		})
		nodes = append(nodes, n.Description().URL)
	}
	a, b := nodes[0], nodes[1]
	upload := func(base string, seed uint64) images.Meta {
		t.Helper()
		req, _ := http.NewRequest("PUT", base+"/images/shared", bytes.NewReader(testJPEG(t, 1600, 1200, seed)))
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		var m images.Meta
		if resp.StatusCode/100 != 2 || json.Unmarshal(body, &m) != nil {
			t.Fatalf("upload: %d %s", resp.StatusCode, body)
		}
		return m
	}
	// until polls the metadata of the image on base until ok says yes,
	// for at most 20 s (the bound is liveness, not a timing assertion).
	until := func(base string, ok func(code int, m images.Meta) bool) {
		t.Helper()
		for i := 0; ; i++ {
			resp, err := http.Get(base + "/images/shared")
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			var m images.Meta
			json.Unmarshal(body, &m)
			if ok(resp.StatusCode, m) {
				return
			}
			if i == 200 {
				t.Fatalf("%s: still %d %s after 20 s", base, resp.StatusCode, body)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	m1 := upload(a, 1)
	onA := getVariants(t, a, m1)
	for name, data := range getVariants(t, b, m1) {
		if !bytes.Equal(data, onA[name]) {
			t.Fatalf("%s differs on B", name)
		}
	}
	m2 := upload(a, 2)
	until(b, func(code int, m images.Meta) bool {
		return code == 200 && m.Variants[0].ETag == m2.Variants[0].ETag
	})
	getVariants(t, b, m2)
	req, _ := http.NewRequest("DELETE", a+"/images/shared", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("delete: %v %v", resp, err)
	}
	resp.Body.Close()
	until(b, func(code int, _ images.Meta) bool { return code == http.StatusNotFound })
	// Uploaded through B, served by A.
	m3 := upload(b, 3)
	until(a, func(code int, m images.Meta) bool {
		return code == 200 && m.Variants[0].ETag == m3.Variants[0].ETag
	})
	getVariants(t, a, m3)
}
