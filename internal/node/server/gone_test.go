package server

import (
	"context"
	"log/slog"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/strata-media/strata/internal/core/tier"
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

// A client that half-closes after asking for a range of an uncached
// segment, which waits on a slow capacity store, gets no answer: the
// connection closes without a status, never net/http's implicit empty
// 200 (which a cache in front could store as the segment).
func TestClientGoneGetsNoAnswer(t *testing.T) {
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
	ts := httptest.NewServer(newAPI(t, eng, slow, log))
	t.Cleanup(func() { ts.Close(); eng.Close() })
	t.Cleanup(func() { close(slow.release) }) // first: the loads end
	titles, _ := syn.Catalog(context.Background())
	o := ident.Object{Video: titles[0].ID, Rendition: titles[0].Renditions[0].ID, Name: "1.m4s"}

	got := httpapitest.HalfClose(t, ts.URL, "GET /videos/"+o.Path()+" HTTP/1.1\r\nHost: strata\r\nRange: bytes=0-99\r\n\r\n",
		func() { <-slow.arrived }) // the engine waits on the store
	if len(got) != 0 {
		t.Fatalf("a client gone got %q; want the connection closed without an answer", got)
	}
}
