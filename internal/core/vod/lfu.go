package vod

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"time"
)

// FileState is where a file stands in the flash cache.
type FileState uint8

// The states of a file. A file moves Absent -> Waiting (a copy is planned)
// -> Copying (its space is free and the copy runs) -> Resident (readable)
// -> Draining (evicted, still read by streams admitted before) -> Absent.
const (
	Absent   FileState = iota // not on flash (its request count may still be kept)
	Waiting                   // copy planned; waiting for victims to drain
	Copying                   // space allocated, copy in progress
	Resident                  // on flash, readable
	Draining                  // evicted; no new readers, space held until the last one leaves
)

var stateNames = [...]string{"absent", "waiting", "copying", "resident", "draining"}

// String returns the state's name.
func (s FileState) String() string {
	if int(s) < len(stateNames) {
		return stateNames[s]
	}
	return fmt.Sprintf("state(%d)", uint8(s))
}

// LFUOptions configure an LFU.
type LFUOptions struct {
	// Capacity is the flash space for whole files, bytes. Required.
	Capacity int64
	// HalfLife is how long a request takes to count half as much. 0 means
	// counts never decay: the paper's plain LFU (§5), right for a fixed
	// popularity, slow to follow a changing one.
	HalfLife time.Duration
	// Budget bounds the flash write rate of copies (zero: unlimited).
	// LifetimeRate gives the rate that makes a drive last a target time.
	Budget WriteBudget
	// MaxCopies is how many copies may be planned and unfinished at once.
	// Default 1: copies are written one after another, sequentially.
	MaxCopies int
	// Margin is how much a candidate's count must exceed each victim's:
	// copy only if count > Margin x victim count. Default 1 (strictly
	// more, the rule); above 1 adds hysteresis against churn.
	Margin float64
	// Confidence asks for a candidate to out-count each victim by that many
	// standard deviations, taking request counts as Poisson: count -
	// victim > Confidence x sqrt(count + victim). Small counts are mostly
	// noise (when titles are nearly equally popular, as at the paper's
	// s = 0.271, a ratio test alone copies on chance); large counts need
	// only a small lead. 0 (default) compares counts plainly.
	Confidence float64
	// Reserve is flash space, bytes, kept out of the plan so that a copy
	// can start at once while its victims still drain (streams admitted
	// on a victim before its eviction may read it for a whole video
	// length). Files are planned into Capacity - Reserve; copies and
	// draining files may use all of Capacity. Default 0.
	Reserve int64
}

// LFUStats counts what an LFU decided.
type LFUStats struct {
	Requests, Hits  int64 // Request calls, and those for a resident file
	Planned         int64 // copies planned (Plan said yes)
	Installed       int64 // copies finished
	Aborted         int64 // copies given up
	Evicted         int64 // resident files chosen as victims or dropped
	PlannedBytes    int64 // bytes of planned copies (what the budget was charged)
	InstalledBytes  int64 // bytes of finished copies
	RefusedByBudget int64 // Plan calls refused because the budget was in debt
	RefusedByCount  int64 // Plan calls whose best candidate did not out-count the victims it needs
	RefusedBusy     int64 // Plan calls refused because MaxCopies copies were unfinished
	StagedBytes     int64 // bytes placed by Stage
}

// A Copy is a copy the LFU decided on: copy ID (Size bytes) to flash once
// Ready hands it out, evicting the victims.
type Copy[K cmp.Ordered] struct {
	ID   K
	Size int64
	// Freed are victims nobody reads: delete them from flash now.
	Freed []K
	// Draining are victims still being read: admit no new stream on them;
	// Release reports when the last reader of each has left.
	Draining []K
}

type lfuFile[K cmp.Ordered] struct {
	id    K
	size  int64
	score float64 // forward-decayed request count
	state FileState
	pins  int // streams reading it from flash
	pos   int // index in the resident heap (Resident) or the candidate heap (Absent), else -1
}

// LFU is file-level LFU for a flash cache of whole files (VoD §5), with
// the changes that let it follow changing popularity: request counts
// decay with a half-life; Plan copies the most frequent file not on flash
// only when its count beats the least-frequent resident files it would
// replace and the write budget allows; a victim that streams are reading
// drains instead of stalling them. Files are keyed by K (a file name in
// the live server, a title number in the simulator). An LFU is not safe
// for concurrent use.
type LFU[K cmp.Ordered] struct {
	o          LFUOptions
	d          decay
	files      map[K]*lfuFile[K]
	resident   indexHeap[*lfuFile[K]] // least count first
	candidates indexHeap[*lfuFile[K]] // absent files, most count first
	waiting    []*lfuFile[K]          // planned copies, oldest first
	copying    int                    // files Copying
	// physical is the space held on flash (Copying, Resident, Draining);
	// future is the space held once draining ends and planned copies are
	// done (Waiting, Copying, Resident). physical stays within Capacity,
	// future within Capacity - Reserve.
	physical, future int64
	stats            LFUStats
}

// NewLFU returns an empty cache.
func NewLFU[K cmp.Ordered](o LFUOptions) (*LFU[K], error) {
	if o.Capacity <= 0 || o.Reserve < 0 || o.Reserve >= o.Capacity {
		return nil, fmt.Errorf("%w: lfu capacity %d with reserve %d", ErrInvalid, o.Capacity, o.Reserve)
	}
	if o.MaxCopies <= 0 {
		o.MaxCopies = 1
	}
	if o.Margin < 1 {
		o.Margin = 1
	}
	c := &LFU[K]{o: o, d: decay{halfLife: o.HalfLife}, files: make(map[K]*lfuFile[K])}
	pos := func(f *lfuFile[K]) *int { return &f.pos }
	c.resident = indexHeap[*lfuFile[K]]{less: lessCount[K], pos: pos}
	c.candidates = indexHeap[*lfuFile[K]]{less: func(a, b *lfuFile[K]) bool { return lessCount(b, a) }, pos: pos}
	return c, nil
}

// lessCount orders files by count, then key, so ties break the same way
// every run.
func lessCount[K cmp.Ordered](a, b *lfuFile[K]) bool {
	if a.score != b.score {
		return a.score < b.score
	}
	return a.id < b.id
}

// Request records a request at now for file id of size bytes and reports
// whether the file is readable on flash. Every request counts, including
// ones that end up rejected: they are demand all the same.
func (c *LFU[K]) Request(now time.Duration, id K, size int64) bool {
	f := c.record(now, id, size, 1)
	c.stats.Requests++
	if f.state == Resident {
		c.stats.Hits++
		return true
	}
	return false
}

// Record adds n requests at now to file id's count without counting them
// as requests in Stats: history restored after a restart, or the counts a
// cache starts from.
func (c *LFU[K]) Record(now time.Duration, id K, size int64, n float64) {
	c.record(now, id, size, n)
}

func (c *LFU[K]) record(now time.Duration, id K, size int64, n float64) *lfuFile[K] {
	c.renormalize(now)
	f := c.file(id, size)
	f.score += n * c.d.weight(now)
	if f.pos >= 0 {
		c.heapOf(f).Fix(f)
	}
	return f
}

// heapOf is the heap a file in state Resident or Absent belongs to.
func (c *LFU[K]) heapOf(f *lfuFile[K]) *indexHeap[*lfuFile[K]] {
	if f.state == Resident {
		return &c.resident
	}
	return &c.candidates
}

// setState moves f to state s, and between the heaps.
func (c *LFU[K]) setState(f *lfuFile[K], s FileState) {
	if f.pos >= 0 {
		c.heapOf(f).Remove(f)
	}
	f.state = s
	if s == Resident || c.candidate(f) {
		c.heapOf(f).Push(f)
	}
}

// candidate reports whether f may be planned: absent, and of a size that
// fits the cache.
func (c *LFU[K]) candidate(f *lfuFile[K]) bool {
	return f.state == Absent && f.size > 0 && f.size <= c.plannable()
}

// file returns id's entry, creating it; an absent file takes the size of
// its latest request.
func (c *LFU[K]) file(id K, size int64) *lfuFile[K] {
	f := c.files[id]
	if f == nil {
		f = &lfuFile[K]{id: id, pos: -1}
		c.files[id] = f
	}
	if f.state == Absent && f.size != size {
		f.size = size
		c.setState(f, Absent) // enters the candidates once its size is known
	}
	return f
}

func (c *LFU[K]) renormalize(now time.Duration) {
	if k := c.d.shift(now); k != 1 {
		for _, f := range c.files {
			f.score *= k
		}
	}
}

// Count is file id's request count at now: requests weighed by
// 2^-(age / HalfLife), or plain requests without decay.
func (c *LFU[K]) Count(now time.Duration, id K) float64 {
	if f := c.files[id]; f != nil {
		return c.d.count(f.score, now)
	}
	return 0
}

// State is file id's state.
func (c *LFU[K]) State(id K) FileState {
	if f := c.files[id]; f != nil {
		return f.state
	}
	return Absent
}

// Stage places file id of size bytes on flash as resident without a copy:
// the paper's static top-N staging (§6.1), or the index rebuilt after a
// restart. Its count is kept if it had one.
func (c *LFU[K]) Stage(id K, size int64) error {
	if f := c.files[id]; f != nil && f.state != Absent {
		return fmt.Errorf("%w: stage %v: file is %v", ErrState, id, f.state)
	}
	if size <= 0 || c.physical+size > c.o.Capacity || c.future+size > c.plannable() {
		return fmt.Errorf("%w: stage %v: %d bytes do not fit", ErrInvalid, id, size)
	}
	f := c.file(id, size)
	c.setState(f, Resident)
	c.physical += size
	c.future += size
	c.stats.StagedBytes += size
	return nil
}

// Plan decides at now whether to copy a file to flash, and which: the
// most frequent file not on flash, if a copy slot is free (MaxCopies),
// the write budget is not in debt, and the file fits after evicting
// resident files it out-counts (times Margin). Victims are taken least
// frequent first, those nobody reads before those being read, so that
// space frees at once where it can. On yes the victims are evicted (Copy
// says which to delete now and which drain), the budget is charged, and
// the file waits for Ready. Call it after requests, or on a timer.
func (c *LFU[K]) Plan(now time.Duration) (Copy[K], bool) {
	if c.candidates.Len() == 0 {
		return Copy[K]{}, false
	}
	if len(c.waiting)+c.copying >= c.o.MaxCopies {
		c.stats.RefusedBusy++
		return Copy[K]{}, false
	}
	if !c.o.Budget.Allow(now) {
		c.stats.RefusedByBudget++
		return Copy[K]{}, false
	}
	f := c.candidates.Top()
	victims, ok := c.victims(f, c.d.weight(now))
	if !ok {
		c.stats.RefusedByCount++
		return Copy[K]{}, false
	}
	return c.plan(now, f, victims), true
}

// victims returns resident files whose space lets f fit, each of which f
// out-counts (beats): unread ones first, least frequent first; false if
// there are not enough. w is the decay weight of a request now.
func (c *LFU[K]) victims(f *lfuFile[K], w float64) ([]*lfuFile[K], bool) {
	need := c.future + f.size - c.plannable()
	if need <= 0 {
		return nil, true
	}
	if c.resident.Len() == 0 || !c.beats(f, c.resident.Top(), w) {
		return nil, false
	}
	var idle, busy []*lfuFile[K]
	for _, v := range c.resident.Sorted() {
		if !c.beats(f, v, w) {
			break
		}
		if v.pins == 0 {
			idle = append(idle, v)
		} else {
			busy = append(busy, v)
		}
	}
	var out []*lfuFile[K]
	for _, v := range append(idle, busy...) {
		out = append(out, v)
		if need -= v.size; need <= 0 {
			return out, true
		}
	}
	return nil, false
}

// beats reports whether f out-counts v by the margin and the confidence.
// Scores are counts times w, so the Poisson test on counts, cf - cv >
// z sqrt(cf + cv), is sf - sv > z sqrt(w (sf + sv)) on scores.
func (c *LFU[K]) beats(f, v *lfuFile[K], w float64) bool {
	if !(f.score > c.o.Margin*v.score) {
		return false
	}
	return c.o.Confidence <= 0 || f.score-v.score > c.o.Confidence*math.Sqrt(w*(f.score+v.score))
}

// plannable is the space files are planned into.
func (c *LFU[K]) plannable() int64 { return c.o.Capacity - c.o.Reserve }

// plan evicts victims and queues f's copy.
func (c *LFU[K]) plan(now time.Duration, f *lfuFile[K], victims []*lfuFile[K]) Copy[K] {
	p := Copy[K]{ID: f.id, Size: f.size}
	for _, v := range victims {
		if c.evict(v) {
			p.Freed = append(p.Freed, v.id)
		} else {
			p.Draining = append(p.Draining, v.id)
		}
	}
	c.setState(f, Waiting)
	c.future += f.size
	c.waiting = append(c.waiting, f)
	c.o.Budget.Spend(now, f.size)
	c.stats.Planned++
	c.stats.PlannedBytes += f.size
	return p
}

// evict takes resident v out of service and reports whether its space is
// free at once (no reader); otherwise it drains.
func (c *LFU[K]) evict(v *lfuFile[K]) bool {
	c.future -= v.size
	c.stats.Evicted++
	if v.pins > 0 {
		c.setState(v, Draining)
		return false
	}
	c.setState(v, Absent)
	c.physical -= v.size
	return true
}

// Ready hands out the oldest planned copy once its space is free on flash
// (its victims have drained) and marks it Copying; the caller copies the
// file and then calls Installed, or Abort on failure.
func (c *LFU[K]) Ready() (id K, size int64, ok bool) {
	if len(c.waiting) == 0 {
		return id, 0, false
	}
	f := c.waiting[0]
	if c.physical+f.size > c.o.Capacity {
		return id, 0, false
	}
	c.waiting = c.waiting[1:]
	c.setState(f, Copying)
	c.copying++
	c.physical += f.size
	return f.id, f.size, true
}

// Installed marks file id's finished copy resident: readable from now on.
func (c *LFU[K]) Installed(id K) error {
	f := c.files[id]
	if f == nil || f.state != Copying {
		return fmt.Errorf("%w: installed %v: not being copied", ErrState, id)
	}
	c.setState(f, Resident)
	c.copying--
	c.stats.Installed++
	c.stats.InstalledBytes += f.size
	return nil
}

// Abort gives up file id's planned or running copy and frees its space.
// The budget is not refunded: a failed copy may still have written.
func (c *LFU[K]) Abort(id K) error {
	f := c.files[id]
	if f == nil || (f.state != Waiting && f.state != Copying) {
		return fmt.Errorf("%w: abort %v: no copy planned", ErrState, id)
	}
	if f.state == Copying {
		c.copying--
		c.physical -= f.size
	} else {
		c.waiting = slices.DeleteFunc(c.waiting, func(w *lfuFile[K]) bool { return w == f })
	}
	c.setState(f, Absent)
	c.future -= f.size
	c.stats.Aborted++
	return nil
}

// Acquire starts a stream reading file id from flash and reports whether
// it may (only a resident file may gain readers). Pair it with Release.
func (c *LFU[K]) Acquire(id K) bool {
	f := c.files[id]
	if f == nil || f.state != Resident {
		return false
	}
	f.pins++
	return true
}

// Release ends a stream that Acquire admitted on file id. freed reports
// that the file was draining and its space is now free: delete it.
func (c *LFU[K]) Release(id K) (freed bool, err error) {
	f := c.files[id]
	if f == nil || f.pins <= 0 {
		return false, fmt.Errorf("%w: release %v: no reader", ErrState, id)
	}
	f.pins--
	if f.state != Draining || f.pins > 0 {
		return false, nil
	}
	c.setState(f, Absent)
	c.physical -= f.size
	return true, nil
}

// Drop evicts resident file id outside the policy (its content changed or
// was deleted). freed is as for Release.
func (c *LFU[K]) Drop(id K) (freed bool, err error) {
	f := c.files[id]
	if f == nil || f.state != Resident {
		return false, fmt.Errorf("%w: drop %v: not resident", ErrState, id)
	}
	return c.evict(f), nil
}

// Prune forgets absent files whose count at now is below min, bounding the
// memory of a catalog much larger than the cache; it returns how many.
func (c *LFU[K]) Prune(now time.Duration, min float64) int {
	n := 0
	for id, f := range c.files {
		if f.state == Absent && f.pins == 0 && c.d.count(f.score, now) < min {
			if f.pos >= 0 {
				c.candidates.Remove(f)
			}
			delete(c.files, id)
			n++
		}
	}
	return n
}

// Resident returns the resident files, least frequent first.
func (c *LFU[K]) Resident() []K {
	var out []K
	for _, f := range c.resident.Sorted() {
		out = append(out, f.id)
	}
	return out
}

// Least returns the least-frequent resident file and its count at now.
func (c *LFU[K]) Least(now time.Duration) (id K, count float64, ok bool) {
	if c.resident.Len() == 0 {
		return id, 0, false
	}
	f := c.resident.Top()
	return f.id, c.d.count(f.score, now), true
}

// Used is the flash space held now (copying, resident and draining files).
func (c *LFU[K]) Used() int64 { return c.physical }

// Committed is the space held once draining and planned copies finish.
func (c *LFU[K]) Committed() int64 { return c.future }

// Capacity is the cache size in bytes.
func (c *LFU[K]) Capacity() int64 { return c.o.Capacity }

// Stats returns the counters.
func (c *LFU[K]) Stats() LFUStats { return c.stats }

// Check verifies the cache's invariants: space sums, states and the heap.
func (c *LFU[K]) Check() error {
	var phys, fut int64
	res, copying := 0, 0
	for _, f := range c.files {
		switch f.state {
		case Resident:
			phys, fut, res = phys+f.size, fut+f.size, res+1
		case Copying:
			phys, fut, copying = phys+f.size, fut+f.size, copying+1
		case Waiting:
			fut += f.size
		case Draining:
			phys += f.size
		}
		inHeap := f.state == Resident || c.candidate(f)
		if inHeap != (f.pos >= 0) {
			return fmt.Errorf("vod: lfu: %v is %v with heap slot %d", f.id, f.state, f.pos)
		}
	}
	switch {
	case phys != c.physical || fut != c.future:
		return fmt.Errorf("vod: lfu: space %d/%d, tracked %d/%d", phys, fut, c.physical, c.future)
	case phys > c.o.Capacity || fut > c.plannable():
		return fmt.Errorf("vod: lfu: space %d/%d over capacity %d", phys, fut, c.o.Capacity)
	case res != c.resident.Len() || copying != c.copying || len(c.files)-c.candidates.Len() < res:
		return fmt.Errorf("vod: lfu: %d resident, %d in heap; %d copying, %d tracked", res, c.resident.Len(), copying, c.copying)
	}
	return nil
}
