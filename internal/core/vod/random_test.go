package vod

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// TestLFURandom drives an LFU with random requests, copies, readers and
// aborts, checking its invariants after every step and that every plan
// evicts only files its candidate out-counts. The seed is logged.
func TestLFURandom(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 1))
	c, _ := NewLFU[int](LFUOptions{Capacity: 10_000, HalfLife: time.Hour, MaxCopies: 2, Budget: WriteBudget{Rate: 50, Burst: 5000}})
	readers := map[int]int{}
	var now time.Duration
	for step := range 20_000 {
		now += time.Duration(rng.IntN(60)) * time.Second
		id := int(rng.ExpFloat64() * 10)
		size := int64(500 + 500*(id%4))
		randomLFUStep(t, c, rng, now, id, size, readers)
		if err := c.Check(); err != nil {
			t.Fatalf("seed %d step %d: %v", seed, step, err)
		}
	}
	t.Logf("%+v", c.Stats())
}

func randomLFUStep(t *testing.T, c *LFU[int], rng *rand.Rand, now time.Duration, id int, size int64, readers map[int]int) {
	if c.Request(now, id, size) && rng.IntN(2) == 0 && c.Acquire(id) {
		readers[id]++
	}
	best, hasBest := bestCandidate(c)
	if p, ok := c.Plan(now); ok {
		if !hasBest || p.ID != best {
			t.Fatalf("planned %d, the most frequent candidate is %d", p.ID, best)
		}
		for _, v := range slices.Concat(p.Freed, p.Draining) {
			if !(c.Count(now, p.ID) > c.Count(now, v)) {
				t.Fatalf("evicted %d (count %v) for %d (count %v)", v, c.Count(now, v), p.ID, c.Count(now, p.ID))
			}
		}
	}
	for r := range readers {
		if rng.IntN(8) == 0 {
			if _, err := c.Release(r); err != nil {
				t.Fatal(err)
			}
			if readers[r]--; readers[r] == 0 {
				delete(readers, r)
			}
			break
		}
	}
	if f, _, ok := c.Ready(); ok {
		if rng.IntN(10) == 0 {
			_ = c.Abort(f)
		} else if err := c.Installed(f); err != nil {
			t.Fatal(err)
		}
	}
}

// bestCandidate finds the most frequent file Plan may copy by brute force.
func bestCandidate(c *LFU[int]) (int, bool) {
	var best *lfuFile[int]
	for _, f := range c.files {
		if c.candidate(f) && (best == nil || lessCount(best, f)) {
			best = f
		}
	}
	if best == nil {
		return 0, false
	}
	return best.id, true
}

// icEvent is a scheduled end (kind 0) or switch (kind 1) of a stream.
type icEvent struct {
	at   time.Duration
	kind int
	id   StreamID
}

// TestIntervalRandom plays random arrivals of equal-length streams over a
// few files through an IntervalCache, as the simulator does, checking its
// invariants after every event and that preemption never sends more
// streams back to disk than the room it was given.
func TestIntervalRandom(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 2))
	c, _ := NewIntervalCache[int](IntervalOptions{Capacity: 40 * MB})
	const length, rate = 100 * time.Second, MB
	var evs []icEvent
	var now time.Duration
	for id := StreamID(1); id < 3000; id++ {
		now += time.Duration(rng.ExpFloat64() * float64(time.Second))
		evs = runDue(t, c, evs, now)
		room := rng.IntN(3)
		ch, err := c.Arrive(now, id, rng.IntN(5), rate, room)
		if err != nil || len(ch.ToDisk) > room {
			t.Fatalf("seed %d: arrive %d: %v, %d to disk with room %d", seed, id, err, len(ch.ToDisk), room)
		}
		evs = append(evs, icEvent{now + length, 0, id})
		evs = addSwitches(evs, ch)
		if err := c.Check(); err != nil {
			t.Fatalf("seed %d: after arrive %d: %v", seed, id, err)
		}
	}
	runDue(t, c, evs, now+2*length)
	if len(c.streams) != 0 || c.Used() != 0 || c.RAMStreams() != 0 {
		t.Fatalf("%d streams, %d bytes, %d on RAM left after all ended", len(c.streams), c.Used(), c.RAMStreams())
	}
	t.Logf("%+v", c.Stats())
}

func addSwitches(evs []icEvent, ch Changes) []icEvent {
	for _, s := range ch.Cached {
		evs = append(evs, icEvent{s.At, 1, s.Stream})
	}
	return evs
}

// runDue runs the events due by now, earliest first (ends before switches
// at equal times), and returns the rest.
func runDue(t *testing.T, c *IntervalCache[int], evs []icEvent, now time.Duration) []icEvent {
	for {
		i := -1
		for j, e := range evs {
			if e.at <= now && (i < 0 || e.at < evs[i].at || (e.at == evs[i].at && e.kind < evs[i].kind)) {
				i = j
			}
		}
		if i < 0 {
			return evs
		}
		e := evs[i]
		evs = slices.Delete(evs, i, i+1)
		if e.kind == 1 {
			c.Switch(e.at, e.id)
		} else {
			ch, err := c.End(e.at, e.id)
			if err != nil {
				t.Fatal(err)
			}
			evs = addSwitches(evs, ch)
		}
		if err := c.Check(); err != nil {
			t.Fatalf("after %+v: %v", e, err)
		}
	}
}
