package httpcache

import (
	"net/http"
	"testing"
	"time"
)

// TestDefaultStripsCookies: a Policy with zero Options stores a shared
// response without the cookies of the client whose request fetched it, so
// a hit never hands them to another client.
func TestDefaultStripsCookies(t *testing.T) {
	now := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	p := NewPolicy(Options{})
	if got := p.Options().SetCookie; got != SetCookieStrip {
		t.Fatalf("default SetCookie = %v, want strip", got)
	}
	h := http.Header{"Cache-Control": {"max-age=300"}, "Set-Cookie": {"session=alice"}, "Set-Cookie2": {"x=1"}}
	e, refusal := p.Store(Request{Method: "GET", Header: http.Header{}}, Response{Status: 200, Header: h}, now, now)
	if refusal != Stored {
		t.Fatalf("not stored: %v", refusal)
	}
	if c := e.Header.Values("Set-Cookie"); len(c) != 0 {
		t.Errorf("stored Set-Cookie %q", c)
	}
	if c := e.Header.Values("Set-Cookie2"); len(c) != 0 {
		t.Errorf("stored Set-Cookie2 %q", c)
	}
	for _, s := range []string{"strip", "skip", "store"} {
		if p, err := ParseSetCookiePolicy(s); err != nil || p.String() != s {
			t.Errorf("ParseSetCookiePolicy(%q) = %v, %v", s, p, err)
		}
	}
	if _, err := ParseSetCookiePolicy("keep"); err == nil {
		t.Error("ParseSetCookiePolicy(keep): no error")
	}
}
