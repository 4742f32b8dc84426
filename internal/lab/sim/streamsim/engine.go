package streamsim

import (
	"errors"
	"fmt"
	"time"

	"github.com/strata-media/strata/internal/lab/sim/des"
	"github.com/strata-media/strata/internal/storage/model"
)

// errDeadlock reports a workload whose threads all wait on each other.
var errDeadlock = errors.New("streamsim: every thread is blocked")

// opKind is what an Op asks of the drive.
type opKind uint8

// The kinds of operations.
const (
	opWrite opKind = iota
	opTrim
	opRead
)

// An Op is one request a workload thread issues to the drive.
type Op struct {
	Kind     opKind
	Off, Len int64 // bytes on the drive
	// Class is the lifetime class of a write.
	Class Class
	// Stream is the stream a trace recorded for the write (Traced mapping).
	Stream int
	// Work is the application work this op completes, e.g. the YCSB
	// updates whose commit-log record it carries; throughput counts it.
	Work int64
	// Done, if set, is called when the op completes (at once for a trim
	// the run drops because TRIM is off).
	Done func(at time.Duration)
}

// status is a thread's answer to Next.
type status uint8

// The answers.
const (
	// Ready: the returned op is to be issued now.
	Ready status = iota
	// Wait: ask again at the returned time (a rate limit).
	wait
	// Blocked: ask again when another op completes or is issued.
	Blocked
	// Finished: the thread has nothing more to do.
	Finished
)

// A thread is one closed-loop issuer of operations: Cassandra's commit log
// writer, its flush writer, a compaction, a cache's feed, a trace. The
// engine asks it for its next op whenever it has fewer than its queue
// depth outstanding.
type thread interface {
	Next(now time.Duration) (Op, status, time.Duration)
}

// threadSpec is a thread and how many ops it may have outstanding.
type threadSpec struct {
	Thread thread
	Depth  int
}

// engine replays threads' operations into an SSD model in virtual time.
// Each thread keeps up to its depth of requests outstanding and issues the
// next as soon as one completes (a closed loop: the drive sets the pace).
// It is deterministic: events at one time run in the order they were made.
type engine struct {
	ssd     *model.SSD
	mapping Mapping
	trim    bool
	loop    des.Loop
	handle  func(event) // the running Run's event handler
	slots   []*slot
	meter   *Meter
	classes map[string]int64 // host bytes written per class, when set
}

type slot struct {
	th        thread
	depth     int
	out       int
	blocked   bool
	finished  bool
	pending   bool          // an ask event is queued
	waitUntil time.Duration // ask no earlier
	// freed holds when each completed op freed its place in the queue,
	// oldest first: an application op issued later waited from then.
	freed []time.Duration
}

type event struct {
	at time.Duration
	s  *slot
	op *Op // nil: ask the thread
	// ready is when the op could have been issued: for application work
	// (Work > 0) the time its queue place freed, so the latency includes
	// the time the thread was blocked (Cassandra's writes stalled behind
	// a full flush queue); else the submission time.
	ready time.Duration
}

// newEngine returns an engine over ssd that assigns streams with mapping
// and passes trims to the drive only if trim is set.
func newEngine(ssd *model.SSD, mapping Mapping, trim bool) *engine {
	return &engine{ssd: ssd, mapping: mapping, trim: trim}
}

// Now is the virtual time.
func (e *engine) Now() time.Duration { return e.loop.Now() }

// SetMeter sets where completions are measured (nil: nowhere).
func (e *engine) SetMeter(m *Meter) { e.meter = m }

// SSD is the drive.
func (e *engine) SSD() *model.SSD { return e.ssd }

// Run runs threads until all have finished, stop reports true (it is
// asked after every event) or the time until has passed. Ops still
// outstanding then are completed first, so the next Run starts clean.
func (e *engine) Run(threads []threadSpec, until time.Duration, stop func() bool) error {
	e.slots = e.slots[:0]
	for _, t := range threads {
		s := &slot{th: t.Thread, depth: max(t.Depth, 1)}
		e.slots = append(e.slots, s)
		e.queueAsk(s, e.Now())
	}
	halted := false
	e.handle = func(ev event) {
		if ev.op != nil {
			e.complete(ev)
		} else if !halted {
			ev.s.pending = false
			e.ask(ev.s)
		}
		if !halted && (e.Now() >= until || (stop != nil && stop())) {
			halted = true
			if e.meter != nil {
				e.meter.Stop(e.Now(), e.ssd)
			}
		}
		if !halted {
			e.wake()
		}
	}
	for e.loop.Step() {
	}
	if !halted && !e.allFinished() {
		return fmt.Errorf("%w at %v", errDeadlock, e.Now())
	}
	return nil
}

func (e *engine) allFinished() bool {
	for _, s := range e.slots {
		if !s.finished {
			return false
		}
	}
	return true
}

func (e *engine) queueAsk(s *slot, at time.Duration) {
	if s.pending {
		return
	}
	s.pending = true
	e.push(event{at: at, s: s})
}

func (e *engine) push(ev event) {
	e.loop.At(ev.at, func() { e.handle(ev) })
}

// ask lets s issue ops until its queue is full or it must wait.
func (e *engine) ask(s *slot) {
	if e.Now() < s.waitUntil {
		e.queueAsk(s, s.waitUntil)
		return
	}
	s.blocked = false
	for s.out < s.depth && !s.finished {
		op, st, at := s.th.Next(e.Now())
		switch st {
		case Ready:
			e.submit(s, op)
		case wait:
			s.waitUntil = max(at, e.Now()+1)
			e.queueAsk(s, s.waitUntil)
			return
		case Blocked:
			s.blocked = true
			return
		case Finished:
			s.finished = true
			return
		}
	}
}

// wake asks every blocked thread again.
func (e *engine) wake() {
	for _, s := range e.slots {
		if s.blocked && !s.finished && s.out < s.depth {
			e.ask(s)
		}
	}
}

// submit issues op to the drive, or completes a trim that TRIM-less runs
// drop.
func (e *engine) submit(s *slot, op Op) {
	if op.Kind == opTrim && !e.trim {
		if op.Done != nil {
			op.Done(e.Now())
		}
		return
	}
	req := model.Request{Offset: op.Off, Length: op.Len}
	switch op.Kind {
	case opWrite:
		req.Op, req.Stream = model.Write, e.mapping.Stream(&op)
		if e.classes != nil {
			e.classes[op.Class.Name] += op.Len
		}
	case opTrim:
		req.Op = model.Trim
	default:
		req.Op = model.Read
	}
	done := e.ssd.Submit(e.Now(), req)
	s.out++
	ready := e.Now()
	if len(s.freed) > 0 {
		if op.Work > 0 {
			ready = s.freed[0]
		}
		s.freed = s.freed[1:]
	}
	e.push(event{at: done, s: s, op: &op, ready: ready})
}

// complete finishes ev's op and lets its thread continue.
func (e *engine) complete(ev event) {
	ev.s.out--
	ev.s.freed = append(ev.s.freed, e.Now())
	if e.meter != nil {
		e.meter.record(ev.op, ev.ready, e.Now(), e.ssd)
	}
	if ev.op.Done != nil {
		ev.op.Done(e.Now())
	}
	if !ev.s.finished {
		e.queueAsk(ev.s, e.Now())
	}
}
