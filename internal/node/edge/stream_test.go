package edge

import (
	"fmt"
	"io"
	"net/http"
	"testing"
	"time"
)

// A full GET of an object larger than a slice but within MaxWhole is one
// upstream request, stored whole; a Range request of another object still
// pulls only the slices it covers.
func TestWholeInOneRequest(t *testing.T) {
	f := newFixture(t, func(o *Options) { o.MaxWhole = 1 << 20 })
	body := payload(5*(64<<10)+77, 21)
	f.up.put("/media/seg.m4s", body, "Cache-Control", "max-age=600", "Etag", `"s1"`)
	f.want(f.get("/cdn/seg.m4s"), 200, CacheMiss, body)
	f.want(f.get("/cdn/seg.m4s"), 200, CacheHit, body)
	f.want(f.get("/cdn/seg.m4s", "Range", "bytes=100000-100099"), 206, CacheHit, body[100000:100100])
	if got := f.up.rangesOf("/media/seg.m4s"); fmt.Sprint(got) != "[bytes=0-1048575]" {
		t.Fatalf("upstream ranges %q, want one request", got)
	}
	f.up.put("/media/other.m4s", body, "Cache-Control", "max-age=600", "Etag", `"o1"`)
	f.want(f.get("/cdn/other.m4s", "Range", "bytes=100000-100099"), 206, CacheMiss, body[100000:100100])
	if got := f.up.rangesOf("/media/other.m4s"); fmt.Sprint(got) != "[bytes=0-65535 bytes=65536-131071]" {
		t.Fatalf("upstream ranges %q, want the slices of the range", got)
	}
}

// A full GET of an object larger than MaxWhole stores its first slice from
// the first request and fetches the others slice by slice; the client gets
// the whole body.
func TestFullGetBeyondMaxWhole(t *testing.T) {
	f := newFixture(t, func(o *Options) { o.MaxWhole = 128 << 10 })
	body := payload(4*(64<<10)+5, 22)
	f.up.put("/media/long.mp4", body, "Cache-Control", "max-age=600", "Etag", `"l1"`)
	f.want(f.get("/cdn/long.mp4"), 200, CacheMiss, body)
	f.want(f.get("/cdn/long.mp4"), 200, CacheHit, body)
	want := "[bytes=0-131071 bytes=65536-131071 bytes=131072-196607 bytes=196608-262143 bytes=262144-262148]"
	if got := f.up.rangesOf("/media/long.mp4"); fmt.Sprint(got) != want {
		t.Fatalf("upstream ranges %q, want %s", got, want)
	}
}

// A miss is answered as the upstream's body arrives: the client reads the
// first half while the upstream still holds back the second, and so does a
// second client that joins the fetch. The stored copy is whole.
func TestStreamsMiss(t *testing.T) {
	f := newFixture(t, nil)
	body := payload(200<<10, 23)
	release, finished := make(chan struct{}), make(chan struct{})
	f.up.handle("/media/live.m4s", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Range", fmt.Sprintf("bytes 0-%d/%d", len(body)-1, len(body)))
		w.Header().Set("Content-Length", fmt.Sprint(len(body)))
		w.WriteHeader(http.StatusPartialContent)
		w.Write(body[:len(body)/2])
		w.(http.Flusher).Flush()
		select {
		case <-release:
		case <-time.After(10 * time.Second): // a bound, not a measurement
		}
		w.Write(body[len(body)/2:])
		close(finished)
	}, "Cache-Control", "max-age=600", "Etag", `"v1"`)
	// The client whose request fetches, then one that joins the fetch:
	// each reads the first half while the upstream holds back the second.
	var resps []*http.Response
	for _, want := range []string{CacheMiss, CacheCoalesced} {
		resp, err := http.Get(f.srv.URL + "/cdn/live.m4s")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if resp.StatusCode != 200 || resp.Header.Get(HeaderCache) != want || resp.ContentLength != int64(len(body)) {
			t.Fatalf("%d %s (want %s), length %d", resp.StatusCode, resp.Header.Get(HeaderCache), want, resp.ContentLength)
		}
		half := make([]byte, len(body)/2)
		if _, err := io.ReadFull(resp.Body, half); err != nil || string(half) != string(body[:len(half)]) {
			t.Fatalf("first half: %v", err)
		}
		select {
		case <-finished:
			t.Fatalf("%s: the client got its first half only after the upstream finished", want)
		default:
		}
		resps = append(resps, resp)
	}
	close(release) // the first halves reached the clients before the second left the upstream
	for _, resp := range resps {
		rest, err := io.ReadAll(resp.Body)
		if err != nil || string(rest) != string(body[len(body)/2:]) {
			t.Fatalf("second half differs (%d bytes, err %v)", len(rest), err)
		}
	}
	f.want(f.get("/cdn/live.m4s"), 200, CacheHit, body)
	if n := f.up.requests("/media/live.m4s"); n != 1 {
		t.Fatalf("upstream asked %d times", n)
	}
}

// A purge while a response is being fetched: later requests do not join
// that fetch, they fetch anew.
func TestPurgeDuringStream(t *testing.T) {
	f := newFixture(t, nil)
	body := payload(100<<10, 24)
	release := make(chan struct{})
	f.up.handle("/media/p.m4s", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Range", fmt.Sprintf("bytes 0-%d/%d", len(body)-1, len(body)))
		w.Header().Set("Content-Length", fmt.Sprint(len(body)))
		w.WriteHeader(http.StatusPartialContent)
		w.Write(body[:10])
		w.(http.Flusher).Flush()
		select {
		case <-release:
		case <-time.After(10 * time.Second): // a bound, not a measurement
		}
		w.Write(body[10:])
	}, "Cache-Control", "max-age=600", "Etag", `"p1"`)
	resp, err := http.Get(f.srv.URL + "/cdn/p.m4s")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.Header.Get(HeaderCache) != CacheMiss {
		t.Fatalf("first: %s", resp.Header.Get(HeaderCache))
	}
	if _, err := f.edge.Purge("/cdn/p.m4s"); err != nil {
		t.Fatal(err)
	}
	second := make(chan *result)
	go func() { second <- f.get("/cdn/p.m4s") }()
	close(release)
	if r := <-second; r.cache() != CacheMiss || string(r.body) != string(body) {
		t.Fatalf("after the purge: %s, %d bytes", r.cache(), len(r.body))
	}
	if n := f.up.requests("/media/p.m4s"); n != 2 {
		t.Fatalf("upstream asked %d times, want 2", n)
	}
}
