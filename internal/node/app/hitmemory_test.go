package app

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"runtime/metrics"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/strata-media/strata/internal/httpapi/httpapitest"
	"github.com/strata-media/strata/internal/ident"
	"github.com/strata-media/strata/internal/node/engine"
	"github.com/strata-media/strata/internal/storage/origin"
)

// hitLibrary has segments of about a megabyte (all renditions, 10 s
// segments), so that slow readers of flash hits would hold hundreds of
// megabytes without the bound.
var hitLibrary = SyntheticLibrary{Titles: 1, AllRenditions: true, MaxLengthS: 60, SegmentDurationS: 10, Seed: 3, Prefix: "h-"}

// TestSlowReadersOfFlashHitsStayInBound: 300 clients that read one byte
// every 100 ms ask for flash-resident segments of about a megabyte on a
// real node whose flash hit memory is 8 MiB. The bytes the hits hold stay
// within the bound (the engine's accounting) and so does the heap
// (runtime/metrics, with a generous margin: the 300 answers alone would
// be ten times the bound); the hits that find the bound held wait, then
// are answered 503 with Retry-After; the device is not marked degraded;
// once the readers leave, the bytes are all returned and the segments
// are served from flash again.
func TestSlowReadersOfFlashHitsStayInBound(t *testing.T) {
	const bound = 8 << 20
	cfg := testConfig(t)
	cfg.RAM, cfg.FlashSize = 4<<20, 64<<20
	cfg.FlashHitMemory = bound
	// The buffered flash hit is the one that holds hit memory for as
	// long as its client reads; a zero-copy one (flash_sendfile) holds
	// its block's pin instead (server.TestSendfileSlowClientHoldsNoHitMemory).
	cfg.FlashSendfile = false
	cfg.Threshold = 2 // no utilization gate: the shared disk's load must not decide the test
	cfg.Epoch.Duration = 100 * time.Millisecond
	cfg.MonitorPeriod.Duration = 20 * time.Millisecond
	cfg.Policy = "lru"
	cfg.Images.Disabled = true
	cfg.Files.FlashSize = 0
	b, _ := json.Marshal(hitLibrary)
	if err := os.WriteFile(syntheticPath(cfg.Data), b, 0o644); err != nil {
		t.Fatal(err)
	}
	syn, err := origin.NewSynthetic(hitLibrary.Dataset(), origin.SyntheticOptions{Seed: hitLibrary.Seed})
	if err != nil {
		t.Fatal(err)
	}
	n, err := Open(context.Background(), cfg, Options{Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	stop := runNode(t, n)
	defer stop()
	base := n.Description().URL

	// Warm: every segment of at least 512 KiB, until some are on flash.
	var big []ident.Object
	for _, o := range objects(t, syn) {
		if want, _ := syn.Expected(o); len(want) >= 512<<10 {
			big = append(big, o)
		}
	}
	var onFlash []ident.Object
	var sizes int
	for i := 0; len(onFlash) < 3; i++ {
		if i == 50 {
			t.Fatalf("%d of %d large segments on flash after 50 passes", len(onFlash), len(big))
		}
		onFlash, sizes = onFlash[:0], 0
		for _, o := range big {
			resp, body := httpapitest.Do(t, "GET", base+"/videos/"+o.String(), nil)
			if resp.StatusCode == 200 && resp.Header.Get("X-Strata-Tier") == "ssd" {
				onFlash, sizes = append(onFlash, o), sizes+len(body)
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Logf("%d of %d large segments on flash, %d KiB on average", len(onFlash), len(big), sizes/len(onFlash)>>10)

	heapBefore := heapObjects()
	const readers = 300
	var (
		mu       sync.Mutex
		statuses = map[string]int{}
		noRetry  int
		wg       sync.WaitGroup
	)
	done := make(chan struct{})
	host := strings.TrimPrefix(base, "http://")
	for i := range readers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			status, retry := slowRead(t, host, "/videos/"+onFlash[i%len(onFlash)].String(), done)
			mu.Lock()
			statuses[status]++
			if status == "503" && !retry {
				noRetry++
			}
			mu.Unlock()
		}()
	}
	var heapMax uint64
	var stats engine.Stats
	for end := time.Now().Add(4 * time.Second); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
		heapMax = max(heapMax, heapObjects())
		stats = engineStats(t, base)
		hm := stats.SSD.HitMemory
		if hm == nil || hm.HeldBytes > bound || hm.PeakBytes > bound {
			t.Fatalf("hit memory %+v: past the bound of %d", hm, bound)
		}
	}
	rd := readiness(t, base)
	close(done)
	wg.Wait()

	hm := stats.SSD.HitMemory
	t.Logf("answers %v; hit memory %+v; heap %d MiB before, %d MiB at most", statuses, *hm, heapBefore>>20, heapMax>>20)
	if hm.PeakBytes < bound/2 {
		t.Errorf("peak %d of %d held: the slow readers did not fill the bound, the test tests nothing", hm.PeakBytes, bound)
	}
	if grown := int64(heapMax) - int64(heapBefore); grown > bound+64<<20 {
		t.Errorf("heap grew by %d MiB under the slow readers (bound %d MiB + 64 MiB margin)", grown>>20, bound>>20)
	}
	if statuses["503"] == 0 || hm.Busy == 0 || noRetry > 0 {
		t.Errorf("answers %v, %d 503 without Retry-After, busy %d: want 503s with Retry-After once the bound is held", statuses, noRetry, hm.Busy)
	}
	if got, st := metric(t, base, `strata_ssd_hit_waits_total{outcome="busy"}`), engineStats(t, base).SSD.HitMemory; got != float64(st.Busy) {
		t.Errorf("busy hits metric %v, /stats %d", got, st.Busy)
	}
	if statuses["200"] == 0 {
		t.Errorf("answers %v: no slow reader was served", statuses)
	}
	if dev := rd.Devices[0]; rd.Status != "ready" || dev.Read.Degraded || dev.LateReads > 0 {
		t.Errorf("device after the burst: %s %+v", rd.Status, dev)
	}

	// The readers gone, every byte is returned and flash serves again.
	for i := 0; ; i++ {
		hm = engineStats(t, base).SSD.HitMemory
		if hm.HeldBytes == 0 && hm.Waiting == 0 {
			break
		}
		if i == 100 {
			t.Fatalf("hit memory still held after the readers left: %+v", *hm)
		}
		time.Sleep(20 * time.Millisecond)
	}
	for _, o := range onFlash {
		resp, body := httpapitest.Do(t, "GET", base+"/videos/"+o.String(), nil)
		want, _ := syn.Expected(o)
		if resp.StatusCode != 200 || resp.Header.Get("X-Strata-Tier") != "ssd" || string(body) != string(want) {
			t.Errorf("%s after the burst: %d from %q, %d bytes (want 200 from ssd, the library's %d)",
				o, resp.StatusCode, resp.Header.Get("X-Strata-Tier"), len(body), len(want))
		}
	}
}

// slowRead asks for path over a connection whose receive buffer is 4 KiB
// and whose segments are 1000 bytes (so that the server's send buffer,
// which Linux sizes from the segment size, stays small: on loopback's
// 64 KiB segments it takes a megabyte of the answer), reads the status line and header at once, then a byte every 100 ms
// until done. It returns the status code and, for a 503, whether the
// answer had a Retry-After.
func slowRead(t *testing.T, host, path string, done <-chan struct{}) (string, bool) {
	d := net.Dialer{Control: func(_, _ string, c syscall.RawConn) error {
		var serr error
		err := c.Control(func(fd uintptr) {
			serr = errors.Join(syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4096),
				syscall.SetsockoptInt(int(fd), syscall.IPPROTO_TCP, syscall.TCP_MAXSEG, 1000))
		})
		if err != nil {
			return err
		}
		return serr
	}}
	c, err := d.Dial("tcp", host)
	if err != nil {
		t.Error(err)
		return "dial", false
	}
	defer c.Close()
	fmt.Fprintf(c, "GET %s HTTP/1.1\r\nHost: %s\r\n\r\n", (&url.URL{Path: path}).EscapedPath(), host)
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	br := bufio.NewReaderSize(c, 4096)
	line, err := br.ReadString('\n')
	if err != nil {
		t.Error(err)
		return "read", false
	}
	f := strings.Fields(line)
	if len(f) < 2 {
		return "bad", false
	}
	retry := false
	for {
		h, err := br.ReadString('\n')
		if err != nil || h == "\r\n" {
			break
		}
		retry = retry || strings.HasPrefix(strings.ToLower(h), "retry-after:")
	}
	for {
		select {
		case <-done:
			return f[1], retry
		case <-time.After(100 * time.Millisecond):
		}
		if _, err := br.ReadByte(); err != nil {
			return f[1], retry
		}
	}
}

// heapObjects is the bytes of live and unswept heap objects now.
func heapObjects() uint64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// engineStats reads the segment engine's GET /stats.
func engineStats(t *testing.T, base string) engine.Stats {
	t.Helper()
	_, body := httpapitest.Do(t, "GET", base+"/stats", nil)
	var st engine.Stats
	if err := json.Unmarshal(body, &st); err != nil {
		t.Fatalf("/stats: %v", err)
	}
	return st
}
