package server

import (
	"context"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/strata-media/strata/internal/core/tier"
	"github.com/strata-media/strata/internal/httpapi"
	"github.com/strata-media/strata/internal/httpapi/httpapitest"
	"github.com/strata-media/strata/internal/ident"
	"github.com/strata-media/strata/internal/node/engine"
	"github.com/strata-media/strata/internal/storage/device"
	"github.com/strata-media/strata/internal/storage/origin"
	"github.com/strata-media/strata/internal/workload"
)

// slowOrigin is a capacity store whose reads wait until the test ends.
type slowOrigin struct {
	origin.Origin
	release chan struct{}
	arrived chan struct{} // a value for each read
}

func (s *slowOrigin) Get(ctx context.Context, o ident.Object) (origin.Object, error) {
	s.arrived <- struct{}{}
	<-s.release
	return s.Origin.Get(ctx, o)
}

// A client that half-closes after asking for an uncached segment, which
// waits on a slow capacity store, gets no answer: the connection closes
// without a status, never net/http's implicit empty 200 (which a cache in
// front could store as the segment) nor an error written to nobody. With
// a Range the request waits under net/http; without, the Front's fast
// path waits, and its hang-up must abort the handed-over request too.
func TestClientGoneGetsNoAnswer(t *testing.T) {
	for _, c := range []struct {
		name, rng string
		front     bool
	}{{"range", "Range: bytes=0-99\r\n", false}, {"whole", "", false}, {"front range", "Range: bytes=0-99\r\n", true}, {"front whole", "", true}} {
		slow, url := slowNode(t, c.front)
		titles, _ := slow.Catalog(context.Background())
		o := ident.Object{Video: titles[0].ID, Rendition: titles[0].Renditions[0].ID, Name: "1.m4s"}
		got := httpapitest.HalfClose(t, url, "GET /videos/"+o.Path()+" HTTP/1.1\r\nHost: strata\r\n"+c.rng+"\r\n",
			func() { <-slow.arrived }) // the engine waits on the store
		if len(got) != 0 {
			t.Errorf("%s: a client gone got %q; want the connection closed without an answer", c.name, got)
		}
	}
}

// slowNode serves the videos module over a slow capacity store, with the
// Front if front, until the test ends, and returns the store and the URL.
func slowNode(t *testing.T, front bool) (*slowOrigin, string) {
	t.Helper()
	ds := workload.NewDataset(workload.DatasetOptions{Titles: 1, MaxLength: time.Minute, Efficiency: 0.1, Seed: 5})
	syn, err := origin.NewSynthetic(ds, origin.SyntheticOptions{Seed: 5})
	if err != nil {
		t.Fatal(err)
	}
	slow := &slowOrigin{Origin: syn, release: make(chan struct{}), arrived: make(chan struct{}, 1)}
	log := slog.New(slog.DiscardHandler)
	eng, err := engine.New(engine.Options{Tier: tier.Options{RAMBytes: 1 << 20, BlockSize: 256 << 10}, Logger: log},
		device.NewMem(16<<20, 4096), slow)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { eng.Close() })
	api := httpapi.New(httpapi.Options{Logger: log})
	if err := api.Mount(NewVideos(eng, slow, Options{Logger: log})); err != nil {
		t.Fatal(err)
	}
	if !front {
		ts := httptest.NewServer(api.Handler())
		t.Cleanup(ts.Close)
		t.Cleanup(func() { close(slow.release) }) // first: the loads end
		return slow, ts.URL
	}
	fr := api.Front(httpapi.FrontOptions{Logger: log})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs := &http.Server{Handler: fr.Wrap(api.Handler()), ConnContext: fr.ConnContext}
	go hs.Serve(fr.Listener())
	go fr.Serve(ln)
	t.Cleanup(func() { fr.Close(); hs.Close() })
	t.Cleanup(func() { close(slow.release) })
	return slow, "http://" + ln.Addr().String()
}
