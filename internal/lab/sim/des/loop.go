// Package des is the discrete-event engine every Strata simulator runs on:
// a virtual clock, device models in the loop, a dataset catalog and a job
// runner.
package des

import (
	"container/heap"
	"time"
)

// Loop is a discrete-event loop on a virtual clock. It is deterministic:
// events at the same time run in the order they were scheduled.
type Loop struct {
	now    time.Duration
	seq    uint64
	events eventHeap
}

type event struct {
	at  time.Duration
	seq uint64
	fn  func()
}

type eventHeap []event

func (h eventHeap) Len() int { return len(h) }
func (h eventHeap) Less(i, j int) bool {
	if h[i].at != h[j].at {
		return h[i].at < h[j].at
	}
	return h[i].seq < h[j].seq
}
func (h eventHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *eventHeap) Push(x any)   { *h = append(*h, x.(event)) }
func (h *eventHeap) Pop() any {
	old := *h
	e := old[len(old)-1]
	old[len(old)-1] = event{}
	*h = old[:len(old)-1]
	return e
}

// Now is the virtual time.
func (l *Loop) Now() time.Duration { return l.now }

// At schedules fn at time t (now, if t is in the past).
func (l *Loop) At(t time.Duration, fn func()) {
	l.seq++
	heap.Push(&l.events, event{at: max(t, l.now), seq: l.seq, fn: fn})
}

// After schedules fn d after now.
func (l *Loop) After(d time.Duration, fn func()) { l.At(l.now+d, fn) }

// RunUntil runs events up to and including time t, then sets the clock to t.
func (l *Loop) RunUntil(t time.Duration) {
	for len(l.events) > 0 && l.events[0].at <= t {
		e := heap.Pop(&l.events).(event)
		l.now = e.at
		e.fn()
	}
	l.now = max(l.now, t)
}

// Step runs the next event, if there is one, and reports whether it ran
// one: for drivers that check a stop condition after every event.
func (l *Loop) Step() bool {
	if len(l.events) == 0 {
		return false
	}
	e := heap.Pop(&l.events).(event)
	l.now = e.at
	e.fn()
	return true
}

// Every runs fn every period from now on while keep returns true.
func (l *Loop) Every(period time.Duration, keep func() bool, fn func()) {
	var tick func()
	tick = func() {
		if !keep() {
			return
		}
		fn()
		l.After(period, tick)
	}
	l.After(period, tick)
}

// Pending is the number of scheduled events.
func (l *Loop) Pending() int { return len(l.events) }
