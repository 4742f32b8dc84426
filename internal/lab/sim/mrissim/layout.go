package mrissim

import "container/list"

// Entry sizes of the Badger-like store, in bytes: a key of about 12 bytes
// plus Badger's 8-byte version and a few bytes of entry header in the LSM
// tree; a value log entry adds its header, key and checksum.
const (
	lsmEntryOverhead  = 40
	valuePointerBytes = 12
	vlogEntryOverhead = 48
	pageSize          = 4096
	gib               = int64(1) << 30
)

// layout is where the store's bytes lie: the LSM tree holds, per group in
// key order, the small object's entry and then the large object's value
// pointer; the value log holds the large values in insertion order.
type layout struct {
	smallEntry, ptrEntry, vlogEntry int64
	groups                          int
	lsmBase, vlogBase               int64
	pos                             []int // insertion position of each group in the value log
}

func newLayout(c Config, groups int, order []int) *layout {
	l := &layout{
		smallEntry: c.SmallSize + lsmEntryOverhead,
		ptrEntry:   lsmEntryOverhead + valuePointerBytes,
		vlogEntry:  c.LargeSize + vlogEntryOverhead,
		groups:     groups,
		pos:        make([]int, groups),
	}
	for i, g := range order { // nil order: positions stay 0 (sizes only)
		l.pos[g] = i
	}
	return l
}

// lsmBytes is the LSM tree's size; vlogBytes the value log's.
func (l *layout) lsmBytes() int64  { return int64(l.groups) * (l.smallEntry + l.ptrEntry) }
func (l *layout) vlogBytes() int64 { return int64(l.groups) * l.vlogEntry }

// place puts the LSM at the start of its device and the value log at the
// start of its own, or after the LSM (on a 1 GiB boundary) when they share
// one.
func (l *layout) place(shared bool) {
	l.lsmBase, l.vlogBase = 0, 0
	if shared {
		l.vlogBase = roundUp(l.lsmBytes(), gib)
	}
}

// small is the byte range of group g's small object in the LSM tree.
func (l *layout) small(g int) (int64, int64) {
	return l.lsmBase + int64(g)*(l.smallEntry+l.ptrEntry), l.smallEntry
}

// pointer is the byte range of group g's value pointer.
func (l *layout) pointer(g int) (int64, int64) {
	off, n := l.small(g)
	return off + n, l.ptrEntry
}

// value is the byte range of group g's large value in the value log.
func (l *layout) value(g int) (int64, int64) {
	return l.vlogBase + int64(l.pos[g])*l.vlogEntry, l.vlogEntry
}

// pages widens [off, off+n) to whole pages, as the page cache reads.
func pages(off, n int64) (int64, int64) {
	start := off / pageSize * pageSize
	return start, roundUp(off+n, pageSize) - start
}

func roundUp(n, unit int64) int64 { return (n + unit - 1) / unit * unit }

// pageCache is an LRU set of page numbers: the store's block cache.
type pageCache struct {
	cap   int
	order *list.List // front: most recent
	at    map[int64]*list.Element
}

func newPageCache(bytes int64) *pageCache {
	return &pageCache{cap: int(bytes / pageSize), order: list.New(), at: map[int64]*list.Element{}}
}

// hit reports whether every page of [off, off+n) is cached, and caches
// them.
func (c *pageCache) hit(off, n int64) bool {
	all := true
	for p := off / pageSize; p*pageSize < off+n; p++ {
		if e, ok := c.at[p]; ok {
			c.order.MoveToFront(e)
			continue
		}
		all = false
		c.at[p] = c.order.PushFront(p)
		if c.order.Len() > c.cap {
			delete(c.at, c.order.Remove(c.order.Back()).(int64))
		}
	}
	return all
}
