package flashstream

import (
	"github.com/strata-media/strata/internal/core/tier"
	"github.com/strata-media/strata/internal/lab/sim/des"
)

// flashcache-like baseline parameters, from Facebook flashcache's
// documentation (flashcache-doc.txt) and source: 4 KiB cache blocks, sets of
// 512 blocks, a disk block's set chosen by (dbn / 512) mod sets, FIFO
// replacement within a set (the default reclaim policy).
const (
	fcBlock = 4 << 10
	fcAssoc = 512
)

// setAssoc is flashcache's block map: for each SSD slot the disk block it
// caches (+1; 0 is empty), and each set's FIFO pointer.
type setAssoc struct {
	slots []uint32
	next  []uint16
	sets  int64
}

func newSetAssoc(cacheBytes int64) *setAssoc {
	sets := max(cacheBytes/fcBlock/fcAssoc, 1)
	return &setAssoc{slots: make([]uint32, sets*fcAssoc), next: make([]uint16, sets), sets: sets}
}

func (s *setAssoc) set(dbn int64) int64 { return (dbn / fcAssoc) % s.sets }

// lookup returns the slot holding disk block dbn, or -1.
func (s *setAssoc) lookup(dbn int64) int64 {
	base := s.set(dbn) * fcAssoc
	want := uint32(dbn + 1)
	for i, v := range s.slots[base : base+fcAssoc] {
		if v == want {
			return base + int64(i)
		}
	}
	return -1
}

// insert caches dbn in its set's FIFO slot and returns the slot.
func (s *setAssoc) insert(dbn int64) int64 {
	set := s.set(dbn)
	slot := set*fcAssoc + int64(s.next[set])
	s.next[set] = (s.next[set] + 1) % fcAssoc
	s.slots[slot] = uint32(dbn + 1)
	return slot
}

// Flashcache is the flashcache-like baseline of FlashStream §5 (Table 3):
// the page cache (LRU over segments) in RAM, and below it a set-associative
// SSD cache of 4 KiB blocks in front of the disk, where a read miss is read
// from the disk and written to the SSD before the read completes: the SSD
// write is on the critical path (FlashStream §5.2).
type Flashcache struct {
	loop    *des.Loop
	cat     *des.Catalog
	ram     *tier.Cache // RAM only: the page cache
	ssd     *des.Disk
	hdd     *des.Disk
	fc      *setAssoc
	cached  int64
	waiting map[int][]func(tier.Tier) // concurrent misses of a segment wait for the first
	c       counters
}

// newFlashcache builds the baseline with ramBytes of page cache and
// cacheBytes of SSD cache.
func newFlashcache(l *des.Loop, cat *des.Catalog, ssd, hdd *des.Disk, ramBytes, cacheBytes int64) (*Flashcache, error) {
	ram, _, err := tier.New(tier.Options{RAMBytes: ramBytes}, 1)
	if err != nil {
		return nil, err
	}
	f := &Flashcache{loop: l, cat: cat, ram: ram, ssd: ssd, hdd: hdd, fc: newSetAssoc(cacheBytes), waiting: make(map[int][]func(tier.Tier))}
	f.c.SSDCapacity = int64(len(f.fc.slots)) * fcBlock
	return f, nil
}

// Name is "Flashcache".
func (f *Flashcache) Name() string { return "Flashcache" }

// SSD is the cache device.
func (f *Flashcache) SSD() *des.Disk { return f.ssd }

// HDD is the disk.
func (f *Flashcache) HDD() *des.Disk { return f.hdd }

// Counters are the cumulative counters, in 4 KiB blocks.
func (f *Flashcache) Counters() counters {
	c := f.c
	c.SSDCachedBytes = f.cached * fcBlock
	c.SSDFilled = float64(f.cached) / float64(len(f.fc.slots))
	return c
}

// Start schedules nothing: flashcache has no background feed.
func (f *Flashcache) Start() {}

// Serve serves a segment from the page cache, or, as the page cache reads
// a file, in read-ahead windows one after another, each block by block from
// the SSD cache and the disk.
func (f *Flashcache) Serve(seg int, done func(tier.Tier)) {
	f.c.Requests++
	key, size, off := f.cat.Keys[seg], f.cat.Sizes[seg], f.cat.Offsets[seg]
	first, last := off/fcBlock, (off+size-1)/fcBlock
	blocks := last - first + 1
	f.c.Units += blocks
	l := f.ram.Lookup(key, f.loop.Now())
	if l.Tier == tier.RAM {
		f.c.RAMUnits += blocks
		f.c.RAMBytes += size
		done(tier.RAM)
		return
	}
	if w, ok := f.waiting[seg]; ok { // the page cache's page locks
		f.waiting[seg] = append(w, done)
		return
	}
	f.waiting[seg] = []func(tier.Tier){done}
	from := tier.SSD
	var window func(at int64)
	window = func(at int64) {
		if at > off+size-1 {
			f.ram.Insert(key, size, nil, l.Token, f.loop.Now())
			for _, d := range f.waiting[seg] {
				d(from)
			}
			delete(f.waiting, seg)
			return
		}
		end := min(at+readAhead, off+size)
		if f.readWindow(at/fcBlock, (end-1)/fcBlock, func() { window(end) }) {
			from = tier.Miss
		}
	}
	window(off)
}

// readAhead is Linux's default read_ahead_kb (128 KiB): the page cache reads
// a file sequentially in windows of this size, one after another, each
// through flashcache.
const readAhead = 128 << 10

// readWindow issues a window's reads: cached 4 KiB blocks from the SSD,
// each run of missing ones from the disk then written to the SSD; it calls
// done when all are in and reports whether any block missed.
func (f *Flashcache) readWindow(first, last int64, done func()) (missed bool) {
	left := 1
	fin := func() {
		if left--; left == 0 {
			done()
		}
	}
	run := int64(-1)
	for dbn := first; dbn <= last+1; dbn++ {
		if dbn <= last {
			if slot := f.fc.lookup(dbn); slot < 0 {
				if run < 0 {
					run = dbn
				}
				continue
			} else {
				f.c.SSDUnits++
				f.c.SSDBytes += fcBlock
				left++
				f.ssd.Read(slot*fcBlock, fcBlock, fin)
			}
		}
		if run >= 0 {
			left++
			missed = true
			f.readMiss(run, dbn, fin)
			run = -1
		}
	}
	fin()
	return missed
}

// readMiss reads disk blocks [from, to), then writes each to its SSD slot,
// 4 KiB at a time, and completes when the writes have.
func (f *Flashcache) readMiss(from, to int64, done func()) {
	n := to - from
	f.c.HDDBytes += n * fcBlock
	f.hdd.Read(from*fcBlock, n*fcBlock, func() {
		left := n
		for dbn := from; dbn < to; dbn++ {
			if f.fc.slots[f.fc.set(dbn)*fcAssoc+int64(f.fc.next[f.fc.set(dbn)])] == 0 {
				f.cached++
			}
			slot := f.fc.insert(dbn)
			f.ssd.Write(slot*fcBlock, fcBlock, 0, func() {
				if left--; left == 0 {
					done()
				}
			})
		}
	})
}
