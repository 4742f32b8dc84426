package httpapi

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"
)

// compressServer serves, through Compress, a DASH manifest, a media
// segment and a JSON file of the whole-file tier, each with a strong ETag
// and ranges (http.ServeContent, as the modules do), and a short playlist.
func compressServer(t *testing.T) (*httptest.Server, []byte) {
	t.Helper()
	manifest := []byte(strings.Repeat(`<SegmentURL media="seg.m4s"/>`+"\n", 200))
	mux := http.NewServeMux()
	serve := func(pattern, ct, etag string, body []byte) {
		mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", ct)
			w.Header().Set("ETag", etag)
			http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(body))
		})
	}
	serve("GET /v/manifest.mpd", "application/dash+xml", `"m1"`, manifest)
	serve("GET /v/1.m4s", "video/iso.segment", `"s1"`, manifest) // media: never, whatever its bytes
	serve("GET /files/big.json", "application/json", `"f1"`, manifest)
	// A HEAD answered with headers only, as the videos module does.
	mux.HandleFunc("HEAD /v/bare.mpd", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/dash+xml")
		w.Header().Set("Content-Length", strconv.Itoa(len(manifest)))
	})
	// An upstream's response the edge forwards.
	mux.HandleFunc("GET /cdn/list.json", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("X-Strata-Cache", "MISS")
		w.Header().Set("Vary", "Foo")
		w.Write(manifest)
	})
	serve("GET /v/short.m3u8", "application/vnd.apple.mpegurl", `"p1"`, []byte("#EXTM3U\n"))
	srv := httptest.NewServer(Compress(mux, CompressOptions{SkipPrefixes: []string{"/files/"}, PassHeader: "X-Strata-Cache"}))
	t.Cleanup(srv.Close)
	return srv, manifest
}

// fetch sends a request with the given header fields, and the transport's
// own gzip handling off, so the test sees the bytes on the wire.
func fetch(t *testing.T, method, url string, fields ...string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(fields); i += 2 {
		req.Header.Set(fields[i], fields[i+1])
	}
	c := &http.Client{Transport: &http.Transport{DisableCompression: true}}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, b
}

func gunzip(t *testing.T, b []byte) []byte {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("not gzip: %v", err)
	}
	out, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestCompressManifest(t *testing.T) {
	srv, manifest := compressServer(t)
	resp, b := fetch(t, "GET", srv.URL+"/v/manifest.mpd", "Accept-Encoding", "br;q=1.0, gzip;q=0.8")
	h := resp.Header
	if resp.StatusCode != 200 || h.Get("Content-Encoding") != "gzip" {
		t.Fatalf("status %d, Content-Encoding %q: want a gzip 200", resp.StatusCode, h.Get("Content-Encoding"))
	}
	if !bytes.Equal(gunzip(t, b), manifest) {
		t.Fatal("the decompressed body is not the manifest")
	}
	if len(b) >= len(manifest)/4 {
		t.Errorf("compressed %d of %d bytes: a repetitive manifest should shrink more", len(b), len(manifest))
	}
	if h.Get("Vary") != "Accept-Encoding" || h.Get("ETag") != `"m1-strata-gzip"` {
		t.Errorf("Vary %q, ETag %q: want Accept-Encoding and a distinct tag", h.Get("Vary"), h.Get("ETag"))
	}
	if cl := h.Get("Content-Length"); h.Get("Accept-Ranges") != "" || cl != "" && cl != strconv.Itoa(len(b)) {
		t.Errorf("Accept-Ranges %q, Content-Length %q on an encoded body", h.Get("Accept-Ranges"), h.Get("Content-Length"))
	}
	// Revalidating the gzip encoding ends in a 304 with its tag.
	resp, _ = fetch(t, "GET", srv.URL+"/v/manifest.mpd", "Accept-Encoding", "gzip", "If-None-Match", `"m1-strata-gzip"`)
	if resp.StatusCode != 304 || resp.Header.Get("ETag") != `"m1-strata-gzip"` {
		t.Errorf("revalidation: status %d, ETag %q; want 304 with \"m1-strata-gzip\"", resp.StatusCode, resp.Header.Get("ETag"))
	}
	// HEAD says what GET would send, also when the handler writes nothing.
	for _, p := range []string{"/v/manifest.mpd", "/v/bare.mpd"} {
		resp, _ = fetch(t, "HEAD", srv.URL+p, "Accept-Encoding", "gzip")
		if h := resp.Header; h.Get("Content-Encoding") != "gzip" || h.Get("Content-Length") != "" || h.Get("Vary") != "Accept-Encoding" {
			t.Errorf("HEAD %s: Content-Encoding %q, Content-Length %q, Vary %q", p, h.Get("Content-Encoding"), h.Get("Content-Length"), h.Get("Vary"))
		}
	}
	if resp, _ = fetch(t, "HEAD", srv.URL+"/v/bare.mpd"); resp.Header.Get("Vary") != "Accept-Encoding" {
		t.Errorf("HEAD without gzip: Vary %q", resp.Header.Get("Vary"))
	}
}

func TestCompressOnlyWhenAllowed(t *testing.T) {
	srv, manifest := compressServer(t)
	for _, c := range []struct {
		name, path string
		fields     []string
		status     int
		vary       bool
	}{
		{"no Accept-Encoding", "/v/manifest.mpd", nil, 200, true},
		{"gzip refused", "/v/manifest.mpd", []string{"Accept-Encoding", "gzip;q=0, deflate"}, 200, true},
		{"a range", "/v/manifest.mpd", []string{"Accept-Encoding", "gzip", "Range", "bytes=0-99"}, 206, true},
		{"media", "/v/1.m4s", []string{"Accept-Encoding", "gzip"}, 200, false},
		{"a whole file", "/files/big.json", []string{"Accept-Encoding", "gzip"}, 200, false},
		{"too short", "/v/short.m3u8", []string{"Accept-Encoding", "gzip"}, 200, true},
		{"forwarded by the edge", "/cdn/list.json", []string{"Accept-Encoding", "gzip"}, 200, false},
		{"forwarded, no gzip", "/cdn/list.json", nil, 200, false},
	} {
		resp, b := fetch(t, "GET", srv.URL+c.path, c.fields...)
		if resp.StatusCode != c.status || resp.Header.Get("Content-Encoding") != "" {
			t.Errorf("%s: status %d, Content-Encoding %q; want %d as is", c.name, resp.StatusCode, resp.Header.Get("Content-Encoding"), c.status)
		}
		if c.path != "/v/short.m3u8" && !bytes.HasPrefix(manifest, b) {
			t.Errorf("%s: the body is not the identity bytes", c.name)
		}
		if got := strings.Contains(resp.Header.Get("Vary"), "Accept-Encoding"); got != c.vary {
			t.Errorf("%s: Vary %q, want Accept-Encoding: %v", c.name, resp.Header.Get("Vary"), c.vary)
		}
		if et := resp.Header.Get("ETag"); strings.Contains(et, GzipSuffix) {
			t.Errorf("%s: identity bytes tagged %s", c.name, et)
		}
	}
}

func TestAcceptsGzip(t *testing.T) {
	for v, want := range map[string]bool{
		"": false, "gzip": true, "GZIP": true, "deflate, gzip": true, "gzip;q=0": false, "gzip; q=0.001": true,
		"*": true, "*;q=0": false, "gzip;q=0, *": false, "identity": false, "x-gzip": true, "br": false,
	} {
		if got := AcceptsGzip([]string{v}); got != want {
			t.Errorf("AcceptsGzip(%q) = %v, want %v", v, got, want)
		}
	}
}

// TestCompressibleFastPath: the table lookup for bare types answers as
// the parse does, for every form a Content-Type can take.
func TestCompressibleFastPath(t *testing.T) {
	for ct, want := range map[string]bool{
		"application/json":                true,
		"application/json; charset=utf-8": true,
		"Application/JSON":                true,
		" application/json":               true,
		"application/dash+xml":            true,
		"video/iso.segment":               false,
		"video/mp4":                       false,
		"":                                false,
		"application/json\"":              false,
		"text/html;":                      true,
	} {
		if got := Compressible(ct); got != want {
			t.Errorf("Compressible(%q) = %v, want %v", ct, got, want)
		}
	}
}

// TestCompressLength: an encoded answer whose identity length is known
// (up to maxBufferedGzip) is sent with the encoding's Content-Length, not
// chunked; one whose handler flushes, or of unknown length, is streamed.
func TestCompressLength(t *testing.T) {
	var b strings.Builder
	for i := range 2000 { // little repetition: the encoding is over net/http's 2 KiB buffer
		fmt.Fprintf(&b, "<S t=\"%d\" d=\"%d\"/>\n", i*7919%100003, i*104729%99991)
	}
	body := []byte(b.String())
	h := Compress(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/dash+xml")
		if r.URL.Path != "/unknown" {
			w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		}
		w.Write(body[:100])
		if r.URL.Path == "/flushed" {
			http.NewResponseController(w).Flush()
		}
		w.Write(body[100:])
	}), CompressOptions{})
	srv := httptest.NewServer(h)
	defer srv.Close()
	for _, c := range []struct {
		path   string
		length bool
	}{{"/known", true}, {"/flushed", false}, {"/unknown", false}} {
		req, _ := http.NewRequest("GET", srv.URL+c.path, nil)
		req.Header.Set("Accept-Encoding", "gzip")
		resp, err := (&http.Client{Transport: &http.Transport{DisableCompression: true}}).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		zr, err := gzip.NewReader(bytes.NewReader(raw))
		if err != nil {
			t.Fatalf("%s: %v", c.path, err)
		}
		got, err := io.ReadAll(zr)
		if err != nil || !bytes.Equal(got, body) {
			t.Fatalf("%s: decoded %d bytes (%v), want the %d sent", c.path, len(got), err, len(body))
		}
		if hasLength := resp.ContentLength == int64(len(raw)); hasLength != c.length || c.length && len(resp.TransferEncoding) > 0 {
			t.Errorf("%s: Content-Length %d for %d bytes, Transfer-Encoding %v; want a length: %v",
				c.path, resp.ContentLength, len(raw), resp.TransferEncoding, c.length)
		}
	}
}
