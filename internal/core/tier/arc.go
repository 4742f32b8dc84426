package tier

// ARC is the Adaptive Replacement Cache (Megiddo & Modha, "ARC: A
// Self-Tuning, Low Overhead Replacement Cache", FAST'03) as ZFS's arc.c runs
// it over variable-size buffers, the RAM policy of the simulator's ZFS-like
// baseline (FlashStream §3.2.4). All sizes are in bytes: c is the pool's
// budget and p the target for T1. T1 (ZFS's MRU) holds entries seen once
// since they entered, T2 (MFU) entries seen again; the ghost lists B1 and B2
// remember only the keys and sizes of entries evicted from T1 and T2. A miss
// enters T1; a hit, or a miss on a ghost, enters T2. A ghost hit moves p
// towards the list it was evicted from, so ARC balances recency against
// frequency by itself and a one-time scan cannot flush T2.
//
// ARC is an Admitter: RAMPool announces every insert before evicting for it,
// so that p adapts before the victims are chosen (ARC cases II and III).
// Unlike ZFS, c is fixed: Strata's pool has a fixed budget, where ZFS grows
// and shrinks arc_c with the kernel's memory pressure.
//
// ARC is not safe for concurrent use.
type ARC struct {
	c, p   int64
	t1, t2 arcList
	b1, b2 ghostList
	home   map[*Entry]*arcList // where each resident entry is: T1 or T2
	ghosts map[string]*ghost   // the keys of B1 and B2
	adm    admission           // the insert announced by Admitting
	victim *Entry              // the last Victim, until the next call
}

// admission is what Admitting learnt of the entry about to be inserted.
type admission struct {
	active bool
	key    string
	from   *ghostList // the ghost list that remembered key, nil on a miss
}

// NewARC returns an empty ARC for a pool of budget bytes. budget must be the
// pool's budget: the ghost lists are sized from it. p starts at c/2, as
// ZFS's arc_init sets arc_p (ARC's paper starts it at 0).
func NewARC(budget int64) *ARC {
	a := &ARC{c: budget, p: budget / 2, home: make(map[*Entry]*arcList), ghosts: make(map[string]*ghost)}
	a.t1.init()
	a.t2.init()
	a.b1.init()
	a.b2.init()
	return a
}

// ARCSizes are the byte counts of an ARC.
type ARCSizes struct {
	C        int64 // target size: the pool's budget
	P        int64 // target for MRU (T1), adapted by ghost hits
	MRU      int64 // held in T1
	MFU      int64 // held in T2
	MRUGhost int64 // remembered by B1
	MFUGhost int64 // remembered by B2
}

// Sizes returns the ARC's byte counts, for tests and reports.
func (a *ARC) Sizes() ARCSizes {
	return ARCSizes{C: a.c, P: a.p, MRU: a.t1.bytes, MFU: a.t2.bytes,
		MRUGhost: a.b1.bytes, MFUGhost: a.b2.bytes}
}

// Admitting looks key up in the ghost lists and, on a ghost hit, adapts p
// for an entry of size bytes, before RAMPool evicts for it.
func (a *ARC) Admitting(key string, size int64) {
	a.victim = nil
	a.adm = admission{active: true, key: key}
	if g := a.ghosts[key]; g != nil {
		a.adm.from = g.list
		a.adapt(g.list, size)
	}
}

// adapt is ZFS's arc_adapt: a hit in B1 raises p by the entry's size times
// max(1, B2/B1), a hit in B2 lowers it by the size times max(1, B1/B2),
// within [0, c]; ARC's δ1 and δ2 in bytes. The ghost just hit still counts
// in its list, as in ZFS.
func (a *ARC) adapt(hit *ghostList, size int64) {
	other := &a.b2
	if hit == &a.b2 {
		other = &a.b1
	}
	mult := int64(1)
	if hit.bytes < other.bytes && hit.bytes > 0 {
		mult = other.bytes / hit.bytes
	}
	delta := scaled(size, mult, a.c)
	if hit == &a.b1 {
		a.p = min(a.c, a.p+delta)
	} else {
		a.p = max(0, a.p-delta)
	}
}

// scaled is size x mult, capped at limit (which p cannot move beyond anyway)
// so that it cannot overflow.
func scaled(size, mult, limit int64) int64 {
	if size <= 0 {
		return 0
	}
	if mult > limit/size {
		return limit
	}
	return min(size*mult, limit)
}

// Insert adds e to T1 on a miss and to T2's MRU end on a ghost hit (ARC
// cases II-IV), then trims the ghost lists. Without a matching Admitting it
// adapts p itself. An entry that replaces a resident one for its key enters
// T1, like the new buffer of a ZFS arc_write.
func (a *ARC) Insert(e *Entry) {
	if !a.adm.active || a.adm.key != e.Key {
		a.Admitting(e.Key, e.Size)
	}
	l := &a.t1
	if a.adm.from != nil {
		l = &a.t2
	}
	if g := a.ghosts[e.Key]; g != nil {
		a.dropGhost(g)
	}
	a.push(e, l)
	a.adm, a.victim = admission{}, nil
	a.trimGhosts()
}

// Touch records a hit: e moves to T2's MRU end, from T1 or within T2 (ARC
// case I; ZFS's arc_access promotes an MRU hit to the MFU, once ARC_MINTIME
// has passed so that a prefetch and its read count once: segments are not
// prefetched here).
func (a *ARC) Touch(e *Entry) {
	a.victim = nil
	if a.unlink(e) != nil {
		a.push(e, &a.t2)
	}
}

// Remove forgets e. Right after Victim returned e it is an eviction, and
// e's key and size move to the ghost list matching its list (T1 to B1, T2 to
// B2); otherwise, an invalidation or a replacement, it leaves no ghost.
func (a *ARC) Remove(e *Entry) {
	evicted := e == a.victim
	a.victim = nil
	l := a.unlink(e)
	if l == nil || !evicted {
		return
	}
	g := &ghost{key: e.Key, size: e.Size}
	if l == &a.t1 {
		a.b1.pushFront(g)
	} else {
		a.b2.pushFront(g)
	}
	a.ghosts[e.Key] = g
}

// Victim returns the LRU end of T1 or T2 by ARC's REPLACE: T1's when T1
// holds more than p bytes, or exactly p when the entry being admitted hit
// in B2, else T2's. It returns nil when the ARC holds nothing.
func (a *ARC) Victim() *Entry {
	l := &a.t2
	if a.fromT1(a.t1.bytes, a.t1.len > 0, a.t2.len > 0) {
		l = &a.t1
	}
	a.victim = l.back()
	return a.victim
}

// fromT1 is REPLACE's choice with t1 bytes left in T1, falling back to the
// other list when one has run out (possible with variable sizes).
func (a *ARC) fromT1(t1 int64, inT1, inT2 bool) bool {
	switch {
	case !inT1:
		return false
	case !inT2:
		return true
	}
	return t1 > a.p || (a.adm.from == &a.b2 && t1 == a.p)
}

// WalkTail walks the entries in the order in which repeated calls of Victim
// would evict them for an insert that is not a ghost hit: it merges the LRU
// ends of T1 and T2 by REPLACE's rule, counting down T1's bytes as it takes
// from T1. The order is exact for the evictions of the next insert; later
// inserts into T1, and ghost hits that move p, reorder what follows. That
// is what FlashStream's monitor room needs, the segments nearest to
// eviction first (§3.2.1). ZFS's L2ARC feed (l2arc_write_buffers) instead
// scans the MFU tail, then the MRU tail, each up to its own headroom; in
// the pool's single monitor-room budget that order would spend it all on
// T2 while T1, where scans evict from, went unsaved.
func (a *ARC) WalkTail(fn func(*Entry) bool) {
	t1 := a.t1.bytes
	e1, e2 := a.t1.root.prev, a.t2.root.prev
	for e1 != &a.t1.root || e2 != &a.t2.root {
		var e *Entry
		if a.fromT1(t1, e1 != &a.t1.root, e2 != &a.t2.root) {
			e, e1 = e1, e1.prev
			t1 -= e.Size
		} else {
			e, e2 = e2, e2.prev
		}
		if !fn(e) {
			return
		}
	}
}

// push puts e at l's MRU end.
func (a *ARC) push(e *Entry, l *arcList) {
	l.pushFront(e)
	a.home[e] = l
}

// unlink takes e out of its list and returns that list, nil if e is not
// held.
func (a *ARC) unlink(e *Entry) *arcList {
	l := a.home[e]
	if l != nil {
		l.remove(e)
		delete(a.home, e)
	}
	return l
}

// trimGhosts drops ghosts from the LRU ends so that T1+B1 <= c and
// T1+T2+B1+B2 <= 2c (ARC case IV; ZFS's arc_adjust trims the ghost states
// the same way).
func (a *ARC) trimGhosts() {
	for a.t1.bytes+a.b1.bytes > a.c && a.b1.len > 0 {
		a.dropGhost(a.b1.back())
	}
	for a.total() > 2*a.c && a.b2.len > 0 {
		a.dropGhost(a.b2.back())
	}
}

func (a *ARC) total() int64 {
	return a.t1.bytes + a.t2.bytes + a.b1.bytes + a.b2.bytes
}

func (a *ARC) dropGhost(g *ghost) {
	g.list.remove(g)
	delete(a.ghosts, g.key)
}

// arcList is T1 or T2: an entry list that counts its bytes.
type arcList struct {
	entryList
	bytes int64
}

func (l *arcList) pushFront(e *Entry) {
	l.entryList.pushFront(e)
	l.bytes += e.Size
}

func (l *arcList) remove(e *Entry) {
	l.entryList.remove(e)
	l.bytes -= e.Size
}

// A ghost is what B1 and B2 remember of an evicted entry: its key and size.
type ghost struct {
	key        string
	size       int64
	prev, next *ghost
	list       *ghostList
}

// ghostList is B1 or B2: an intrusive list of ghosts with a sentinel, MRU
// at the front, that counts its bytes.
type ghostList struct {
	root  ghost
	len   int
	bytes int64
}

func (l *ghostList) init() {
	l.root.next, l.root.prev = &l.root, &l.root
}

func (l *ghostList) pushFront(g *ghost) {
	g.prev, g.next, g.list = &l.root, l.root.next, l
	l.root.next.prev = g
	l.root.next = g
	l.len++
	l.bytes += g.size
}

func (l *ghostList) remove(g *ghost) {
	g.prev.next, g.next.prev = g.next, g.prev
	g.prev, g.next, g.list = nil, nil, nil
	l.len--
	l.bytes -= g.size
}

func (l *ghostList) back() *ghost {
	if l.len == 0 {
		return nil
	}
	return l.root.prev
}
