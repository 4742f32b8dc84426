package tier

import (
	"math"
	"math/rand/v2"
	"slices"
)

// tinyLFUPolicy is BlockTinyLFU's replacement half: blocks in LRU order,
// and the victim is, among the sample blocks nearest the LRU end, the one
// whose live segments are worth least: the smallest sum of their
// estimated recent request counts. A whole block is evicted at once, so
// what matters is the value it takes with it; a block whose segments have
// gone cold (or were invalidated, or were replaced by newer copies) goes
// first even when one of them was read a moment ago, which plain block LRU
// cannot see (FlashStream §3.2.3's LRU treats a read of one segment as a
// read of the block).
type tinyLFUPolicy struct {
	lru    listPolicy
	freq   *sketch
	sample int
	// version counts the changes that may change the victim: a block
	// written, changed or removed, or a read of one of the blocks the
	// last victim choice compared (tail), so that a decision derived from
	// the victim can be kept until then. A read of another block moves it
	// to the front and leaves the sampled tail as it was.
	version uint64
	tail    []*block
	// lost, when set, values a block by what replacing it would lose
	// (BlockReinsert: what reinsertion does not keep, per byte freed).
	lost func(b *block) float64

	// random samples the blocks at random among all rather than from
	// the LRU end (BlockReinsert): a block read now and then for one hot
	// segment never reaches the LRU end, and with it the cold segments
	// beside it would stay for good. The choice is kept until the
	// version changes, so that planning a rescue and taking the block
	// see the same victim.
	random   bool
	rng      *rand.Rand
	all      []*block // every block, at its heapIdx
	chosen   *block
	chosenAt uint64 // version when chosen was chosen; 0: none
	// objective weighs each segment's estimate in value (objective.go).
	objective Objective
}

// tinyLFUSample is the number of blocks from the LRU end BlockTinyLFU
// compares to choose a victim: enough to find a cold block among hot
// neighbours, few enough that choosing costs a few hundred sketch lookups.
const tinyLFUSample = 16

func newTinyLFU(freq *sketch) *tinyLFUPolicy {
	p := &tinyLFUPolicy{lru: listPolicy{moveOnAccess: true}, freq: freq, sample: tinyLFUSample}
	p.lru.l.init()
	return p
}

func (p *tinyLFUPolicy) written(b *block) {
	p.version++
	p.lru.written(b)
	b.heapIdx = len(p.all)
	p.all = append(p.all, b)
}
func (p *tinyLFUPolicy) accessed(b *block) {
	if slices.Contains(p.tail, b) {
		p.version++
	}
	p.lru.accessed(b)
}
func (p *tinyLFUPolicy) changed(*block) { p.version++ }
func (p *tinyLFUPolicy) removed(b *block) {
	p.version++
	p.lru.removed(b)
	last := p.all[len(p.all)-1]
	p.all[b.heapIdx], last.heapIdx = last, b.heapIdx
	p.all = p.all[:len(p.all)-1]
	b.heapIdx = -1
}

// victim returns the sampled block of least value, the nearest the LRU end
// among equals.
func (p *tinyLFUPolicy) victim() *block {
	if p.random {
		return p.randomVictim()
	}
	var best *block
	bestV := math.Inf(1)
	p.tail = p.tail[:0]
	for b := p.lru.l.root.prev; b != &p.lru.l.root && len(p.tail) < p.sample; b = b.prev {
		p.tail = append(p.tail, b)
		if v := p.value(b); v < bestV || best == nil {
			best, bestV = b, v
		}
	}
	return best
}

// value is the sum of the estimated recent request counts of b's live
// segments (with ObjectiveBytes, each times its size: the bytes its hits
// would save); +Inf while b holds part of a segment still being written
// (replacing it would lose that segment's other chunks).
func (p *tinyLFUPolicy) value(b *block) float64 {
	if b.partial > 0 {
		return math.Inf(1)
	}
	if p.lost != nil {
		return p.lost(b)
	}
	var v float64
	for _, s := range b.segs {
		v += p.freq.scoreSeg(s) * p.objective.weight(s.Size)
	}
	return v
}

// bar is the admission bar while flash is full: the mean estimate of the
// segments the next victim would take with it. A segment leaving RAM is
// copied to flash only if it was requested more often than that (W-TinyLFU
// admits a candidate only over the main cache's victim; here RAM is the
// window and the victim block the main cache's). ok is false when there is
// no victim to compare with. The mean is weighted by the objective's
// weight: with ObjectiveBytes the segments' sizes, the requests per byte
// the victim's hits save.
func (p *tinyLFUPolicy) bar() (bar float64, ok bool) {
	v := p.victim()
	if v == nil || v.partial > 0 {
		return 0, false
	}
	if len(v.segs) == 0 {
		return 0, true
	}
	var w float64 // the segments' weights: their count, or their bytes
	for _, s := range v.segs {
		w += p.objective.weight(s.Size)
	}
	return p.value(v) / w, true
}

// randomVictim is victim over a random sample of all blocks (all of them
// when they are no more than the sample), kept until the blocks change.
func (p *tinyLFUPolicy) randomVictim() *block {
	if p.chosenAt == p.version+1 {
		return p.chosen
	}
	var best *block
	bestV := math.Inf(1)
	consider := func(b *block) {
		if v := p.value(b); v < bestV || best == nil {
			best, bestV = b, v
		}
	}
	if len(p.all) <= p.sample {
		for b := p.lru.l.root.prev; b != &p.lru.l.root; b = b.prev {
			consider(b)
		}
	} else {
		for range p.sample {
			consider(p.all[p.rng.IntN(len(p.all))])
		}
	}
	p.chosen, p.chosenAt = best, p.version+1
	return best
}
