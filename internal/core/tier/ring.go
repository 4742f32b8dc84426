package tier

// A RingItem is a segment waiting in the ring to be written to flash.
type RingItem struct {
	Key  string
	Size int64
	Data []byte // nil in the simulator
	Hold any    // Entry.Hold: kept as long as Data is
	Hits uint64 // access count carried to flash for the LFU policies
	Sum  uint64 // the RAM entry's digest (Entry.Sum), kept while queued

	reins uint8 // times reinserted in a row without a read (BlockReinsert)
}

// Ring is the bounded buffer between the RAM pool's monitor room and the SSD
// feed (FlashStream §3.2.1-3.2.2): a FIFO of segments bounded in bytes,
// holding each key at most once. It holds references to the segments' bytes,
// which are immutable, so a segment evicted from RAM while queued is still
// written.
type Ring struct {
	capacity int64
	used     int64
	items    []RingItem // FIFO: items[head:] are queued
	head     int
	keys     map[string]RingItem
}

// NewRing returns an empty ring of capacity bytes.
func NewRing(capacity int64) *Ring {
	return &Ring{capacity: capacity, keys: make(map[string]RingItem)}
}

// Push appends it unless the key is queued already or it does not fit.
func (r *Ring) Push(it RingItem) bool {
	if _, dup := r.keys[it.Key]; dup || r.used+it.Size > r.capacity {
		return false
	}
	r.items = append(r.items, it)
	r.keys[it.Key] = it
	r.used += it.Size
	return true
}

// Front returns the oldest item.
func (r *Ring) Front() (RingItem, bool) {
	if r.head == len(r.items) {
		return RingItem{}, false
	}
	return r.items[r.head], true
}

// Pop removes the oldest item.
func (r *Ring) Pop() (RingItem, bool) {
	it, ok := r.Front()
	if !ok {
		return it, false
	}
	r.items[r.head] = RingItem{}
	r.head++
	delete(r.keys, it.Key)
	r.used -= it.Size
	r.compact()
	return it, true
}

// compact reclaims the popped prefix once it dominates the slice.
func (r *Ring) compact() {
	if r.head == len(r.items) {
		r.items, r.head = r.items[:0], 0
		return
	}
	if r.head > 64 && r.head*2 > len(r.items) {
		n := copy(r.items, r.items[r.head:])
		clear(r.items[n:])
		r.items, r.head = r.items[:n], 0
	}
}

// Get returns the queued item for key.
func (r *Ring) Get(key string) (RingItem, bool) {
	it, ok := r.keys[key]
	return it, ok
}

// RemoveIf drops every queued item for which drop returns true and returns
// how many it dropped.
func (r *Ring) RemoveIf(drop func(RingItem) bool) int {
	kept := r.items[:r.head]
	n := 0
	for _, it := range r.items[r.head:] {
		if drop(it) {
			delete(r.keys, it.Key)
			r.used -= it.Size
			n++
			continue
		}
		kept = append(kept, it)
	}
	clear(r.items[len(kept):])
	r.items = kept
	r.compact()
	return n
}

// Len is the number of queued items.
func (r *Ring) Len() int { return len(r.items) - r.head }

// Used is the number of bytes queued.
func (r *Ring) Used() int64 { return r.used }

// Capacity is the byte bound.
func (r *Ring) Capacity() int64 { return r.capacity }
