package tier

import (
	"bytes"
	"testing"
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
