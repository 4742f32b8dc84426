package tier

import (
	"container/heap"
	"fmt"
	"math"
	"slices"
)

// BlockPolicy names an SSD block replacement policy (FlashStream §3.2.3).
type BlockPolicy int

// The SSD block replacement policies. The zero value, BlockReinsert, is
// the default: strata-lab sim policies measured it above the papers' four and
// BlockTinyLFU on every workload, writing a fraction of LRU's flash bytes
// (BENCHMARKS.md).
const (
	// BlockReinsert is BlockTinyLFU scored by request rate per byte, with
	// group-aware frequency (a segment's rendition directory shares its
	// popularity), reinsertion and lifetime grouping: when a victim block
	// is replaced, its live segments that are still hot (read since they
	// were written, or scored above a bar) are not lost but planned, read
	// back by the driver before the victim is overwritten, into the next
	// blocks together, so that survivors share blocks with survivors; see
	// reinsert.go and group.go.
	BlockReinsert BlockPolicy = iota
	// BlockTinyLFU counts every request in a count-min sketch with aging
	// (TinyLFU), copies a segment leaving RAM to flash only when, once
	// flash is full, it was requested more often than the segments of the
	// block it would displace, and evicts, among the blocks nearest the LRU
	// end, the one whose live segments are worth least. Blocks are still
	// written whole; see tinylfu.go.
	BlockTinyLFU
	// BlockLRU treats an access to a segment as an access to every block
	// holding one of its chunks and evicts the least recently used block
	// (FlashStream §3.2.3's default).
	BlockLRU
	// BlockLFUMean evicts the block whose live segments have the least mean
	// access count.
	BlockLFUMean
	// BlockLFUMedian evicts the block whose live segments have the least
	// median access count.
	BlockLFUMedian
	// BlockFIFO evicts the block written longest ago, like ZFS's L2ARC
	// rotor; accesses do not matter.
	BlockFIFO
)

var blockPolicyNames = map[BlockPolicy]string{
	BlockLRU: "lru", BlockLFUMean: "lfu-mean", BlockLFUMedian: "lfu-median", BlockFIFO: "fifo", BlockTinyLFU: "tinylfu",
	BlockReinsert: "reinsert",
}

// String returns the policy's name as ParseBlockPolicy accepts it.
func (p BlockPolicy) String() string {
	if s, ok := blockPolicyNames[p]; ok {
		return s
	}
	return fmt.Sprintf("BlockPolicy(%d)", int(p))
}

// ParseBlockPolicy parses "lru", "lfu-mean", "lfu-median", "fifo",
// "tinylfu" or "reinsert".
func ParseBlockPolicy(s string) (BlockPolicy, error) {
	for p, n := range blockPolicyNames {
		if n == s {
			return p, nil
		}
	}
	return 0, fmt.Errorf("tier: unknown block policy %q (want lru, lfu-mean, lfu-median, fifo, tinylfu or reinsert)", s)
}

// blockPolicy orders written blocks for replacement.
type blockPolicy interface {
	written(b *block)  // b was just written
	accessed(b *block) // a segment with a chunk in b was read
	changed(b *block)  // b's set of live segments changed
	removed(b *block)  // b left the cache
	victim() *block    // the block to replace next, nil when none
}

func newBlockPolicy(p BlockPolicy, freq *sketch) blockPolicy {
	switch p {
	case BlockTinyLFU, BlockReinsert:
		return newTinyLFU(freq)
	case BlockLFUMean:
		return newLFU(meanCount)
	case BlockLFUMedian:
		return newLFU(medianCount)
	case BlockFIFO:
		return newListPolicy(false)
	default:
		return newListPolicy(true)
	}
}

// blockList is an intrusive doubly linked list of blocks with a sentinel.
type blockList struct{ root block }

func (l *blockList) init() { l.root.next, l.root.prev = &l.root, &l.root }

func (l *blockList) pushFront(b *block) {
	b.prev, b.next = &l.root, l.root.next
	l.root.next.prev = b
	l.root.next = b
}

func (l *blockList) remove(b *block) {
	b.prev.next, b.next.prev = b.next, b.prev
	b.prev, b.next = nil, nil
}

func (l *blockList) back() *block {
	if l.root.prev == &l.root {
		return nil
	}
	return l.root.prev
}

// listPolicy is LRU (moveOnAccess) or FIFO.
type listPolicy struct {
	l            blockList
	moveOnAccess bool
}

func newListPolicy(moveOnAccess bool) *listPolicy {
	p := &listPolicy{moveOnAccess: moveOnAccess}
	p.l.init()
	return p
}

func (p *listPolicy) written(b *block) { p.l.pushFront(b) }

func (p *listPolicy) accessed(b *block) {
	if p.moveOnAccess {
		p.l.remove(b)
		p.l.pushFront(b)
	}
}

func (p *listPolicy) changed(*block)   {}
func (p *listPolicy) removed(b *block) { p.l.remove(b) }
func (p *listPolicy) victim() *block   { return p.l.back() }

// lfuPolicy keeps blocks in a min-heap of their score (mean or median
// access count of their live segments). Accesses only mark a block dirty;
// scores are recomputed when a victim is chosen, so a hit costs O(1) and
// an eviction O(d log n) for d blocks touched since the last one.
type lfuPolicy struct {
	h     blockHeap
	score func(*block) float64
	dirty []*block
}

func newLFU(score func(*block) float64) *lfuPolicy { return &lfuPolicy{score: score} }

func (p *lfuPolicy) written(b *block) {
	b.score = p.score(b)
	heap.Push(&p.h, b)
}

func (p *lfuPolicy) accessed(b *block) {
	if !b.dirty {
		b.dirty = true
		p.dirty = append(p.dirty, b)
	}
}

func (p *lfuPolicy) changed(b *block) { p.accessed(b) }

func (p *lfuPolicy) removed(b *block) {
	if b.heapIdx >= 0 {
		heap.Remove(&p.h, b.heapIdx)
	}
	b.dirty = false
}

func (p *lfuPolicy) victim() *block {
	for _, b := range p.dirty {
		if b.dirty && b.heapIdx >= 0 {
			b.score = p.score(b)
			heap.Fix(&p.h, b.heapIdx)
		}
		b.dirty = false
	}
	p.dirty = p.dirty[:0]
	if len(p.h) == 0 {
		return nil
	}
	return p.h[0]
}

// meanCount is LFU-Mean's score: the mean access count of b's live segments.
// A block holding part of a segment still being written scores +Inf: it is
// replaced last, since replacing it loses that segment's other chunks.
func meanCount(b *block) float64 {
	if b.partial > 0 {
		return math.Inf(1)
	}
	if len(b.segs) == 0 {
		return 0
	}
	var sum float64
	for _, s := range b.segs {
		sum += float64(s.count)
	}
	return sum / float64(len(b.segs))
}

// medianCount is LFU-Median's score: the median access count of b's live
// segments (the mean of the two middle counts when their number is even).
func medianCount(b *block) float64 {
	if b.partial > 0 {
		return math.Inf(1)
	}
	n := len(b.segs)
	if n == 0 {
		return 0
	}
	c := make([]uint64, n)
	for i, s := range b.segs {
		c[i] = s.count
	}
	slices.Sort(c)
	if n%2 == 1 {
		return float64(c[n/2])
	}
	return (float64(c[n/2-1]) + float64(c[n/2])) / 2
}

// blockHeap orders blocks by score, then least recent access, then number,
// so that ties are broken the same way in every run.
type blockHeap []*block

func (h blockHeap) Len() int { return len(h) }

func (h blockHeap) Less(i, j int) bool {
	a, b := h[i], h[j]
	if a.score != b.score {
		return a.score < b.score
	}
	if a.lastAccess != b.lastAccess {
		return a.lastAccess < b.lastAccess
	}
	return a.num < b.num
}

func (h blockHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].heapIdx, h[j].heapIdx = i, j
}

func (h *blockHeap) Push(x any) {
	b := x.(*block)
	b.heapIdx = len(*h)
	*h = append(*h, b)
}

func (h *blockHeap) Pop() any {
	old := *h
	b := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	b.heapIdx = -1
	return b
}
