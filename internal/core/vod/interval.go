package vod

import (
	"fmt"
	"math"
	"slices"
	"time"
)

// StreamID names one playback of a file for interval caching.
type StreamID uint64

// IntervalOptions configure an IntervalCache.
type IntervalOptions struct {
	// Capacity is the RAM buffer, bytes. Required.
	Capacity int64
	// BlockSize is the allocation unit, bytes; default 1 MiB (VoD §6.1).
	BlockSize int64
	// ArrivalOnly gives an interval a buffer only when its follower
	// arrives and it fits in free space: no preemption, no later
	// allocation. A simpler reading of interval caching, kept to compare
	// against; the default orders all intervals by size (Dan and Sitaram).
	ArrivalOnly bool
	// ExtraBlocks are added to every interval's buffer. The paper's
	// buffer fills and drains continuously; a server that reads whole
	// blocks holds the block its preceder has read ahead of the play-out
	// position too, so a live server asks for 1. Default 0.
	ExtraBlocks int64
}

// A Switch tells the caller that Stream's interval has a buffer: from At
// on, Stream reads from RAM (call IntervalCache.Switch then, and release
// its disk bandwidth if that returns true).
type Switch struct {
	Stream StreamID
	At     time.Duration
}

// Changes are what an interval-cache event asks of the caller.
type Changes struct {
	// Cached are followers whose intervals were just given buffers.
	Cached []Switch
	// ToDisk are followers that read from RAM and no longer can: their
	// buffers were preempted (Arrive made sure the disk has room for
	// them) or their preceding stream left early (Leave). Reserve disk
	// bandwidth for them again.
	ToDisk []StreamID
}

type ivState uint8

const (
	ivWaiting ivState = iota // a candidate without a buffer
	ivCached                 // holding blocks
)

// interval is the gap between two consecutive streams of one file: pre
// reads blocks that fol reads delta later.
type interval[F comparable] struct {
	pre, fol *icStream[F]
	blocks   int64
	state    ivState
	switchAt time.Duration
	writing  bool // cached and pre still reading: pre writes its blocks into the buffer
	pos      int  // slot in the cached or the waiting heap
}

type icStream[F comparable] struct {
	id       StreamID
	start    time.Duration
	rate     int64
	file     F
	prev     *icStream[F] // the stream that started just before on the same file
	next     *icStream[F] // the stream that started just after
	iv       *interval[F] // the interval in which this stream follows
	onRAM    bool
	finished bool // ended; kept only while it still precedes a cached interval
}

// IntervalStats counts an IntervalCache's decisions.
type IntervalStats struct {
	Intervals   int64 // intervals formed (a stream arriving behind another)
	Allocations int64 // buffers given, at arrival or when space freed
	Preemptions int64 // buffers taken back for a smaller interval
	Switches    int64 // followers that moved to RAM
}

// IntervalCache is the bookkeeping of interval caching (Dan and Sitaram;
// VoD §2.1): two consecutive streams of a file form an interval; the
// blocks the preceding stream reads are kept in RAM until the following
// stream reads them, so the follower needs no disk. RAM goes to the
// smallest intervals first, so as many streams as possible are served
// from it. A new follower still starts on disk (Algorithm 1): the data
// before the preceder's position is gone, so it reads from disk until,
// delta later, it reaches the first buffered block and switches to RAM.
//
// An interval holds its whole buffer (delta x rate, in blocks) from
// allocation until its follower ends. The buffer really fills over the
// first delta and drains over the last, so this overstates its use by
// about delta/L of the time (L the video length): conservative, and what
// guarantees an allocated interval can never run out of room.
//
// Streams are assumed to play at their rate from start to end without
// pausing or seeking, as in the paper's simulation; Leave handles a stream
// that stops early. All streams of one file must have the same rate.
type IntervalCache[F comparable] struct {
	o         IntervalOptions
	capBlocks int64
	used      int64 // blocks held by cached intervals
	streams   map[StreamID]*icStream[F]
	last      map[F]*icStream[F]      // latest stream of each file
	cached    indexHeap[*interval[F]] // largest first
	waiting   indexHeap[*interval[F]] // smallest first
	writeRate int64                   // bytes/s preceders write into buffers
	onRAM     int                     // followers reading from RAM
	stats     IntervalStats
}

// NewIntervalCache returns an empty interval cache.
func NewIntervalCache[F comparable](o IntervalOptions) (*IntervalCache[F], error) {
	if o.BlockSize <= 0 {
		o.BlockSize = MB
	}
	if o.Capacity < 0 || o.ExtraBlocks < 0 {
		return nil, fmt.Errorf("%w: interval cache capacity %d, extra blocks %d", ErrInvalid, o.Capacity, o.ExtraBlocks)
	}
	pos := func(iv *interval[F]) *int { return &iv.pos }
	return &IntervalCache[F]{
		o: o, capBlocks: o.Capacity / o.BlockSize,
		streams: make(map[StreamID]*icStream[F]), last: make(map[F]*icStream[F]),
		cached:  indexHeap[*interval[F]]{less: largerInterval[F], pos: pos},
		waiting: indexHeap[*interval[F]]{less: smallerInterval[F], pos: pos},
	}, nil
}

func smallerInterval[F comparable](a, b *interval[F]) bool {
	if a.blocks != b.blocks {
		return a.blocks < b.blocks
	}
	return a.fol.id < b.fol.id
}

func largerInterval[F comparable](a, b *interval[F]) bool { return smallerInterval(b, a) }

// Arrive registers stream id of file f, starting at now at rate bytes per
// second (the caller has admitted it on disk, Algorithm 1). If another
// stream of f is playing, the two form an interval, which gets a buffer if
// there is room, or if preempting larger intervals makes room; diskRoom is
// how many followers now reading from RAM the disk could take back (free
// disk bandwidth / rate), so preemption never strands a stream.
func (c *IntervalCache[F]) Arrive(now time.Duration, id StreamID, f F, rate int64, diskRoom int) (Changes, error) {
	var ch Changes
	if _, dup := c.streams[id]; dup {
		return ch, fmt.Errorf("%w: stream %d arrived twice", ErrState, id)
	}
	if rate <= 0 {
		return ch, fmt.Errorf("%w: stream %d rate %d", ErrInvalid, id, rate)
	}
	s := &icStream[F]{id: id, start: now, rate: rate, file: f}
	c.streams[id] = s
	if pre := c.last[f]; pre != nil && !pre.finished {
		pre.next, s.prev = s, pre
		s.iv = &interval[F]{pre: pre, fol: s, blocks: c.blocksFor(now-pre.start, rate), pos: -1}
		c.stats.Intervals++
		c.place(now, s.iv, diskRoom, &ch)
	}
	c.last[f] = s
	return ch, nil
}

// blocksFor is the buffer of an interval of d at rate: whole blocks, at
// least one, and the extra blocks.
func (c *IntervalCache[F]) blocksFor(d time.Duration, rate int64) int64 {
	b := int64(math.Ceil(d.Seconds() * float64(rate) / float64(c.o.BlockSize)))
	return max(b, 1) + c.o.ExtraBlocks
}

// place gives iv a buffer if it fits, possibly by preempting larger
// intervals; otherwise iv waits.
func (c *IntervalCache[F]) place(now time.Duration, iv *interval[F], diskRoom int, ch *Changes) {
	if iv.blocks > c.capBlocks-c.used {
		if c.o.ArrivalOnly {
			return
		}
		victims := c.preemptable(iv.blocks, diskRoom)
		if victims == nil {
			c.waiting.Push(iv)
			return
		}
		for _, v := range victims {
			c.preempt(v, ch)
		}
		defer c.fill(now, ch) // what the victims freed beyond iv's need
	}
	c.allocate(now, iv, ch)
}

// preemptable returns cached intervals larger than blocks, largest first,
// whose buffers make room for blocks, taking back at most diskRoom
// followers that read from RAM; nil if there are none such.
func (c *IntervalCache[F]) preemptable(blocks int64, diskRoom int) []*interval[F] {
	free := c.capBlocks - c.used
	var out []*interval[F]
	for _, v := range c.larger(blocks) {
		if v.fol.onRAM {
			if diskRoom == 0 {
				continue
			}
			diskRoom--
		}
		out = append(out, v)
		if free += v.blocks; free >= blocks {
			return out
		}
	}
	return nil
}

// larger returns the cached intervals of more than blocks, largest first.
// It walks only the part of the max-heap above blocks: below a node that
// is not larger, nothing is.
func (c *IntervalCache[F]) larger(blocks int64) []*interval[F] {
	var out []*interval[F]
	stack := []int{0}
	items := c.cached.items
	for len(stack) > 0 {
		i := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if i >= len(items) || items[i].blocks <= blocks {
			continue
		}
		out = append(out, items[i])
		stack = append(stack, 2*i+1, 2*i+2)
	}
	slices.SortFunc(out, func(a, b *interval[F]) int {
		if largerInterval(a, b) {
			return -1
		}
		return 1
	})
	return out
}

// preempt takes v's buffer back; v waits again while its preceder plays.
func (c *IntervalCache[F]) preempt(v *interval[F], ch *Changes) {
	c.release(v)
	c.stats.Preemptions++
	if v.fol.onRAM {
		v.fol.onRAM = false
		c.onRAM--
		ch.ToDisk = append(ch.ToDisk, v.fol.id)
	}
	if !v.pre.finished {
		c.waiting.Push(v)
	}
}

// allocate gives iv its buffer: the follower reaches the first buffered
// block delta after now.
func (c *IntervalCache[F]) allocate(now time.Duration, iv *interval[F], ch *Changes) {
	iv.state = ivCached
	c.used += iv.blocks
	c.cached.Push(iv)
	iv.switchAt = now + (iv.fol.start - iv.pre.start)
	if !iv.pre.finished {
		iv.writing = true
		c.writeRate += iv.pre.rate
	}
	c.stats.Allocations++
	ch.Cached = append(ch.Cached, Switch{Stream: iv.fol.id, At: iv.switchAt})
}

// release frees a cached interval's blocks.
func (c *IntervalCache[F]) release(iv *interval[F]) {
	c.cached.Remove(iv)
	c.used -= iv.blocks
	iv.state = ivWaiting
	c.stopWriting(iv)
}

func (c *IntervalCache[F]) stopWriting(iv *interval[F]) {
	if iv.writing {
		iv.writing = false
		c.writeRate -= iv.pre.rate
	}
}

// Switch moves stream id to RAM at now if its interval still has its
// buffer and the stream has reached it; the caller then releases its disk
// bandwidth. A stale Switch (the buffer was preempted since) returns false.
func (c *IntervalCache[F]) Switch(now time.Duration, id StreamID) bool {
	s := c.streams[id]
	if s == nil || s.iv == nil || s.iv.state != ivCached || s.onRAM || now < s.iv.switchAt {
		return false
	}
	s.onRAM = true
	c.onRAM++
	c.stats.Switches++
	return true
}

// OnRAM reports whether stream id reads from RAM.
func (c *IntervalCache[F]) OnRAM(id StreamID) bool {
	s := c.streams[id]
	return s != nil && s.onRAM
}

// End removes stream id, which played to the end of its file at now. Its
// own buffer is freed; an interval it preceded keeps its buffer (the
// follower reads the rest from it); freed space goes to waiting intervals,
// smallest first.
func (c *IntervalCache[F]) End(now time.Duration, id StreamID) (Changes, error) {
	return c.end(now, id, false)
}

// Leave removes stream id, which stopped at now before the end of its file
// (a closed connection). Unlike End, the follower of an interval it
// preceded loses its source: it is reported in ToDisk if it read from RAM.
func (c *IntervalCache[F]) Leave(now time.Duration, id StreamID) (Changes, error) {
	return c.end(now, id, true)
}

func (c *IntervalCache[F]) end(now time.Duration, id StreamID, early bool) (Changes, error) {
	var ch Changes
	s := c.streams[id]
	if s == nil || s.finished {
		return ch, fmt.Errorf("%w: stream %d ended but is not playing", ErrState, id)
	}
	s.finished = true
	if s.onRAM {
		s.onRAM = false
		c.onRAM--
	}
	c.dropFollowed(s)
	c.endPreceded(s, early, &ch)
	c.unlink(s)
	c.fill(now, &ch)
	return ch, nil
}

// dropFollowed frees the interval in which s follows.
func (c *IntervalCache[F]) dropFollowed(s *icStream[F]) {
	iv := s.iv
	if iv == nil {
		return
	}
	s.iv = nil
	c.forget(iv)
	if iv.pre.finished && iv.pre.next == s {
		c.unlinkDone(iv.pre)
	}
}

// forget takes iv out of whichever heap holds it.
func (c *IntervalCache[F]) forget(iv *interval[F]) {
	switch {
	case iv.state == ivCached:
		c.release(iv)
	case iv.pos >= 0:
		c.waiting.Remove(iv)
	}
}

// endPreceded handles the interval s precedes: without s it can no longer
// gain blocks, so a waiting one is dropped; a cached one stops being
// written and, if s left early, is dropped too.
func (c *IntervalCache[F]) endPreceded(s *icStream[F], early bool, ch *Changes) {
	if s.next == nil || s.next.iv == nil || s.next.iv.pre != s {
		return
	}
	iv := s.next.iv
	if iv.state == ivCached && !early {
		c.stopWriting(iv)
		return
	}
	c.forget(iv)
	fol := iv.fol
	fol.iv = nil
	if fol.onRAM {
		fol.onRAM = false
		c.onRAM--
		ch.ToDisk = append(ch.ToDisk, fol.id)
	}
}

// unlink removes s from its file's chain, unless s still feeds a cached
// interval's follower (then it goes when that follower ends).
func (c *IntervalCache[F]) unlink(s *icStream[F]) {
	if s.next != nil && s.next.iv != nil && s.next.iv.pre == s {
		return
	}
	c.unlinkDone(s)
}

// unlinkDone forgets finished stream s.
func (c *IntervalCache[F]) unlinkDone(s *icStream[F]) {
	if s.prev != nil {
		s.prev.next = s.next
	}
	if s.next != nil {
		s.next.prev = s.prev
	}
	if c.last[s.file] == s {
		delete(c.last, s.file)
	}
	delete(c.streams, s.id)
}

// fill gives free blocks to waiting intervals, smallest first.
func (c *IntervalCache[F]) fill(now time.Duration, ch *Changes) {
	for c.waiting.Len() > 0 {
		iv := c.waiting.Top()
		if iv.blocks > c.capBlocks-c.used {
			return
		}
		c.waiting.Remove(iv)
		c.allocate(now, iv, ch)
	}
}

// A Buffer is the RAM an interval holds, as its follower sees it.
type Buffer struct {
	// Preceder is the stream whose blocks fill the buffer.
	Preceder StreamID
	// Blocks is the buffer's size in blocks: at most this many blocks of
	// the file may be kept for the follower at once.
	Blocks int64
	// Writing is whether the preceder still reads (and so adds blocks).
	Writing bool
}

// Buffer returns the buffer of the interval in which stream id follows,
// and false if that interval holds none (there is no such interval, it
// waits, or it was preempted). A live server keeps, for each follower
// with a buffer, at most Blocks blocks its preceder read, and drops them
// when Buffer says false: that bounds the RAM it holds by Capacity.
func (c *IntervalCache[F]) Buffer(id StreamID) (Buffer, bool) {
	s := c.streams[id]
	if s == nil || s.finished || s.iv == nil || s.iv.state != ivCached {
		return Buffer{}, false
	}
	return Buffer{Preceder: s.iv.pre.id, Blocks: s.iv.blocks, Writing: s.iv.writing}, true
}

// RAMStreams is the number of streams reading from RAM now.
func (c *IntervalCache[F]) RAMStreams() int { return c.onRAM }

// Used is the RAM held by buffers, bytes.
func (c *IntervalCache[F]) Used() int64 { return c.used * c.o.BlockSize }

// WriteRate is how fast preceding streams are writing blocks into buffers
// now, bytes per second: what interval caching would write to flash if
// the buffer were an SSD (VoD §5).
func (c *IntervalCache[F]) WriteRate() int64 { return c.writeRate }

// CachedIntervals is the number of intervals holding buffers.
func (c *IntervalCache[F]) CachedIntervals() int { return c.cached.Len() }

// Stats returns the counters.
func (c *IntervalCache[F]) Stats() IntervalStats { return c.stats }

// Check verifies the cache's invariants: block and rate sums, RAM readers.
func (c *IntervalCache[F]) Check() error {
	var used, rate int64
	for _, iv := range c.cached.items {
		used += iv.blocks
		if iv.writing {
			rate += iv.pre.rate
		}
		if iv.writing == iv.pre.finished {
			return fmt.Errorf("vod: interval %d->%d writing=%v with preceder finished=%v", iv.pre.id, iv.fol.id, iv.writing, iv.pre.finished)
		}
	}
	ram := 0
	for _, s := range c.streams {
		if s.onRAM {
			ram++
			if s.iv == nil || s.iv.state != ivCached {
				return fmt.Errorf("vod: stream %d on RAM without a buffer", s.id)
			}
		}
	}
	switch {
	case used != c.used || used > c.capBlocks:
		return fmt.Errorf("vod: interval cache holds %d blocks, tracked %d, capacity %d", used, c.used, c.capBlocks)
	case rate != c.writeRate:
		return fmt.Errorf("vod: interval write rate %d, tracked %d", rate, c.writeRate)
	case ram != c.onRAM:
		return fmt.Errorf("vod: %d streams on RAM, tracked %d", ram, c.onRAM)
	}
	return nil
}
