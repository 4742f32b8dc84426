package server

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"testing"
	"time"

	"github.com/strata-media/strata/internal/httpapi/httpapitest"
	"github.com/strata-media/strata/internal/ident"
	"github.com/strata-media/strata/internal/storage/origin"
)

// TestFlashHitsReturnTheirBuffers: answers served from flash (plain,
// one range, a multipart range set, a HEAD, a 304) carry the segment's
// bytes, and every one returns its hit buffer: none is held after.
func TestFlashHitsReturnTheirBuffers(t *testing.T) {
	ts, syn, eng := testServer(t)
	var o ident.Object
	var want []byte
	for i := 0; o.Video == "" && i < 30; i++ {
		for _, obj := range objectsOf(t, syn) {
			resp, body := httpapitest.Do(t, "GET", ts.URL+"/videos/"+obj.Path(), nil)
			if resp.Header.Get("X-Strata-Tier") == "ssd" && len(body) > 100 {
				o, want = obj, body
				break
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	if o.Video == "" {
		t.Fatal("no flash hit")
	}
	url := ts.URL + "/videos/" + o.Path()
	resp, _ := httpapitest.Do(t, "HEAD", url, nil)
	etag := resp.Header.Get("ETag")
	for _, c := range []struct {
		method string
		hdr    []string
		code   int
		body   func(*http.Response, []byte) error
	}{
		{"GET", nil, 200, whole(want)},
		{"HEAD", nil, 200, nil},
		{"GET", []string{"Range", "bytes=10-99"}, 206, whole(want[10:100])},
		{"GET", []string{"Range", "bytes=0-0,50-59"}, 206, parts(want[0:1], want[50:60])},
		{"GET", []string{"If-None-Match", etag}, 304, nil},
	} {
		resp, body := httpapitest.Do(t, c.method, url, nil, c.hdr...)
		if resp.StatusCode != c.code || resp.Header.Get("X-Strata-Tier") != "ssd" {
			t.Errorf("%s %v: %d from %q, want %d from ssd", c.method, c.hdr, resp.StatusCode, resp.Header.Get("X-Strata-Tier"), c.code)
			continue
		}
		if c.body != nil {
			if err := c.body(resp, body); err != nil {
				t.Errorf("%s %v: %v", c.method, c.hdr, err)
			}
		}
	}
	var hm = eng.Stats().SSD.HitMemory
	for i := 0; hm.HeldBytes != 0 && i < 100; i++ {
		time.Sleep(10 * time.Millisecond)
		hm = eng.Stats().SSD.HitMemory
	}
	if hm.HeldBytes != 0 || hm.Hits < 5 {
		t.Errorf("hit memory after the answers: %+v", *hm)
	}
}

func whole(want []byte) func(*http.Response, []byte) error {
	return func(_ *http.Response, body []byte) error {
		if !bytes.Equal(body, want) {
			return fmt.Errorf("%d bytes, not the segment's %d", len(body), len(want))
		}
		return nil
	}
}

func parts(want ...[]byte) func(*http.Response, []byte) error {
	return func(resp *http.Response, body []byte) error {
		_, params, err := mime.ParseMediaType(resp.Header.Get("Content-Type"))
		if err != nil {
			return err
		}
		mr := multipart.NewReader(bytes.NewReader(body), params["boundary"])
		for i, w := range want {
			p, err := mr.NextPart()
			if err != nil {
				return fmt.Errorf("part %d: %v", i, err)
			}
			got, _ := io.ReadAll(p)
			if !bytes.Equal(got, w) {
				return fmt.Errorf("part %d: %q, want %q", i, got, w)
			}
		}
		return nil
	}
}

// objectsOf lists the library's media segments.
func objectsOf(t testing.TB, org origin.Origin) []ident.Object {
	t.Helper()
	titles, err := org.Catalog(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var out []ident.Object
	for _, tt := range titles {
		for _, r := range tt.Renditions {
			for n := r.StartNumber; n < r.StartNumber+r.Segments; n++ {
				out = append(out, ident.Object{Video: tt.ID, Rendition: r.ID, Name: ident.SegmentName(uint32(n))})
			}
		}
	}
	return out
}
