package tier

import (
	"slices"
)

// BlockReinsert's reinsertion (CacheLib's hits-based reinsertion, ATS's
// evacuation), decided here and executed by the driver:
//
//  1. When issue takes a victim block, planRescue picks the victim's live
//     segments that are still hot: read on flash since they were written,
//     or estimated by the sketch at ReinsertMinEst recent requests or more.
//     A segment is reinserted at most ReinsertMax times in a row without a
//     read, and at most ReinsertShare of a block is reinserted per victim,
//     so reinsertion cannot crowd out new segments or write without bound.
//  2. The block write lists them in BlockWrite.Rescue: the driver reads
//     them from flash before it writes the block (which may overwrite
//     them) and hands the bytes to Rescued.
//  3. They wait in the rescue queue, ahead of the ring, and fill packs them
//     first into the next block: survivors share blocks with survivors
//     (lifetime grouping), so the blocks of long-lived segments are not
//     the ones whole-block eviction throws away with cold neighbours.
//
// Until the driver hands the bytes over, a rescued segment is a miss (it
// left the index when its block was taken); a rescue never delivered is
// dropped when the feed packs the next block.

// Reinsertion defaults (Options.Reinsert* override them).
const (
	// DefaultReinsertMax is the number of reinsertions in a row, without
	// a read on flash in between, after which a segment is let go.
	DefaultReinsertMax = 2
	// DefaultReinsertMinEst is the score from which a segment not read
	// since written is still reinserted (2 before group capture scores,
	// which are lower for cold titles; 1 measured better with them).
	DefaultReinsertMinEst = 1
	// DefaultReinsertShare is the largest share of a block reinserted
	// from one victim.
	DefaultReinsertShare = 0.5
)

type rescueItem struct {
	RingItem
	waiting bool // the driver has not handed its bytes over yet
}

// rescueQueue holds reinserted segments ahead of the ring.
type rescueQueue struct {
	items []*rescueItem
	keys  map[string]*rescueItem
}

func newRescueQueue() *rescueQueue { return &rescueQueue{keys: make(map[string]*rescueItem)} }

func (q *rescueQueue) push(it *rescueItem) {
	q.items = append(q.items, it)
	q.keys[it.Key] = it
}

func (q *rescueQueue) front() (*rescueItem, bool) {
	if len(q.items) == 0 {
		return nil, false
	}
	return q.items[0], true
}

func (q *rescueQueue) pop() {
	delete(q.keys, q.items[0].Key)
	q.items[0] = nil
	q.items = q.items[1:]
}

func (q *rescueQueue) removeIf(drop func(key string) bool) {
	kept := q.items[:0]
	for _, it := range q.items {
		if drop(it.Key) {
			delete(q.keys, it.Key)
			continue
		}
		kept = append(kept, it)
	}
	clear(q.items[len(kept):])
	q.items = kept
}

// planRescue picks the segments of victim v to reinsert, hottest first.
func (c *Cache) planRescue(v *block) []*Segment {
	if c.freq == nil || v.partial > 0 {
		return nil
	}
	type cand struct {
		s     *Segment
		score float64
	}
	var cands []cand
	for _, s := range v.segs {
		hit := s.count > s.base
		// A viewer on its way to the segment vouches for it however
		// often it was reinserted unread.
		ahead := c.freq.sessionValue(s.hash(c.freq.hashOf)) > 0
		if !hit && !ahead && s.reins >= uint8(c.opts.ReinsertMax) {
			continue
		}
		est := c.freq.scoreSeg(s)
		if !hit && est < float64(c.opts.ReinsertMinEst) {
			continue
		}
		if _, inRAM := c.ram.Peek(s.Key); inRAM {
			continue // leaves RAM through the monitor when it must
		}
		score := est
		if hit {
			score += sketchMax + 1
		}
		cands = append(cands, cand{s, score})
	}
	slices.SortStableFunc(cands, func(a, b cand) int {
		if a.score != b.score {
			if a.score > b.score {
				return -1
			}
			return 1
		}
		if a.s.Key < b.s.Key {
			return -1
		}
		return 1
	})
	budget := int64(float64(c.opts.BlockSize) * c.opts.ReinsertShare)
	var out []*Segment
	for _, cd := range cands {
		if cd.s.Size > budget {
			continue
		}
		budget -= cd.s.Size
		out = append(out, cd.s)
	}
	return out
}

// queueRescue queues the segments planRescue picked, before their block is
// taken, and returns the copies the driver reads.
func (c *Cache) queueRescue(segs []*Segment) []Segment {
	out := make([]Segment, 0, len(segs))
	for _, s := range segs {
		reins := s.reins + 1
		if s.count > s.base {
			reins = 1
		}
		c.rescue.push(&rescueItem{RingItem: RingItem{Key: s.Key, Size: s.Size, Hits: s.count, reins: reins, Sum: s.Sum}, waiting: true})
		seg := *s
		seg.Chunks = slices.Clone(s.Chunks)
		out = append(out, seg)
	}
	c.reinserted += uint64(len(segs))
	return out
}

// Rescued hands over the bytes of a segment a block write listed in
// Rescue, read from flash before that write; ok false (the read failed or
// did not verify) lets it go. In the simulator data is nil.
func (c *Cache) Rescued(key string, data []byte, ok bool) {
	it := c.rescue.keys[key]
	if it == nil || !it.waiting {
		return
	}
	if !ok {
		c.rescue.removeIf(func(k string) bool { return k == key })
		c.reinsertLost++
		return
	}
	it.Data, it.waiting = data, false
}

// reinsertAdmission is BlockReinsert's admission filter while flash is
// full: a candidate goes to flash only if its score per byte beats that
// of what the next victim would lose, the segments planRescue would not
// reinsert. What reinsertion keeps costs nothing to displace, so the bar
// is lower than the whole victim's; and per byte, since a block holds
// bytes, not segments: a large segment must be worth several small ones.
// A segment's worth is its score under Options.Objective (objective.go):
// its estimated requests, or those times its size for the byte hit ratio,
// where a segment's worth per byte is its request rate whatever its size.
func (c *Cache) reinsertAdmission(p *tinyLFUPolicy) func(key string, size int64) bool {
	// The bar is what the victim (chosen, and its rescue planned, with
	// the session table) would lose; a candidate is scored without the
	// table unless told otherwise (Options.SessionAdmission).
	off := !c.opts.SessionAdmission
	bar, open := c.admissionBar(p)
	if open {
		return func(string, int64) bool { return true }
	}
	w := c.opts.Objective.weight
	return func(key string, size int64) bool {
		c.freq.sessionsOff = off
		sc := c.freq.score(key)
		c.freq.sessionsOff = false
		return sc*w(size) > bar*float64(max(size, 1))
	}
}

// barCache keeps BlockReinsert's admission bar between monitor passes:
// choosing the victim and planning its rescue scores a few hundred
// segments, and the monitor runs ten times a second while requests, which
// move the scores, arrive a few at a time. The bar is recomputed when a
// block is written, read, changed or removed (the victim may differ) and
// at least every barRefresh requests (the scores drift).
type barCache struct {
	set     bool
	version uint64 // the block policy's version when computed
	at      int64  // the sketch's additions when computed
	bar     float64
	open    bool // no victim to compare with: admit everything
}

// barRefresh is the number of requests after which the admission bar is
// recomputed even though no block changed.
const barRefresh = 32

// admissionBar returns the score per byte a candidate must beat, or open
// when there is no complete victim to compare with.
func (c *Cache) admissionBar(p *tinyLFUPolicy) (bar float64, open bool) {
	bc := &c.barCache
	if bc.set && bc.version == p.version && c.freq.total-bc.at < barRefresh {
		return bc.bar, bc.open
	}
	bar, open = c.computeBar(p)
	*bc = barCache{set: true, version: p.version, at: c.freq.total, bar: bar, open: open}
	return bar, open
}

// computeBar is the mean score per byte of what the victim would lose.
func (c *Cache) computeBar(p *tinyLFUPolicy) (bar float64, open bool) {
	v := p.victim()
	if v == nil || v.partial > 0 {
		return 0, true
	}
	kept := c.planRescue(v)
	var sum float64
	var bytes int64
	for _, s := range v.segs {
		if !slices.Contains(kept, s) {
			sum += c.freq.scoreSeg(s) * c.opts.Objective.weight(s.Size)
			bytes += s.Size
		}
	}
	if bytes == 0 {
		return 0, true
	}
	return sum / float64(bytes), false
}

// Reinserted returns how many segments of victim blocks BlockReinsert
// planned for reinsertion, and how many of those the driver did not
// complete (a failed read, or a driver that does not read them).
func (c *Cache) Reinserted() (planned, lost uint64) { return c.reinserted, c.reinsertLost }

// lostValue is BlockReinsert's value of a block: what replacing it would
// lose, the scores of the segments planRescue would not keep, per byte
// freed for new segments. A block's hot segments survive its eviction, so
// they must not protect their cold neighbours: valued whole (BlockTinyLFU),
// a block with one hot segment is never the victim and the cold bytes
// beside it stay for good.
func (c *Cache) lostValue(b *block) float64 {
	kept := c.planRescue(b)
	var sum float64
	var keptBytes int64
	for _, s := range b.segs {
		if slices.Contains(kept, s) {
			keptBytes += s.Size
			continue
		}
		sum += c.freq.scoreSeg(s) * c.opts.Objective.weight(s.Size)
	}
	return sum / float64(max(c.opts.BlockSize-keptBytes, 1))
}
