package edge

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"
	"unsafe"

	"github.com/strata-media/strata/internal/core/tier"
	"github.com/strata-media/strata/internal/node/engine"
	"github.com/strata-media/strata/internal/storage/device"
)

// Upstream bodies being read hold room in the fill memory: a miss whose
// body does not fit waits for it, its upstream header read and its body
// left in the socket, until the body ahead of it is read; then both
// clients get their whole objects, and the room is given back.
func TestFillMemoryBoundsBodies(t *testing.T) {
	const size = 80_000
	f := newFixture(t, func(o *Options) { o.FillMemory = 100_000 })
	slow, quick := payload(size, 1), payload(size, 2)
	gate := make(chan struct{})
	f.up.handle("/media/slow.m4s", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", strconv.Itoa(size))
		w.WriteHeader(http.StatusOK)
		w.Write(slow[:10_000])
		w.(http.Flusher).Flush()
		<-gate
		w.Write(slow[10_000:])
	}, "Cache-Control", "max-age=60")
	f.up.put("/media/quick.m4s", quick, "Cache-Control", "max-age=60")

	waitFor := func(what string, ok func(Stats) bool) {
		t.Helper()
		for end := time.Now().Add(10 * time.Second); !ok(f.edge.Stats()); time.Sleep(5 * time.Millisecond) {
			if time.Now().After(end) {
				close(gate)
				t.Fatalf("%s: stats %+v", what, f.edge.Stats())
			}
		}
	}
	type answer struct {
		r    *result
		want []byte
	}
	results := make(chan answer, 2)
	go func() { results <- answer{f.get("/cdn/slow.m4s"), slow} }()
	waitFor("the first body holds its room", func(s Stats) bool { return s.FillBytes == size })
	go func() { results <- answer{f.get("/cdn/quick.m4s"), quick} }()
	waitFor("the second body waits for room", func(s Stats) bool { return s.FillWaits == 1 })
	if f.up.requests("/media/quick.m4s") != 1 || f.edge.Stats().FillBytes != size {
		t.Fatalf("the waiting body: %d upstream requests, stats %+v", f.up.requests("/media/quick.m4s"), f.edge.Stats())
	}
	select {
	case a := <-results:
		t.Fatalf("a client was answered before the first body was read: %d %s", a.r.status, a.r.cache())
	case <-time.After(50 * time.Millisecond):
	}
	close(gate)
	for range 2 {
		a := <-results
		f.want(a.r, http.StatusOK, CacheMiss, a.want)
	}
	waitFor("the room given back", func(s Stats) bool { return s.FillBytes == 0 })
	f.want(f.get("/cdn/slow.m4s"), http.StatusOK, CacheHit, slow)
	f.want(f.get("/cdn/quick.m4s"), http.StatusOK, CacheHit, quick)
}

// A body larger than the whole fill memory takes all of it, not forever.
func TestFillMemoryLargerBody(t *testing.T) {
	f := newFixture(t, func(o *Options) { o.FillMemory = 32 << 10 })
	body := payload(50_000, 3)
	f.up.put("/media/big.m4s", body, "Cache-Control", "max-age=60")
	f.want(f.get("/cdn/big.m4s"), http.StatusOK, CacheMiss, body)
	f.want(f.get("/cdn/big.m4s"), http.StatusOK, CacheHit, body)
	if s := f.edge.Stats(); s.FillBytes != 0 || s.FillWaits != 0 {
		t.Fatalf("stats %+v", s)
	}
}

// A miss this request loaded is answered from the memory file RAM kept
// its record in (inFile), not from the heap's copy the load read: with
// RAM's memory files, the record's body lies in the file, and a client's
// miss gets the upstream's bytes.
func TestMissAnsweredFromRAMFile(t *testing.T) {
	eng, err := engine.New(engine.Options{
		Tier:     tier.Options{RAMBytes: 8 << 20, BlockSize: testBlock, MonitorRoom: 1},
		RAMFiles: true, MonitorPeriod: 10 * time.Millisecond, FeedPeriod: 10 * time.Millisecond,
		Logger: slog.New(slog.DiscardHandler),
	}, device.NewMem(64*testBlock, 4096), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { eng.Close() })
	body := payload(100_000, 4)
	rec := &record{id: 1, complete: int64(len(body))}
	rec.entry.Status = http.StatusOK
	rec.entry.Header = http.Header{"Etag": {`"a"`}}
	f := &fetched{rec: rec, data: rec.layout(len(body))}
	copy(rec.body, body)
	seal(f.data)
	res, err := eng.GetWithHeld(context.Background(), "e/x/0", func(context.Context) ([]byte, error) { return f.data, nil })
	if err != nil || res.RAM == nil {
		t.Fatalf("the load: %v, memory file %v", err, res.RAM != nil)
	}
	defer res.Release()
	got := inFile(f, res)
	file := res.RAM.Bytes()
	if got == rec || !bytes.Equal(got.body, body) || got.entry.Header.Get("Etag") != `"a"` ||
		unsafe.SliceData(got.body) != &file[len(file)-recordSumLen-len(body)] {
		t.Fatalf("the record answered is not the memory file's (a copy: %v; body equal: %v)", got == rec, bytes.Equal(got.body, body))
	}

	// Through the handler: the miss and the hit carry the upstream's bytes.
	c := newClock()
	up := newUpstream(t, c)
	up.put("/media/a.m4s", body, "Cache-Control", "max-age=60")
	h, err := New(eng, Options{Upstreams: []Upstream{{Prefix: "/cdn/", URL: up.srv.URL + "/media/"}}, Now: c.Now,
		Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	fx := &fixture{t: t, clock: c, up: up, eng: eng, edge: h, srv: httptest.NewServer(h)}
	defer fx.srv.Close()
	fx.want(fx.get("/cdn/a.m4s", "Range", "bytes=0-"), http.StatusPartialContent, CacheMiss, body)
	fx.want(fx.get("/cdn/a.m4s"), http.StatusOK, CacheHit, body)
}
