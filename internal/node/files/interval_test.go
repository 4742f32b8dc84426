package files

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"testing"
	"testing/synctest"
	"time"

	"github.com/strata-media/strata/internal/httpapi/httpapitest"
)

// viewer plays file id from its first byte at rate bytes/s (the bubble's
// fake time), never ahead of its play-out clock, and sends what it read
// on done; after stopAfter (0: never) it stops early and closes.
func viewer(t *testing.T, ts *server, id string, rate float64, stopAfter time.Duration, done chan<- []byte) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", base+"/files/"+id, nil)
	resp, err := ts.client.Do(req)
	if err != nil || resp.StatusCode != 200 {
		t.Errorf("viewer of %s: %v", id, err)
		done <- nil
		return
	}
	defer resp.Body.Close()
	start := time.Now()
	buf := make([]byte, 16<<10)
	var got []byte
	for stopAfter == 0 || time.Since(start) < stopAfter {
		n, err := resp.Body.Read(buf)
		got = append(got, buf[:n]...)
		if err != nil {
			break
		}
		time.Sleep(time.Duration(float64(len(got))/rate*float64(time.Second)) - time.Since(start))
	}
	done <- got
}

// intervalTier is a tier with interval caching alone, streams of 1 MiB/s,
// and RAM of ram blocks.
func intervalTier(t *testing.T, ram int64) (*Tier, *server) {
	return testTier(t, Options{Mechanism: MechanismInterval, DefaultBitrate: 1 << 20, RAMBytes: ram * testBlock})
}

// A stream following another of the same file 1 s behind reads the pieces
// the leader read from RAM, and while it does its disk bandwidth is free;
// the RAM held stays within the budget, and is all freed at the end.
func TestIntervalFollowerReadsFromRAM(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tr, ts := intervalTier(t, 8)
		data := content(16*testBlock, 7) // 4 s of play-out
		put(t, ts, "v.mp4", data)
		done := make(chan []byte, 2)
		go viewer(t, ts, "v.mp4", 1<<20, 0, done)
		time.Sleep(time.Second)
		go viewer(t, ts, "v.mp4", 1<<20, 0, done)
		time.Sleep(2 * time.Second)
		synctest.Wait()
		st := tr.Stats()
		if st.Intervals.Cached != 1 || st.Intervals.RAMStreams != 1 || st.Reserved["disk"] != 1<<20 {
			t.Fatalf("at 3 s, the follower is not on RAM with its disk bandwidth free: %+v %+v", st.Reserved, *st.Intervals)
		}
		for range 2 {
			if got := <-done; !bytes.Equal(got, data) {
				t.Fatalf("a viewer read %d bytes, not the file", len(got))
			}
		}
		synctest.Wait()
		st = tr.Stats()
		iv := st.Intervals
		// The follower reads pieces 5 to 15 from RAM (the leader had read
		// piece 4 when the interval formed).
		if iv.PieceHits < 10 || st.Served["ram"] < 10*testBlock*9/10 {
			t.Fatalf("follower read %d pieces, %d bytes from RAM: %+v", iv.PieceHits, st.Served["ram"], *iv)
		}
		if iv.PeakBytes == 0 || iv.PeakBytes > iv.CapacityBytes {
			t.Fatalf("RAM held peaked at %d of a budget of %d", iv.PeakBytes, iv.CapacityBytes)
		}
		if iv.HeldBytes != 0 || iv.Cached != 0 || st.Reserved["disk"] != 0 {
			t.Fatalf("after both streams ended: %+v, disk %d reserved", *iv, st.Reserved["disk"])
		}
		if st.Served["ram"]+st.Served["disk"] != uint64(2*len(data)) {
			t.Fatalf("served %v, want %d in all", st.Served, 2*len(data))
		}
	})
}

// Intervals compete for a small RAM: the smallest get it, and the pieces
// held never exceed the budget.
func TestIntervalBudgetNeverExceeded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tr, ts := intervalTier(t, 5)
		data := content(16*testBlock, 8)
		put(t, ts, "v.mp4", data)
		done := make(chan []byte, 4)
		// Intervals of 1 s (4 blocks + 1: all of RAM), then 0.5 s (2 + 1,
		// which preempts the first before its follower reached RAM) and
		// 0.25 s (1 + 1, in the space left). The last viewer plays at half
		// the rate: its leader gets further ahead than its interval.
		for i, gap := range []time.Duration{0, time.Second, 500 * time.Millisecond, 250 * time.Millisecond} {
			time.Sleep(gap)
			go viewer(t, ts, "v.mp4", float64(int64(1<<20)>>(i/3)), 0, done)
		}
		peak := int64(0)
		for range 80 {
			time.Sleep(100 * time.Millisecond)
			synctest.Wait()
			iv := tr.Stats().Intervals
			if iv.HeldBytes > iv.CapacityBytes {
				t.Fatalf("holding %d bytes of a budget of %d", iv.HeldBytes, iv.CapacityBytes)
			}
			peak = max(peak, iv.HeldBytes)
		}
		for range 4 {
			if got := <-done; !bytes.Equal(got, data) {
				t.Fatal("a viewer read the wrong bytes")
			}
		}
		iv := tr.Stats().Intervals
		if iv.Formed != 3 || iv.Preemptions == 0 || iv.PieceHits == 0 || peak == 0 || iv.PeakBytes > iv.CapacityBytes {
			t.Fatalf("intervals %+v, peak seen %d", *iv, peak)
		}
	})
}

// A leader that stops early frees its interval: its follower's pieces
// are dropped and the follower goes back to the disk, taking disk
// bandwidth again, and still reads the whole file.
func TestIntervalLeaderStopsFreesInterval(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tr, ts := intervalTier(t, 8)
		data := content(16*testBlock, 9)
		put(t, ts, "v.mp4", data)
		lead, follow := make(chan []byte, 1), make(chan []byte, 1)
		go viewer(t, ts, "v.mp4", 1<<20, 3*time.Second, lead)
		time.Sleep(time.Second)
		go viewer(t, ts, "v.mp4", 1<<20, 0, follow)
		time.Sleep(1500 * time.Millisecond)
		synctest.Wait()
		if iv := tr.Stats().Intervals; iv.RAMStreams != 1 || iv.HeldBytes == 0 {
			t.Fatalf("before the leader stops: %+v", *iv)
		}
		<-lead
		synctest.Wait()
		st := tr.Stats()
		if iv := st.Intervals; iv.HeldBytes != 0 || iv.Cached != 0 || iv.RAMStreams != 0 || st.Reserved["disk"] != 1<<20 {
			t.Fatalf("after the leader stopped: %+v, disk %d reserved", *iv, st.Reserved["disk"])
		}
		if got := <-follow; !bytes.Equal(got, data) {
			t.Fatal("the follower read the wrong bytes")
		}
		synctest.Wait()
		if st := tr.Stats(); st.Reserved["disk"] != 0 {
			t.Fatalf("%d B/s still reserved", st.Reserved["disk"])
		}
	})
}

// Without interval caching nothing is held and every byte comes from
// the disk: the mechanism is what serves the follower.
func TestLFUMechanismHoldsNoIntervals(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tr, ts := testTier(t, Options{Mechanism: MechanismLFU, DefaultBitrate: 1 << 20, RAMBytes: 8 * testBlock})
		data := content(8*testBlock, 10)
		put(t, ts, "v.mp4", data)
		done := make(chan []byte, 2)
		go viewer(t, ts, "v.mp4", 1<<20, 0, done)
		time.Sleep(time.Second)
		go viewer(t, ts, "v.mp4", 1<<20, 0, done)
		<-done
		<-done
		if st := tr.Stats(); st.Intervals != nil || st.Served["ram"] != 0 || st.Served["disk"] != uint64(2*len(data)) {
			t.Fatalf("lfu alone: %+v", st)
		}
	})
}

func TestParseMechanism(t *testing.T) {
	for in, want := range map[string]Mechanism{"": DefaultMechanism, "LFU": MechanismLFU, " interval": MechanismInterval, "both": MechanismBoth} {
		if got, err := ParseMechanism(in); err != nil || got != want {
			t.Errorf("ParseMechanism(%q) = %q, %v", in, got, err)
		}
	}
	if _, err := ParseMechanism("arc"); err == nil {
		t.Error("arc parsed")
	}
	if _, err := Open(Options{Dir: t.TempDir(), Mechanism: "arc"}); err == nil {
		t.Error("a tier opened with an unknown mechanism")
	}
}

// chunkViewer plays file id of size bytes at rate in Range requests of
// chunk bytes, naming session (none if empty), and sends what it read.
func chunkViewer(t *testing.T, ts *server, id, session string, size, chunk int, rate float64, done chan<- []byte) {
	start := time.Now()
	var got []byte
	for off := 0; off < size; off += chunk {
		hdr := []string{"Range", fmt.Sprintf("bytes=%d-%d", off, min(off+chunk, size)-1)}
		if session != "" {
			hdr = append(hdr, "X-Strata-Session", session)
		}
		resp, body := httpapitest.DoWith(t, ts.client, "GET", base+"/files/"+id, nil, hdr...)
		if resp.StatusCode != http.StatusPartialContent {
			t.Errorf("chunk at %d: %d", off, resp.StatusCode)
			break
		}
		got = append(got, body...)
		time.Sleep(time.Duration(float64(len(got))/rate*float64(time.Second)) - time.Since(start))
	}
	done <- got
}

// A player that fetches the file in Range chunks is one stream when it
// names a session: following a leader, its chunks read from RAM. Without
// a session its chunks are unrelated requests, outside interval caching.
func TestIntervalSessionJoinsRangeRequests(t *testing.T) {
	for _, session := range []string{"player-7", ""} {
		t.Run("session="+session, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				tr, ts := intervalTier(t, 8)
				data := content(16*testBlock, 11)
				put(t, ts, "v.mp4", data)
				done := make(chan []byte, 2)
				go viewer(t, ts, "v.mp4", 1<<20, 0, done)
				time.Sleep(time.Second)
				go chunkViewer(t, ts, "v.mp4", session, len(data), 3*testBlock/2, 1<<20, done)
				for range 2 {
					if got := <-done; !bytes.Equal(got, data) {
						t.Fatalf("a viewer read %d bytes, not the file", len(got))
					}
				}
				synctest.Wait()
				iv := tr.Stats().Intervals
				if session == "" {
					if iv.Continued != 0 || iv.PieceHits != 0 || iv.Formed != 1 {
						t.Fatalf("chunks without a session: %+v", *iv)
					}
					return
				}
				if iv.Continued < 9 || iv.PieceHits < 8 || iv.HeldBytes != 0 || iv.Cached != 0 {
					t.Fatalf("chunks of a session: %+v", *iv)
				}
			})
		})
	}
}

// A session whose player stops asking ends after SessionIdle: its
// buffer is freed. A malformed session id is refused.
func TestIntervalSessionIdleEnds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tr, ts := intervalTier(t, 8)
		data := content(16*testBlock, 12)
		put(t, ts, "v.mp4", data)
		done := make(chan []byte, 1)
		go viewer(t, ts, "v.mp4", 1<<20, 0, done)
		time.Sleep(time.Second)
		resp, _ := httpapitest.DoWith(t, ts.client, "GET", base+"/files/v.mp4?session=s1", nil, "Range", "bytes=0-99999")
		if resp.StatusCode != http.StatusPartialContent {
			t.Fatalf("first chunk: %d", resp.StatusCode)
		}
		synctest.Wait()
		if iv := tr.Stats().Intervals; iv.Cached != 1 {
			t.Fatalf("the session's stream holds no interval: %+v", *iv)
		}
		<-done
		time.Sleep(SessionIdle)
		synctest.Wait()
		if iv := tr.Stats().Intervals; iv.Cached != 0 || iv.HeldBytes != 0 {
			t.Fatalf("after the session went idle: %+v", *iv)
		}
		if resp, _ := httpapitest.DoWith(t, ts.client, "GET", base+"/files/v.mp4", nil, "X-Strata-Session", "a b"); resp.StatusCode != http.StatusBadRequest {
			t.Fatalf("a bad session id: %d", resp.StatusCode)
		}
	})
}
