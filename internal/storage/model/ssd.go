package model

import (
	"math/rand/v2"
	"time"
)

// ftl is the placement side of an SSD: it maps logical pages, collects
// garbage, and counts the flash operations it causes per die in ops.
type ftl interface {
	write(first, n int64, stream int)
	read(first, n int64)
	trim(first, n int64)
	collectIdle(d int) bool // one background collection on die d
	freeBlocks(d int) int
	setOps(o *dieOps)
}

// An SSD is a flash SSD Model: an FTL (page-mapped or log-block) decides
// where pages go and what garbage collection copies; per-die timelines,
// channel sharing and the host link turn that work into time.
type SSD struct {
	p     SSDParams
	ftl   ftl
	tl    *flashTimeline
	ops   dieOps // the current request's operations
	bg    dieOps // one background collection's operations
	stats Stats

	busy     busyClock
	lastNow  time.Duration
	lastDone time.Duration // latest completion of any host request
}

var _ Model = (*SSD)(nil)

// NewSSD returns an SSD model for p, fresh (every block erased).
func NewSSD(p SSDParams) (*SSD, error) {
	p.ensureDefaults()
	if err := p.validate(); err != nil {
		return nil, err
	}
	s := &SSD{p: p, ops: newDieOps(p.dies()), bg: newDieOps(p.dies())}
	s.stats.Streams = make([]StreamStats, p.Streams)
	s.tl = newFlashTimeline(&s.p)
	if p.Mapping == LogBlock {
		s.ftl = newLogBlockFTL(&s.p, &s.stats)
	} else {
		s.ftl = newPageFTL(&s.p, &s.stats)
	}
	s.ftl.setOps(&s.ops)
	return s, nil
}

// Name returns the device name.
func (s *SSD) Name() string { return s.p.Name }

// Size returns the user capacity in bytes.
func (s *SSD) Size() int64 { return s.p.Capacity }

// Params returns the parameters (with defaults filled in).
func (s *SSD) Params() SSDParams { return s.p }

// Busy returns the cumulative time with a host request outstanding up to
// now; background garbage collection is not host I/O and does not count.
func (s *SSD) Busy(now time.Duration) time.Duration { return s.busy.at(now) }

// Stats returns a snapshot of the flash work counters.
func (s *SSD) Stats() Stats { return s.stats.clone() }

// ResetStats zeroes the counters.
func (s *SSD) ResetStats() {
	s.stats = Stats{Streams: make([]StreamStats, s.p.Streams)}
}

// Submit runs r at now and returns its completion time.
func (s *SSD) Submit(now time.Duration, r Request) time.Duration {
	now = max(now, s.lastNow)
	s.lastNow = now
	if s.p.BackgroundGC && s.p.Mapping == PageMapped {
		s.idleGC(now)
	}
	off, n, ok := clampRange(r.Offset, r.Length, s.p.Capacity)
	if !ok {
		return now
	}
	s.ops.reset()
	s.apply(r.Op, off, n, r.Stream)
	done := s.tl.schedule(now, r.Op, n, &s.ops)
	s.busy.add(now, done)
	s.lastDone = max(s.lastDone, done)
	return done
}

// apply runs the FTL side of a request on the byte range [off, off+n).
func (s *SSD) apply(op Op, off, n int64, stream int) {
	ps := s.p.PageSize
	switch op {
	case Read:
		s.ftl.read(off/ps, (off+n+ps-1)/ps-off/ps)
	case Write:
		s.ftl.write(off/ps, (off+n+ps-1)/ps-off/ps, s.stream(stream))
	case Trim: // only whole pages
		first := (off + ps - 1) / ps
		if last := (off + n) / ps; last > first {
			s.ftl.trim(first, last-first)
		}
	}
}

func (s *SSD) stream(id int) int {
	if id < 0 || id >= s.p.Streams {
		return 0
	}
	return id
}

// idleGC runs the background collections the dies would have done since
// the device went idle (IdleDelay after its last completion) and before
// now. A collection that started before now may end after it; the next
// request on that die waits for it.
func (s *SSD) idleGC(now time.Duration) {
	idle := s.lastDone + s.p.IdleDelay
	if now <= idle {
		return
	}
	s.ftl.setOps(&s.bg)
	defer s.ftl.setOps(&s.ops)
	for d := range s.tl.dieFree {
		t := max(s.tl.dieFree[d], idle)
		for t < now && s.ftl.freeBlocks(d) < s.p.HighWater && s.ftl.collectIdle(d) {
			t += s.tl.gcWork(int64(s.bg.copy[d]), int64(s.bg.erase[d]))
			s.bg.copy[d], s.bg.erase[d] = 0, 0
		}
		s.tl.dieFree[d] = max(s.tl.dieFree[d], t)
	}
}

// Aging brings a fresh SSD to a used state instantly (no time passes and
// Stats are left as they were): fill, then random overwrites, like the
// preconditioning of SNIA's performance test specification.
type Aging struct {
	// Fill is the fraction of the capacity written sequentially from 0.
	Fill float64
	// Overwrite is the volume of random writes, in multiples of the
	// capacity, after the fill.
	Overwrite float64
	// WriteSize is the size of each random write, aligned to itself;
	// default one page.
	WriteSize int64
	// Span limits random writes to the first Span bytes; default all.
	Span int64
	// Stream is the stream of every aging write.
	Stream int
	Seed   uint64
}

// Age applies a to the drive.
func (s *SSD) Age(a Aging) {
	saved := s.stats.clone()
	s.silently(func() {
		fill := int64(a.Fill*float64(s.p.Capacity)) / s.p.PageSize * s.p.PageSize
		s.writeSeq(0, fill, s.stream(a.Stream))
		s.overwrite(a)
	})
	s.stats = saved
}

// Fill writes [off, off+n) sequentially, instantly and without counting,
// so that every page in it is mapped. It implements Filler.
func (s *SSD) Fill(off, n int64) {
	off, n, ok := clampRange(off, n, s.p.Capacity)
	if !ok {
		return
	}
	saved := s.stats.clone()
	s.silently(func() { s.writeSeq(off, n, 0) })
	s.stats = saved
}

// silently runs fn with the FTL's operation counts going to the scratch
// counters s.bg, which the writers reset now and then, and clears them
// after: idleGC charges whatever s.bg holds to the next background
// collection, so leftovers of an instant fill would stall it.
func (s *SSD) silently(fn func()) {
	s.bg.reset()
	s.ftl.setOps(&s.bg)
	defer func() {
		s.ftl.setOps(&s.ops)
		s.bg.reset()
	}()
	fn()
}

// writeSeq writes [off, off+n) in unit-sized pieces.
func (s *SSD) writeSeq(off, n int64, stream int) {
	ps, step := s.p.PageSize, s.p.UnitSize()
	for end := off + n; off < end; off += step {
		s.bg.reset()
		s.ftl.write(off/ps, (min(off+step, end)-off+ps-1)/ps, stream)
	}
}

// overwrite issues a's random writes.
func (s *SSD) overwrite(a Aging) {
	size := max(a.WriteSize/s.p.PageSize, 1)
	span := s.p.Capacity / s.p.PageSize
	if a.Span > 0 {
		span = min(span, a.Span/s.p.PageSize)
	}
	slots := span / size
	if slots <= 0 {
		return
	}
	rng := rand.New(rand.NewPCG(a.Seed, 0x5eed))
	writes := int64(a.Overwrite * float64(s.p.Capacity/s.p.PageSize) / float64(size))
	for i := range writes {
		if i%4096 == 0 {
			s.bg.reset()
		}
		s.ftl.write(rng.Int64N(slots)*size, size, s.stream(a.Stream))
	}
}

// A Filler can write a byte range instantly so that it is all mapped, the
// "fill" of a preconditioning. SSD implements it.
type Filler interface {
	Fill(off, n int64)
}

var _ Filler = (*SSD)(nil)
