package server

import (
	"bytes"
	"io"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/strata-media/strata/internal/node/engine"
)

// A flash device that got slow is marked degraded by the hits sent from
// it through the Front alone (no buffered read in between): each send
// whose reads from the device's file pass the read deadline is one
// timeout of the device; after FailAfter of them its reads are degraded,
// and hits are answered from the capacity tier, with the right bytes.
func TestSlowDeviceDegradedBySends(t *testing.T) {
	const deadline = 50 * time.Millisecond
	var delay atomic.Int64
	addr, syn, eng := frontServer(t, false, func(o *engine.Options) {
		o.FlashReadDeadline = deadline
		o.SchedLag = func() time.Duration { return 0 } // never excused as a starved process
		o.Health.Backoff = time.Minute                 // no probe while the test runs
		o.BeforeFileRead = func() error {
			time.Sleep(time.Duration(delay.Load()))
			return nil
		}
	})
	hits := onFlash(t, addr, syn)
	before := eng.Stats().SSD
	delay.Store(int64(3 * deadline))
	fetch := func(i int) string {
		o := hits[i%len(hits)]
		resp, err := http.Get("http://" + addr + "/videos/" + o.Path())
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if want, _ := syn.Expected(o); resp.StatusCode != 200 || !bytes.Equal(body, want) {
			t.Fatalf("%s: %d, %d bytes of %d, equal %v", o, resp.StatusCode, len(body), len(want), bytes.Equal(body, want))
		}
		return resp.Header.Get("X-Strata-Tier")
	}
	degraded := func() bool { h, _ := eng.Health(); return h.Read.Degraded }
	for i := 0; !degraded(); i++ {
		if i == 10*len(hits) {
			h, _ := eng.Health()
			t.Fatalf("%d slow sends from the device: not degraded: %+v; ssd %+v", i, h, eng.Stats().SSD)
		}
		fetch(i)
	}
	st := eng.Stats().SSD
	if st.FileHits == before.FileHits || st.FileReadsLate == before.FileReadsLate {
		t.Fatalf("no late send from the device: before %+v, after %+v", before, st)
	}
	if st.Reads != before.Reads {
		t.Fatalf("%d buffered flash reads: the sends alone were to mark the device degraded", st.Reads-before.Reads)
	}
	if h, _ := eng.Health(); h.Read.Errors["timeout"] < 3 {
		t.Fatalf("degraded with fewer than 3 timeouts: %+v", h)
	}
	declined := st.FileHitsDeclined
	for i := range hits {
		if tr := fetch(i); tr == "ssd" {
			t.Fatalf("%s: a hit of a degraded device served from flash", hits[i])
		}
	}
	if st := eng.Stats().SSD; st.FileHitsDeclined == declined {
		t.Fatal("no hit declined while the device's reads are degraded")
	}
}
