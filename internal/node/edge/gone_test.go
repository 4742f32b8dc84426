package edge

import (
	"testing"

	"github.com/strata-media/strata/internal/httpapi/httpapitest"
)

// A client that half-closes after a request the edge must fetch from a
// slow upstream gets no answer: the connection closes without a status,
// never an empty 200 nor a 502 written to nobody.
func TestClientGoneGetsNoAnswer(t *testing.T) {
	f := newFixture(t, nil)
	f.up.put("/media/slow.bin", payload(1000, 1), "Cache-Control", "max-age=300")
	gate, arrived := make(chan struct{}), make(chan struct{}, 1)
	f.up.mu.Lock()
	f.up.gate, f.up.arrived = gate, arrived
	f.up.mu.Unlock()
	t.Cleanup(func() { close(gate) }) // first: the upstream answers

	got := httpapitest.HalfClose(t, f.srv.URL, "GET /cdn/slow.bin HTTP/1.1\r\nHost: edge\r\n\r\n",
		func() { <-arrived }) // the edge waits on the upstream
	if len(got) != 0 {
		t.Fatalf("a client gone got %q; want the connection closed without an answer", got)
	}
}
