package tier

import "time"

// An Entry is a segment held in the RAM buffer pool.
type Entry struct {
	Key  string
	Size int64
	// Data is the segment's bytes; nil in the simulator, which moves no
	// payload. Its bytes never change once inserted; Data and Hold may
	// be replaced together by the same bytes elsewhere (Cache.Rehome),
	// so a caller reads them under the serialization of every other
	// call and keeps the pair it read.
	Data []byte
	// Hold keeps Data's memory alive where Data does not lie in Go's
	// heap (the live server's RAM arena, a file mapped into memory):
	// whatever keeps Data keeps Hold with it, the core included (the
	// ring, the packer, a write in flight), and the memory goes only
	// when the last Hold is collected. Nil in the simulator and for
	// bytes in the heap.
	Hold any
	// Sum is a digest of Data the caller computed on insertion (the live
	// server's content ETag), kept with the bytes; 0 when not set.
	Sum uint64
	// Hits counts accesses since the segment entered the cache hierarchy;
	// it seeds the segment's count on flash for the LFU block policies.
	Hits uint64
	// Inserted is when the segment entered RAM.
	Inserted time.Duration

	prev, next *Entry // intrusive list links, owned by the RAM policy
}

// A RAMPolicy orders the entries of the RAM buffer pool for eviction.
// FlashStream §3.2.1: LRU by default; others (ARC for the ZFS-like
// baseline) plug in without changing the rest of the engine.
type RAMPolicy interface {
	// Insert adds a new entry.
	Insert(e *Entry)
	// Touch records a hit on e.
	Touch(e *Entry)
	// Remove forgets e.
	Remove(e *Entry)
	// Victim returns the entry to evict next, or nil when empty.
	Victim() *Entry
	// WalkTail calls fn on entries from the eviction end, nearest to
	// eviction first, until fn returns false or the entries run out.
	WalkTail(fn func(*Entry) bool)
}

// An Admitter is a RAMPolicy whose choice of victims depends on the entry
// being admitted: ARC adapts its target on a ghost hit before it replaces
// (Megiddo & Modha, FAST'03, cases II and III; ZFS's arc_get_data_buf calls
// arc_adapt before it evicts). RAMPool.Insert calls Admitting, then evicts
// by calling Victim and at once Remove on the entry it returned, then calls
// Insert; an Admitter may take such a Remove as an eviction rather than an
// explicit removal.
type Admitter interface {
	RAMPolicy
	// Admitting announces that an entry of size bytes for key, not in the
	// pool, is about to be inserted.
	Admitting(key string, size int64)
}

// entryList is an intrusive doubly linked list of entries with a sentinel.
type entryList struct {
	root Entry
	len  int
}

func (l *entryList) init() *entryList {
	l.root.next, l.root.prev = &l.root, &l.root
	return l
}

func (l *entryList) pushFront(e *Entry) {
	e.prev, e.next = &l.root, l.root.next
	l.root.next.prev = e
	l.root.next = e
	l.len++
}

func (l *entryList) remove(e *Entry) {
	e.prev.next, e.next.prev = e.next, e.prev
	e.prev, e.next = nil, nil
	l.len--
}

func (l *entryList) back() *Entry {
	if l.len == 0 {
		return nil
	}
	return l.root.prev
}

// walkBack calls fn from the back towards the front until it returns false.
func (l *entryList) walkBack(fn func(*Entry) bool) bool {
	for e := l.root.prev; e != &l.root; {
		prev := e.prev
		if !fn(e) {
			return false
		}
		e = prev
	}
	return true
}

// LRU is the least-recently-used RAM policy, the FlashStream default.
type LRU struct{ l entryList }

// NewLRU returns an empty LRU policy.
func NewLRU() *LRU {
	p := &LRU{}
	p.l.init()
	return p
}

// Insert puts e at the head.
func (p *LRU) Insert(e *Entry) { p.l.pushFront(e) }

// Touch moves e to the head.
func (p *LRU) Touch(e *Entry) { p.l.remove(e); p.l.pushFront(e) }

// Remove unlinks e.
func (p *LRU) Remove(e *Entry) { p.l.remove(e) }

// Victim returns the tail.
func (p *LRU) Victim() *Entry { return p.l.back() }

// WalkTail walks from the tail towards the head.
func (p *LRU) WalkTail(fn func(*Entry) bool) { p.l.walkBack(fn) }

// RAMPool is the first-level cache: variable-size segments under a byte
// budget (FlashStream §3.2.1, §4.1).
type RAMPool struct {
	budget int64
	used   int64
	charge int64 // bytes counted against the budget besides the entries' (Charge)
	m      map[string]*Entry
	policy RAMPolicy
}

// NewRAMPool returns an empty pool of budget bytes ordered by policy.
func NewRAMPool(budget int64, policy RAMPolicy) *RAMPool {
	return &RAMPool{budget: budget, m: make(map[string]*Entry), policy: policy}
}

// Get returns the entry for key and records the hit.
func (p *RAMPool) Get(key string) (*Entry, bool) {
	e, ok := p.m[key]
	if ok {
		e.Hits++
		p.policy.Touch(e)
	}
	return e, ok
}

// Peek returns the entry for key without recording a hit.
func (p *RAMPool) Peek(key string) (*Entry, bool) {
	e, ok := p.m[key]
	return e, ok
}

// Insert adds e at the head. FlashStream §3.2.1, evict-ahead: victims
// leave the tail at once, whether or not the monitor copied them to the ring;
// the inserter never waits. It returns the evicted entries, and false when
// e alone exceeds the budget (e is then not cached). An entry already held
// for e.Key is replaced, removed rather than evicted; an Admitter policy
// then hears of e before the evictions made for it.
func (p *RAMPool) Insert(e *Entry) (evicted []*Entry, ok bool) {
	if e.Size > p.budget {
		return nil, false
	}
	if old, dup := p.m[e.Key]; dup {
		p.Remove(old)
	}
	if a, ok := p.policy.(Admitter); ok {
		a.Admitting(e.Key, e.Size)
	}
	evicted = p.evictFor(e.Size)
	p.m[e.Key] = e
	p.used += e.Size
	p.policy.Insert(e)
	return evicted, true
}

// Charge counts b bytes against the budget besides the entries' (memory
// the pool's entries cost beyond their own bytes: the live server's
// memory-file regions kept by a few entries), evicting from the tail at
// once until the entries fit beside it. It returns the evicted entries.
func (p *RAMPool) Charge(b int64) (evicted []*Entry) {
	p.charge = max(b, 0)
	return p.evictFor(0)
}

// evictFor evicts from the tail until size more bytes fit beside the
// entries and the charge, and returns the evicted entries.
func (p *RAMPool) evictFor(size int64) (evicted []*Entry) {
	for p.used+p.charge+size > p.budget && len(p.m) > 0 {
		v := p.policy.Victim()
		p.Remove(v)
		evicted = append(evicted, v)
	}
	return evicted
}

// Remove drops e from the pool.
func (p *RAMPool) Remove(e *Entry) {
	if p.m[e.Key] != e {
		return
	}
	delete(p.m, e.Key)
	p.used -= e.Size
	p.policy.Remove(e)
}

// Len is the number of segments in the pool.
func (p *RAMPool) Len() int { return len(p.m) }

// Used is the number of bytes held.
func (p *RAMPool) Used() int64 { return p.used }

// Budget is the byte budget.
func (p *RAMPool) Budget() int64 { return p.budget }

// WalkMonitorRoom calls fn on the segments of the monitor room, from the
// tail: the last ceil(fraction x Len) segments, or, when bytes > 0, the tail
// segments that together hold at most bytes (ZFS's L2ARC headroom scan).
func (p *RAMPool) WalkMonitorRoom(fraction float64, bytes int64, fn func(*Entry)) {
	n := monitorRoomLen(p.Len(), fraction)
	var seen int64
	p.policy.WalkTail(func(e *Entry) bool {
		if bytes > 0 {
			if seen+e.Size > bytes {
				return false
			}
			seen += e.Size
		} else {
			if n == 0 {
				return false
			}
			n--
		}
		fn(e)
		return true
	})
}

// monitorRoomLen is ceil(fraction x n), at least 1 when n > 0 and fraction > 0.
func monitorRoomLen(n int, fraction float64) int {
	if n == 0 || fraction <= 0 {
		return 0
	}
	k := int(float64(n)*fraction + 0.999999)
	return min(max(k, 1), n)
}
