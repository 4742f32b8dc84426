package edge

import (
	"errors"
	"testing"
)

// TestSetUpstreams: a reload moves a prefix to another upstream; requests
// after it fetch from the new one. Adding or removing a prefix is refused
// and leaves the routes as they were.
func TestSetUpstreams(t *testing.T) {
	f := newFixture(t, nil)
	body := []byte("from the first upstream")
	f.up.put("/media/a.bin", body, "Cache-Control", "max-age=60")
	f.want(f.get("/cdn/a.bin"), 200, CacheMiss, body)

	second := newUpstream(t, f.clock)
	body2 := []byte("from the second upstream")
	second.put("/other/a.bin", body2, "Cache-Control", "max-age=60")
	moved := []Upstream{{Prefix: "/cdn/", URL: second.srv.URL + "/other/"}}
	if err := f.edge.CheckUpstreams(moved); err != nil {
		t.Fatal(err)
	}
	f.want(f.get("/cdn/a.bin"), 200, CacheHit, body) // CheckUpstreams changed nothing
	if err := f.edge.SetUpstreams([]Upstream{{Prefix: "/cdn/", URL: second.srv.URL + "/other/"}}); err != nil {
		t.Fatal(err)
	}
	f.want(f.get("/cdn/a.bin"), 200, CacheMiss, body2)
	if n := second.requests("/other/a.bin"); n != 1 {
		t.Fatalf("the new upstream got %d requests, want 1", n)
	}

	for _, ups := range [][]Upstream{
		{{Prefix: "/cdn/", URL: second.srv.URL}, {Prefix: "/more/", URL: second.srv.URL}},
		{{Prefix: "/elsewhere/", URL: second.srv.URL}},
	} {
		if err := f.edge.SetUpstreams(ups); !errors.Is(err, ErrPrefixes) {
			t.Fatalf("SetUpstreams(%v) = %v, want ErrPrefixes", ups, err)
		}
	}
	if err := f.edge.SetUpstreams([]Upstream{{Prefix: "/cdn/", URL: "ftp://x"}}); err == nil {
		t.Fatal("an ftp upstream was accepted")
	}
	f.want(f.get("/cdn/a.bin"), 200, CacheHit, body2)
}
