package tier

import (
	"bytes"
	"testing"
)

// TestRehome: RAM's bytes for a key are replaced by the same bytes
// elsewhere only where they are still the ones held by old; the entry
// stays where it was, with its hits and sum.
func TestRehome(t *testing.T) {
	c, _, err := New(Options{RAMBytes: 1 << 20}, 0)
	if err != nil {
		t.Fatal(err)
	}
	data := bytes.Repeat([]byte("a"), 1000)
	oldHold, newHold := new(int), new(int)
	if !c.InsertSum("k", int64(len(data)), data, oldHold, 7, c.Token(), 0) {
		t.Fatal("insert refused")
	}
	c.Lookup("k", 0)
	moved := append([]byte(nil), data...)
	if c.Rehome("k", newHold, moved, newHold) {
		t.Fatal("rehomed from a hold the entry does not have")
	}
	if c.Rehome("k", oldHold, moved[:10], newHold) {
		t.Fatal("rehomed to bytes of another length")
	}
	if c.Rehome("nope", oldHold, moved, newHold) {
		t.Fatal("rehomed a key not in RAM")
	}
	if !c.Rehome("k", oldHold, moved, newHold) {
		t.Fatal("not rehomed")
	}
	l := c.Lookup("k", 0)
	if l.Tier != RAM || l.Entry.Hold != newHold || &l.Entry.Data[0] != &moved[0] || l.Entry.Sum != 7 || l.Entry.Hits != 3 {
		t.Fatalf("after Rehome: tier %v, hold moved %v, data moved %v, sum %d, hits %d",
			l.Tier, l.Entry.Hold == newHold, &l.Entry.Data[0] == &moved[0], l.Entry.Sum, l.Entry.Hits)
	}
	if c.Rehome("k", oldHold, data, oldHold) {
		t.Fatal("rehomed twice from the same hold")
	}
}

// TestChargeRAM: bytes charged against RAM's budget evict segments at
// once, from the tail, and leave less room for insertions; uncharged,
// the room comes back.
func TestChargeRAM(t *testing.T) {
	c, _, err := New(Options{RAMBytes: 10 << 10}, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"a", "b", "c", "d", "e"} {
		c.Insert(k, 2<<10, nil, c.Token(), 0)
	}
	c.ChargeRAM(5 << 10)
	if c.InRAM("a") || c.InRAM("b") || c.InRAM("c") || !c.InRAM("d") || !c.InRAM("e") {
		t.Fatal("a 5 KiB charge did not evict the three oldest of five 2 KiB segments")
	}
	if s := c.Stats(); s.RAMEvictions != 3 {
		t.Fatalf("%d evictions counted", s.RAMEvictions)
	}
	c.Insert("f", 2<<10, nil, c.Token(), 0)
	if c.InRAM("d") || !c.InRAM("f") {
		t.Fatal("an insertion beside the charge did not evict the oldest")
	}
	c.ChargeRAM(-1)
	c.Insert("g", 2<<10, nil, c.Token(), 0)
	c.Insert("h", 2<<10, nil, c.Token(), 0)
	if !c.InRAM("e") || !c.InRAM("f") || !c.InRAM("g") || !c.InRAM("h") {
		t.Fatal("the room did not come back without the charge")
	}
}
