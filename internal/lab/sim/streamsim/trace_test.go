package streamsim

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/strata-media/strata/internal/wtrace"
)

// syntheticTrace writes a live-like trace: a segment cache overwriting
// 4 MiB blocks at random with a metadata block now and then, and an LSM's
// WAL (short-lived, rewritten in a ring) interleaved with L0 tables that
// live long (a log of tables, rewritten slowly).
func syntheticTrace(t *testing.T) []byte {
	t.Helper()
	var b bytes.Buffer
	start := time.Unix(0, 0)
	w := wtrace.NewWriter(&b, start)
	rng := rand.New(rand.NewPCG(1, 2))
	const blk = 1 << 20
	var wal, l0 int64
	for i := range 2000 {
		now := start.Add(time.Duration(i) * time.Millisecond)
		switch {
		case i%50 == 0:
			w.Write(now, "segments-meta", 0, 1<<20, "short", 2)
		case i%3 == 0:
			w.Write(now, "segments", int64(rng.IntN(512))*blk, blk, "medium", 3)
		case i%3 == 1:
			w.Write(now, "images", wal%(64<<20), 1<<20, "lsm-wal", 2)
			wal += 1 << 20
		default:
			w.Write(now, "images-sst", l0%(1<<30), 1<<20, "lsm-l0", 3)
			l0 += 1 << 20
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestTraceReplay(t *testing.T) {
	tr, err := readTrace("synthetic", bytes.NewReader(syntheticTrace(t)))
	if err != nil {
		t.Fatal(err)
	}
	if len(tr.Devices) != 4 || len(tr.Classes) != 4 {
		t.Fatalf("devices %v classes %v", tr.DeviceNames(), tr.Classes)
	}
	sc, err := traceScenario(testScale, tr, 0.9)
	if err != nil {
		t.Fatal(err)
	}
	if float64(tr.Footprint) > 0.9*float64(sc.Drive.Capacity) {
		t.Fatalf("footprint %d on a drive of %d", tr.Footprint, sc.Drive.Capacity)
	}
	waf := map[MappingName]float64{}
	for _, m := range []MappingName{Normal, MultiData, traced} {
		r, err := replay(sc, m, false, false)
		if err != nil {
			t.Fatal(err)
		}
		if r.Notes["laps"] < 1 {
			t.Fatalf("%s: the trace did not loop: %v", m, r.Notes)
		}
		waf[m] = r.Aged.WAF
	}
	t.Logf("WAF %v", waf)
	if waf[MultiData] >= waf[Normal] || waf[Normal] < 1.05 {
		t.Fatalf("Multi-Data should cut Normal's WAF: %v", waf)
	}
}

func TestReadTraceErrors(t *testing.T) {
	if _, err := readTrace("empty", strings.NewReader(wtrace.Header+"\n")); !errors.Is(err, errEmptyTrace) {
		t.Fatalf("empty trace: %v", err)
	}
	if _, err := readTrace("bad", strings.NewReader("1 segments 0 x short 0\n")); !errors.Is(err, wtrace.ErrFormat) {
		t.Fatalf("bad trace: %v", err)
	}
}

func FuzzReadTrace(f *testing.F) {
	f.Add([]byte("5 segments 0 4096 medium 1\n7 images 4096 8192 lsm-wal 2\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		tr, err := readTrace("fuzz", bytes.NewReader(b))
		if err != nil {
			return
		}
		tr.layout(1 << 20)
		for _, r := range tr.Records {
			d := tr.Devices[r.Dev]
			if r.Off+r.Len > d.Size || d.Base+d.Size > tr.Footprint {
				t.Fatalf("record %+v outside device %+v (footprint %d)", r, d, tr.Footprint)
			}
		}
	})
}
