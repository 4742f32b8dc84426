package tier

import (
	"bytes"
	"runtime"
	"sync/atomic"
	"testing"
	"time"
)

// TestHoldTravelsWithData: an entry's Hold (what keeps its bytes'
// memory alive, the live server's memory file) goes wherever its Data
// goes in the core: the RAM pool, the ring, a lookup of a segment on its
// way to flash, the block write that packs it. A place that kept Data
// without Hold would let the memory go while the bytes are read.
func TestHoldTravelsWithData(t *testing.T) {
	c, _, err := New(Options{RAMBytes: 3 << 10, BlockSize: 64 << 10, DeviceSize: 1 << 20, MonitorRoom: 1, RingBytes: 1 << 20}, 1)
	if err != nil {
		t.Fatal(err)
	}
	type hold struct{ name string }
	holds := map[string]*hold{}
	data := map[string][]byte{}
	for _, k := range []string{"v/a/1", "v/a/2", "v/a/3", "v/a/4"} {
		holds[k], data[k] = &hold{k}, bytes.Repeat([]byte(k), 256)
		c.InsertSum(k, int64(len(data[k])), data[k], holds[k], 0, c.Token(), 0)
	}
	check := func(where, k string, e *Entry) {
		t.Helper()
		if e == nil || e.Hold != holds[k] || !bytes.Equal(e.Data, data[k]) {
			t.Fatalf("%s: %s without its Hold or bytes: %+v", where, k, e)
		}
	}
	l := c.Lookup("v/a/4", 0)
	check("RAM", "v/a/4", l.Entry)
	c.Monitor(0) // the tail goes to the ring
	pushed := 0
	for k := range holds {
		if !c.OnTheWay(k) {
			continue
		}
		pushed++
		e, _ := c.pending(k)
		check("ring", k, e)
		if !c.InRAM(k) {
			check("lookup on the way", k, c.Lookup(k, 0).Entry)
		}
	}
	if pushed == 0 {
		t.Fatal("nothing went to the ring")
	}
	w := c.Flush(0)
	if w == nil || len(w.Records) == 0 {
		t.Fatal("no block write")
	}
	for _, r := range w.Records {
		it, ok := w.items[r.Key]
		if !ok || it.Hold != holds[r.Key] || !bytes.Equal(it.Data, data[r.Key]) {
			t.Fatalf("the write of %s keeps its bytes without its Hold", r.Key)
		}
		e, _ := c.pending(r.Key)
		check("being written", r.Key, e)
	}
}

// TestPurgeKeepsTheHoldOfAWriteInFlight: a purge while a block write is
// in flight drops its segments from the write's items, but the write is
// still encoded from their Data (outside the driver's lock): the write
// keeps their Hold until it is done with (the memory files of a purged
// object were closed under the encoding, and another object's file could
// be mapped at the same address).
func TestPurgeKeepsTheHoldOfAWriteInFlight(t *testing.T) {
	for _, split := range []bool{false, true} {
		c, _, err := New(Options{RAMBytes: 1 << 20, BlockSize: 256 << 10, DeviceSize: 4 << 20, MonitorRoom: 1, RingBytes: 1 << 20}, 1)
		if err != nil {
			t.Fatal(err)
		}
		var collected atomic.Bool
		func() {
			hold := &struct{ b [64]byte }{}
			runtime.AddCleanup(hold, func(*atomic.Bool) { collected.Store(true) }, &collected)
			c.InsertSum("v/a/1", 40<<10, bytes.Repeat([]byte("A"), 40<<10), hold, 0, c.Token(), 0)
			if split { // a segment larger than the block's room, split into the next block's plan
				c.InsertSum("v/b/1", 300<<10, bytes.Repeat([]byte("Y"), 300<<10), nil, 0, c.Token(), 0)
			}
		}()
		c.Monitor(0)
		w := c.Flush(0)
		if w == nil || len(w.Records) == 0 || w.Records[0].Key != "v/a/1" {
			t.Fatalf("split %v: no block write of v/a/1", split)
		}
		if _, err := c.Invalidate("v/a/", 0); err != nil {
			t.Fatal(err)
		}
		for range 5 {
			runtime.GC()
			time.Sleep(5 * time.Millisecond)
		}
		if collected.Load() {
			t.Fatalf("split %v: the Hold of a record in the write in flight was collected after a purge", split)
		}
		runtime.KeepAlive(w)
	}
}
