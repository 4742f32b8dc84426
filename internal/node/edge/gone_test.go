package edge

import (
	"log/slog"
	"net"
	"net/http"
	"testing"

	"github.com/strata-media/strata/internal/httpapi"
	"github.com/strata-media/strata/internal/httpapi/httpapitest"
)

// A client that half-closes after a request the edge must fetch from a
// slow upstream gets no answer: the connection closes without a status,
// never an empty 200 nor a 502 written to nobody; with the Front too,
// whose fast path hands the miss over to the general path.
func TestClientGoneGetsNoAnswer(t *testing.T) {
	for _, front := range []bool{false, true} {
		f := newFixture(t, nil)
		f.up.put("/media/slow.bin", payload(1000, 1), "Cache-Control", "max-age=300")
		gate, arrived := make(chan struct{}), make(chan struct{}, 1)
		f.up.mu.Lock()
		f.up.gate, f.up.arrived = gate, arrived
		f.up.mu.Unlock()
		t.Cleanup(func() { close(gate) }) // first: the upstream answers
		url := f.srv.URL
		if front {
			url = f.throughFront()
		}
		got := httpapitest.HalfClose(t, url, "GET /cdn/slow.bin HTTP/1.1\r\nHost: edge\r\n\r\n",
			func() { <-arrived }) // the edge waits on the upstream
		if len(got) != 0 {
			t.Errorf("front %v: a client gone got %q; want the connection closed without an answer", front, got)
		}
	}
}

// throughFront serves the edge mounted on an API behind the Front until
// the test ends, and returns its URL.
func (f *fixture) throughFront() string {
	f.t.Helper()
	log := slog.New(slog.DiscardHandler)
	api := httpapi.New(httpapi.Options{Logger: log})
	if err := api.Mount(f.edge); err != nil {
		f.t.Fatal(err)
	}
	fr := api.Front(httpapi.FrontOptions{Logger: log})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		f.t.Fatal(err)
	}
	hs := &http.Server{Handler: fr.Wrap(api.Handler()), ConnContext: fr.ConnContext}
	go hs.Serve(fr.Listener())
	go fr.Serve(ln)
	f.t.Cleanup(func() { fr.Close(); hs.Close() })
	return "http://" + ln.Addr().String()
}
