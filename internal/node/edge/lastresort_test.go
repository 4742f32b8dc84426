package edge

import (
	"bytes"
	"log/slog"
	"net/http"
	"testing"
	"testing/synctest"
	"time"

	corehealth "github.com/strata-media/strata/internal/core/health"
	"github.com/strata-media/strata/internal/httpapi"
	"github.com/strata-media/strata/internal/node/engine"
	"github.com/strata-media/strata/internal/storage/device"
)

// TestUpstreamDownServesSlowFlashCopy: with the upstream failing (a
// connection cut, or a 503) and the flash device slower than the engine's
// read deadline (the engine then counts the copy a miss and asks the
// upstream), the edge still answers what it holds, marked STALE once
// stale, from flash: a small object whole and a sliced one, every slice.
// Before, the engine's miss went to the failing upstream and the client
// got a 502 (or a 503) for an object the edge held.
func TestUpstreamDownServesSlowFlashCopy(t *testing.T) {
	small, big := payload(50<<10, 41), payload(3*(64<<10)+7, 42)
	c, up := flashUpstream(t, small, big)
	synctest.Test(t, func(t *testing.T) {
		mem := device.NewMem(64*testBlock, 4096)
		open := func(dev device.Device) (*engine.Engine, *Handler) { return openSliced(t, dev, up, c) }
		eng, h := open(mem)
		for _, p := range []string{"/cdn/small.m4s", "/cdn/big.mp4"} {
			r := serveDirect(h, p)
			if r.status != 200 || r.cache() != CacheMiss {
				t.Fatalf("%s: %d %s", p, r.status, r.cache())
			}
			serveDirect(h, p+"?warm") // a Range-less second read: every slice fetched and stored
		}
		// Every slice of big stored: read it once whole.
		if r := serveDirect(h, "/cdn/big.mp4"); r.status != 200 || !bytes.Equal(r.body, big) {
			t.Fatalf("big: %d, %d bytes", r.status, len(r.body))
		}
		time.Sleep(time.Second) // virtual: the monitor queues the objects for flash
		h.Close()
		if err := eng.Close(); err != nil {
			t.Fatal(err)
		}
		fault := device.NewFault(mem)
		eng, h = open(fault) // RAM empty: every hit is a flash hit
		fault.SetLatency(device.OpRead, 4*engine.DefaultFlashReadDeadline)

		for _, age := range []struct {
			name  string
			ahead time.Duration
			cache string
		}{{"fresh", 0, CacheHit}, {"stale", 2 * time.Hour, CacheStale}} {
			c.Advance(age.ahead)
			for _, fail := range []struct {
				name string
				fn   http.HandlerFunc
			}{
				{"connection cut", func(http.ResponseWriter, *http.Request) { panic(http.ErrAbortHandler) }},
				{"503", func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusServiceUnavailable) }},
			} {
				up.handle("/media/small.m4s", fail.fn)
				up.handle("/media/big.mp4", fail.fn)
				for _, o := range []struct {
					path string
					body []byte
				}{{"/cdn/small.m4s", small}, {"/cdn/big.mp4", big}} {
					r := serveDirect(h, o.path)
					if r.status != 200 || !bytes.Equal(r.body, o.body) || r.cache() != age.cache || r.header.Get(HeaderTier) != "ssd" {
						t.Errorf("%s, %s %s: %d %s from %q, %d bytes (want %d)", fail.name, age.name, o.path, r.status, r.cache(),
							r.header.Get(HeaderTier), len(r.body), len(o.body))
					}
				}
			}
		}
		if n := h.Stats().LastResort; n == 0 {
			t.Error("no last-resort read counted")
		}
		// Nothing held: the error says so.
		up.handle("/media/none.m4s", func(http.ResponseWriter, *http.Request) { panic(http.ErrAbortHandler) })
		if r := serveDirect(h, "/cdn/none.m4s"); r.status != http.StatusBadGateway || r.cache() != CacheMiss {
			t.Errorf("an object never stored, upstream failing: %d %q", r.status, r.cache())
		}
		time.Sleep(time.Second) // virtual: the reads abandoned at their deadline finish
		synctest.Wait()
	})
}

// TestUpstreamDownStalledFlashAnswersInTime: with the upstream failing and
// the flash device stalled (its reads never return), the edge does not
// wait on the device for ever: its last-resort read gives up at the
// engine's LastResortReadDeadline and the client gets a 502 with problem
// details, as when nothing is held.
func TestUpstreamDownStalledFlashAnswersInTime(t *testing.T) {
	small, big := payload(50<<10, 43), payload(3*(64<<10)+7, 44)
	c, up := flashUpstream(t, small, big)
	synctest.Test(t, func(t *testing.T) {
		mem := device.NewMem(64*testBlock, 4096)
		open := func(dev device.Device) (*engine.Engine, *Handler) { return openSliced(t, dev, up, c) }
		eng, h := open(mem)
		if r := serveDirect(h, "/cdn/small.m4s"); r.status != 200 || r.cache() != CacheMiss {
			t.Fatalf("small: %d %s", r.status, r.cache())
		}
		time.Sleep(time.Second) // virtual: the monitor queues the object for flash
		h.Close()
		if err := eng.Close(); err != nil {
			t.Fatal(err)
		}
		fault := device.NewFault(mem)
		eng, h = open(fault) // RAM empty: the hit is a flash hit
		if _, ok := eng.FlashSegment(TierKey("/cdn/", up.srv.URL+"/media/", "small.m4s")); !ok {
			t.Fatal("small.m4s is not on flash")
		}
		release := make(chan struct{})
		fault.SetSleep(func(time.Duration) { <-release })
		fault.SetLatency(device.OpRead, time.Hour)
		up.handle("/media/small.m4s", func(http.ResponseWriter, *http.Request) { panic(http.ErrAbortHandler) })
		start := time.Now()
		r := serveDirect(h, "/cdn/small.m4s")
		waited := time.Since(start)
		if _, err := httpapi.ReadProblem(&http.Response{StatusCode: r.status, Header: r.header}, r.body); r.status != http.StatusBadGateway || err != nil {
			t.Fatalf("a stalled device, the upstream cut: %d %q: %v", r.status, r.body, err)
		}
		// The request path's read deadline, the upstream's attempts and
		// their backoff (virtual time), then the last resort's deadline.
		if limit := engine.DefaultFlashReadDeadline + time.Second + engine.LastResortDeadlineFactor*engine.DefaultFlashReadDeadline; waited > limit {
			t.Errorf("answered after %v, past %v", waited, limit)
		}
		close(release)
		synctest.Wait()
	})
}

// openSliced is an engine on dev and an edge in front of up's /media/
// under /cdn/, in 64 KiB slices (objects above 64 KiB sliced), on c's
// clock, without keep-alive (no idle goroutines in a synctest bubble).
func openSliced(t *testing.T, dev device.Device, up *upstream, c *clock) (*engine.Engine, *Handler) {
	t.Helper()
	eng := testEngine(t, dev)
	h, err := New(eng, Options{
		Upstreams: []Upstream{{Prefix: "/cdn/", URL: up.srv.URL + "/media/"}},
		SliceSize: 64 << 10, MaxWhole: 64 << 10, Now: c.Now, Logger: slog.New(slog.DiscardHandler),
		Transport: &http.Transport{DisableKeepAlives: true},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	return eng, h
}

// TestShedCopyRelayed: a flash hit the engine sheds, its device
// overloaded (the read limit at one hit reading, and one reading), is
// relayed from the upstream as a MISS with the upstream's bytes, nothing
// stored; when the upstream fails, the request is served from the copy
// after all, read however long the device takes.
func TestShedCopyRelayed(t *testing.T) {
	small, big := payload(50<<10, 45), payload(3*(64<<10)+7, 46)
	c, up := flashUpstream(t, small, big)
	synctest.Test(t, func(t *testing.T) {
		eng, h, fault := shedEdge(t, c, up)
		fault.SetLatency(device.OpRead, 100*time.Millisecond) // within the deadline: slow, not failing

		// busy serves big (a flash hit that holds the one read the limit
		// allows) while fn runs.
		busy := func(fn func()) {
			done := make(chan *result)
			go func() { done <- serveDirect(h, "/cdn/big.mp4") }()
			synctest.Wait() // big's read is on the device
			fn()
			if r := <-done; r.status != 200 || !bytes.Equal(r.body, big) || r.header.Get(HeaderTier) != "ssd" {
				t.Errorf("big beside: %d from %q, %d bytes", r.status, r.header.Get(HeaderTier), len(r.body))
			}
		}
		asked := up.requests("/media/small.m4s")
		busy(func() {
			r := serveDirect(h, "/cdn/small.m4s")
			if r.status != 200 || !bytes.Equal(r.body, small) || r.cache() != CacheMiss || r.header.Get(HeaderTier) != "upstream" {
				t.Errorf("shed: %d %s from %q, %d bytes; want 200 MISS from the upstream", r.status, r.cache(), r.header.Get(HeaderTier), len(r.body))
			}
		})
		if n := up.requests("/media/small.m4s") - asked; n != 1 {
			t.Errorf("upstream asked %d times for the shed copy, want 1", n)
		}
		if st := h.Stats(); st.Relayed != 1 {
			t.Errorf("relayed %d, want 1", st.Relayed)
		}
		if h := eng.Stats().SSD.Health; h.ShedReads == 0 || h.Degraded {
			t.Errorf("engine: health %+v, want a read shed and the device healthy", h)
		}
		if _, ok := eng.FlashSegment(TierKey("/cdn/", up.srv.URL+"/media/", "small.m4s")); !ok {
			t.Error("the shed copy left flash")
		}

		// The upstream fails: the copy answers (read when the device
		// has room, or however long it takes).
		asked = up.requests("/media/small.m4s")
		up.handle("/media/small.m4s", func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusServiceUnavailable) })
		busy(func() {
			r := serveDirect(h, "/cdn/small.m4s")
			if r.status != 200 || !bytes.Equal(r.body, small) || r.header.Get(HeaderTier) != "ssd" {
				t.Errorf("shed, upstream failing: %d %s from %q, %d bytes; want 200 from flash", r.status, r.cache(), r.header.Get(HeaderTier), len(r.body))
			}
		})
		if n := up.requests("/media/small.m4s") - asked; n != 1 {
			t.Errorf("upstream asked %d times for a shed copy while failing, want 1 (the relay; then the copy answers)", n)
		}
		if st := h.Stats(); st.LastResort == 0 {
			t.Error("the copy did not answer as a last resort")
		}
		if len(h.relays) != 0 {
			t.Errorf("%d relay tokens left taken after a failed relay", len(h.relays))
		}
		synctest.Wait()
	})
}

// Options.MaxRelays sets the bound: 0 the engine's loads at once,
// negative none.
func TestMaxRelaysOption(t *testing.T) {
	eng := testEngine(t, device.NewMem(64*testBlock, 4096))
	for _, tc := range []struct{ set, want int }{{0, eng.LoadLimit()}, {3, 3}, {-1, 0}} {
		h, err := New(eng, Options{Upstreams: []Upstream{{Prefix: "/cdn/", URL: "http://127.0.0.1:1/media/"}}, MaxRelays: tc.set})
		if err != nil {
			t.Fatal(err)
		}
		if got := cap(h.relays); got != tc.want || (tc.want == 0) != (h.relays == nil) {
			t.Errorf("MaxRelays %d: bound %d (channel %v), want %d", tc.set, got, h.relays != nil, tc.want)
		}
		h.Close()
	}
}

// At most MaxRelays shed requests are relayed at once: one more is
// answered from its flash copy, read past the limit, and the upstream is
// not asked for it.
func TestRelaysBounded(t *testing.T) {
	small, big := payload(50<<10, 47), payload(3*(64<<10)+7, 48)
	c, up := flashUpstream(t, small, big)
	synctest.Test(t, func(t *testing.T) {
		eng, h, fault := shedEdge(t, c, up)
		if cap(h.relays) != eng.LoadLimit() {
			t.Errorf("default bound %d relays, want the engine's %d loads", cap(h.relays), eng.LoadLimit())
		}
		h.relays = make(chan struct{}, 1)
		// The relay waits at this gate before going upstream, durably
		// blocked in the bubble.
		gate := make(chan struct{})
		h.client = newClient(&gatedTransport{next: &http.Transport{DisableKeepAlives: true}, path: "/media/small.m4s", gate: gate})
		h.newClients(*h.routes.Load())
		fault.SetLatency(device.OpRead, 100*time.Millisecond)

		asked := up.requests("/media/small.m4s")
		bigDone := make(chan *result)
		go func() { bigDone <- serveDirect(h, "/cdn/big.mp4") }()
		synctest.Wait() // big's read holds the one read the limit allows
		first := make(chan *result)
		go func() { first <- serveDirect(h, "/cdn/small.m4s") }()
		synctest.Wait() // shed, relayed, waiting at the gate
		second := make(chan *result)
		go func() { second <- serveDirect(h, "/cdn/small.m4s") }()
		var r *result
		select {
		case r = <-second:
		case <-time.After(10 * time.Second):
			close(gate)
			t.Fatal("the request past the relays' bound did not answer: relayed, waiting for the upstream")
		}
		if r.status != 200 || !bytes.Equal(r.body, small) || r.header.Get(HeaderTier) != "ssd" {
			t.Errorf("shed past the relays' bound: %d %s from %q, %d bytes; want 200 from flash", r.status, r.cache(), r.header.Get(HeaderTier), len(r.body))
		}
		if st := h.Stats(); st.Relayed != 1 || st.RelaysFull != 1 || st.LastResort == 0 {
			t.Errorf("relayed %d, relays full %d, last resort %d; want 1, 1 and the copy answering", st.Relayed, st.RelaysFull, st.LastResort)
		}
		close(gate)
		if r := <-first; r.status != 200 || !bytes.Equal(r.body, small) || r.header.Get(HeaderTier) != "upstream" {
			t.Errorf("relayed: %d from %q, %d bytes; want 200 from the upstream", r.status, r.header.Get(HeaderTier), len(r.body))
		}
		if n := up.requests("/media/small.m4s") - asked; n != 1 {
			t.Errorf("upstream asked %d times, want 1 (the relay alone)", n)
		}
		if r := <-bigDone; r.status != 200 || !bytes.Equal(r.body, big) {
			t.Errorf("big beside: %d, %d bytes", r.status, len(r.body))
		}
		if len(h.relays) != 0 {
			t.Errorf("%d relay tokens left taken", len(h.relays))
		}
		synctest.Wait()
	})
}

// gatedTransport holds the requests for path until gate closes.
type gatedTransport struct {
	next http.RoundTripper
	path string
	gate chan struct{}
}

func (g *gatedTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.URL.Path == g.path {
		<-g.gate
	}
	return g.next.RoundTrip(r)
}

// shedEdge is an edge over a flash device whose reads the engine's read
// limit admits one at a time, with the device's faults to slow them.
func shedEdge(t *testing.T, c *clock, up *upstream) (*engine.Engine, *Handler, *device.Fault) {
	mem := device.NewMem(64*testBlock, 4096)
	fault := device.NewFault(mem)
	eng, h := flashEdgeOn(t, c, up, 64<<10, mem, fault, func(o *engine.Options) {
		o.ReadLimit = corehealth.LimitOptions{Min: 1, Max: 1}
	})
	return eng, h, fault
}
