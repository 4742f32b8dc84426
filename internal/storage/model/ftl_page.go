package model

// Block states of the page-mapped FTL.
const (
	blockFree   uint8 = iota // erased, in its die's free list
	blockOpen                // being written (a host or GC frontier)
	blockClosed              // full; a candidate victim, in a bucket list
	blockVictim              // being evacuated by paced garbage collection
)

// pageFTL is a page-mapped flash translation layer. Each die owns its
// blocks: host pages are striped over the dies in write order, every
// (die, stream) pair has a host frontier block and a GC frontier block, and
// garbage collection runs per die, copying a victim's valid pages to the
// die's GC frontier for the victim's stream (copyback). Memory is two int32
// per page (forward and reverse map) plus a few words per block.
//
// Foreground collection is paced, as controllers do to keep latency even:
// once a die is down to LowWater+1 free blocks it picks a victim with v
// valid pages out of P and copies v/(P-v) of them after every host page it
// takes, so the victim is empty just as the host has used the space it
// frees. Only when a die reaches LowWater anyway does a write wait for whole
// victims to be collected; with SSDParams.UnpacedGC that is the only way.
type pageFTL struct {
	dies, streams int
	ppb           int32 // pages per (multi-plane) block
	bpd           int32 // blocks per die
	planes        int64
	lowWater      int
	policy        GCPolicy
	unpaced       bool // collect only in ensureFree, whole victims at once

	l2p, p2l []int32 // logical -> physical page and back; -1 = none

	valid, wp []int32 // per block: valid pages, pages written
	state     []uint8
	tag       []uint8 // stream of the block's data
	stamp     []int64 // clock at the block's last program (cost-benefit age)

	// Closed blocks sit in per-die bucket lists by valid count, so greedy
	// finds a victim in O(pages per block) and invalidation is O(1).
	heads      []int32 // [die*(ppb+1) + valid] -> first block or -1
	next, prev []int32

	free   [][]int32 // per die: erased blocks (a stack)
	open   []int32   // [die*streams + stream] host frontier, -1 = none
	gcOpen []int32   // [die*streams + stream] GC frontier
	cursor int       // next die of the host stripe
	// Valid pages per die and in all, and the lead over the average at
	// which a die is skipped by the stripe (half its spare).
	dieValid   []int64
	totalValid int64
	maxLead    int64
	clock      int64 // host pages written, the cost-benefit clock

	// Paced collection, per die: the victim being evacuated (-1 = none),
	// the next page to look at, pages to copy per host page, and the
	// copies owed.
	victimOf []int32
	scan     []int32
	ratio    []float64
	debt     []float64

	ops   *dieOps
	stats *Stats
}

func newPageFTL(p *SSDParams, stats *Stats) *pageFTL {
	dies, bpd, ppb := p.dies(), int32(p.blocksPerDie()), int32(p.pagesPerDieBlock())
	nb := int(bpd) * dies
	f := &pageFTL{
		dies: dies, streams: p.Streams, ppb: ppb, bpd: bpd, planes: int64(p.Planes),
		lowWater: p.LowWater, policy: p.GC, unpaced: p.UnpacedGC, stats: stats,
		l2p:   filled(int(p.logicalPages()), -1),
		p2l:   filled(nb*int(ppb), -1),
		valid: make([]int32, nb), wp: make([]int32, nb),
		state: make([]uint8, nb), tag: make([]uint8, nb), stamp: make([]int64, nb),
		heads: filled(dies*int(ppb+1), -1),
		next:  filled(nb, -1), prev: filled(nb, -1),
		free: make([][]int32, dies),
		open: filled(dies*p.Streams, -1), gcOpen: filled(dies*p.Streams, -1),
		victimOf: filled(dies, -1), scan: make([]int32, dies),
		dieValid: make([]int64, dies),
		maxLead:  max(1, (int64(bpd)*int64(ppb)-p.logicalPages()/int64(dies))/2),
		ratio:    make([]float64, dies), debt: make([]float64, dies),
	}
	for d := range dies {
		f.free[d] = make([]int32, 0, bpd)
		for b := int32(d+1)*bpd - 1; b >= int32(d)*bpd; b-- {
			f.free[d] = append(f.free[d], b)
		}
	}
	return f
}

func filled(n int, v int32) []int32 {
	s := make([]int32, n)
	for i := range s {
		s[i] = v
	}
	return s
}

func (f *pageFTL) setOps(o *dieOps)        { f.ops = o }
func (f *pageFTL) freeBlocks(d int) int    { return len(f.free[d]) }
func (f *pageFTL) dieOf(b int32) int       { return int(b / f.bpd) }
func (f *pageFTL) blockOf(ppn int32) int32 { return ppn / f.ppb }

// write maps n logical pages from first to new physical pages, striped over
// the dies, in the given stream.
func (f *pageFTL) write(first, n int64, stream int) {
	for lpn := int32(first); lpn < int32(first+n); lpn++ {
		if old := f.l2p[lpn]; old >= 0 {
			f.invalidate(old)
		}
		d := f.nextDie()
		ppn := f.alloc(d, stream, false)
		f.p2l[ppn], f.l2p[lpn] = lpn, ppn
		f.ops.prog[d]++
		f.clock++
		f.pace(d)
	}
	f.stats.HostWrites += n
	f.stats.Streams[stream].HostWrites += n
}

// nextDie is the next die of the round-robin stripe, skipping dies whose
// valid data runs ahead of the average by more than half their spare: a
// pattern that keeps invalidating the pages it just wrote on some dies
// (such as sub-page writes) would otherwise fill the others.
func (f *pageFTL) nextDie() int {
	avg := f.totalValid / int64(f.dies)
	for range f.dies {
		d := f.cursor
		if f.cursor++; f.cursor == f.dies {
			f.cursor = 0
		}
		if f.dieValid[d]-avg <= f.maxLead {
			return d
		}
	}
	return f.cursor
}

// read counts a flash read on the die of every mapped page.
func (f *pageFTL) read(first, n int64) {
	for lpn := first; lpn < first+n; lpn++ {
		if ppn := f.l2p[lpn]; ppn >= 0 {
			f.ops.read[f.dieOf(f.blockOf(ppn))]++
			f.stats.HostReads++
		}
	}
}

// trim unmaps n logical pages from first.
func (f *pageFTL) trim(first, n int64) {
	for lpn := first; lpn < first+n; lpn++ {
		if ppn := f.l2p[lpn]; ppn >= 0 {
			f.invalidate(ppn)
			f.l2p[lpn] = -1
			f.stats.TrimmedPages++
		}
	}
}

// invalidate drops physical page ppn's data.
func (f *pageFTL) invalidate(ppn int32) {
	b := f.blockOf(ppn)
	f.p2l[ppn] = -1
	f.dieValid[f.dieOf(b)]--
	f.totalValid--
	if f.state[b] == blockClosed { // victims and open blocks are in no list
		f.unlink(b)
		f.valid[b]--
		f.link(b)
		return
	}
	f.valid[b]--
}

// alloc returns the next page of die d's host (or GC) frontier for stream,
// opening a new block when the frontier is full. Host allocations first
// collect garbage while the die is short of free blocks; GC allocations
// draw on that reserve.
func (f *pageFTL) alloc(d, stream int, gc bool) int32 {
	front := f.open
	if gc {
		front = f.gcOpen
	}
	slot := d*f.streams + stream
	b := front[slot]
	if b < 0 || f.wp[b] == f.ppb {
		if b >= 0 {
			f.close(b)
		}
		if !gc {
			f.ensureFree(d)
		}
		b = f.take(d, stream)
		front[slot] = b
	}
	ppn := b*f.ppb + f.wp[b]
	f.wp[b]++
	f.valid[b]++
	f.dieValid[d]++
	f.totalValid++
	f.stamp[b] = f.clock
	return ppn
}

// take pops an erased block of die d and opens it for stream.
func (f *pageFTL) take(d, stream int) int32 {
	fl := f.free[d]
	if len(fl) == 0 {
		panic("model: page-mapped FTL ran out of free blocks (over-provisioning too small)")
	}
	b := fl[len(fl)-1]
	f.free[d] = fl[:len(fl)-1]
	f.state[b], f.tag[b], f.wp[b], f.valid[b] = blockOpen, uint8(stream), 0, 0
	return b
}

func (f *pageFTL) close(b int32) {
	f.state[b] = blockClosed
	f.link(b)
}

// ensureFree collects victims on die d until it has more than LowWater
// free blocks or no victim would gain space.
func (f *pageFTL) ensureFree(d int) {
	for i := int32(0); len(f.free[d]) <= f.lowWater && i < f.bpd; i++ {
		if !f.collect(d) {
			return
		}
	}
}

// collectIdle runs one background collection on die d.
func (f *pageFTL) collectIdle(d int) bool { return f.collect(d) }

// pace does the copies die d owes for the host page just written, starting
// a victim when the die is short of free blocks.
func (f *pageFTL) pace(d int) {
	if f.unpaced {
		return
	}
	if f.victimOf[d] < 0 {
		if len(f.free[d]) > f.lowWater+1 || !f.start(d) {
			return
		}
	}
	f.debt[d] += f.ratio[d]
	for f.debt[d] >= 1 && f.victimOf[d] >= 0 {
		f.copyNext(d)
		f.debt[d]--
	}
}

// start makes die d's greedy (or cost-benefit) choice its victim.
func (f *pageFTL) start(d int) bool {
	v := f.victim(d)
	if v < 0 {
		return false
	}
	f.unlink(v)
	f.state[v] = blockVictim
	f.victimOf[d], f.scan[d], f.debt[d] = v, 0, 0
	f.ratio[d] = float64(f.valid[v]) / float64(f.ppb-f.valid[v])
	return true
}

// copyNext moves the victim's next valid page to the GC frontier of its
// stream, erasing the victim once it is empty.
func (f *pageFTL) copyNext(d int) {
	v := f.victimOf[d]
	base := v * f.ppb
	i := f.scan[d]
	for i < f.wp[v] && f.p2l[base+i] < 0 {
		i++
	}
	if i < f.wp[v] {
		lpn, stream := f.p2l[base+i], int(f.tag[v])
		dst := f.alloc(d, stream, true)
		f.p2l[dst], f.l2p[lpn], f.p2l[base+i] = lpn, dst, -1
		f.valid[v]--
		f.dieValid[d]--
		f.totalValid--
		f.ops.copy[d]++
		f.stats.GCCopies++
		f.stats.Streams[stream].GCCopies++
		i++
	}
	f.scan[d] = i
	if i >= f.wp[v] || f.valid[v] == 0 {
		f.victimOf[d] = -1
		f.erase(v, d)
	}
}

// collect empties one victim on die d at once (the current one, else a
// new one). It reports false when no closed block has an invalid page.
func (f *pageFTL) collect(d int) bool {
	if f.victimOf[d] < 0 && !f.start(d) {
		return false
	}
	for f.victimOf[d] >= 0 {
		f.copyNext(d)
	}
	return true
}

// erase returns block b of die d to the free list.
func (f *pageFTL) erase(b int32, d int) {
	f.state[b], f.valid[b], f.wp[b] = blockFree, 0, 0
	f.free[d] = append(f.free[d], b)
	f.ops.erase[d]++
	f.stats.Erases += f.planes
}

// victim returns die d's victim block or -1.
func (f *pageFTL) victim(d int) int32 {
	if f.policy == CostBenefit {
		return f.costBenefitVictim(d)
	}
	h := f.heads[d*int(f.ppb+1) : (d+1)*int(f.ppb+1)]
	for v := range f.ppb { // a full block gains nothing
		if h[v] >= 0 {
			return h[v]
		}
	}
	return -1
}

// costBenefitVictim scans die d for the closed block with the largest
// (1-u)/(2u) * age (Rosenblum & Ousterhout's LFS cleaner), O(blocks per die).
func (f *pageFTL) costBenefitVictim(d int) int32 {
	best, bestScore := int32(-1), -1.0
	for b := int32(d) * f.bpd; b < int32(d+1)*f.bpd; b++ {
		if f.state[b] != blockClosed || f.valid[b] == f.ppb {
			continue
		}
		u := float64(f.valid[b]) / float64(f.ppb)
		score := (1 - u) / (2*u + 1e-9) * float64(f.clock-f.stamp[b]+1)
		if score > bestScore {
			best, bestScore = b, score
		}
	}
	return best
}

// link puts closed block b at the head of its bucket.
func (f *pageFTL) link(b int32) {
	i := f.dieOf(b)*int(f.ppb+1) + int(f.valid[b])
	f.prev[b], f.next[b] = -1, f.heads[i]
	if f.heads[i] >= 0 {
		f.prev[f.heads[i]] = b
	}
	f.heads[i] = b
}

// unlink removes closed block b from its bucket.
func (f *pageFTL) unlink(b int32) {
	if f.prev[b] >= 0 {
		f.next[f.prev[b]] = f.next[b]
	} else {
		f.heads[f.dieOf(b)*int(f.ppb+1)+int(f.valid[b])] = f.next[b]
	}
	if f.next[b] >= 0 {
		f.prev[f.next[b]] = f.prev[b]
	}
	f.prev[b], f.next[b] = -1, -1
}
