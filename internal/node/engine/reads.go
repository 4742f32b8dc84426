package engine

import (
	"sync"
	"time"
)

// maxReaders is how many readers wait for the next flash read between
// reads; a read that finds none waiting gets a goroutine of its own,
// which stays as a reader up to this many.
const maxReaders = 64

// reads runs the flash reads of requests on long-lived readers, and keeps
// their deadlines with one watch: the reads in progress are listed in
// the order their readers issued them, which is their deadlines' order
// (every read has the same deadline, from when it is issued: the wait
// for a reader is the process's, not the device's), and the watch
// sleeps until the first one's deadline, abandoning those past it. A
// read costs a handoff to a waiting reader and a place in the list, not
// a goroutine and a timer of its own.
type reads struct {
	run     func(*flashRead) // the read itself (Engine.runRead)
	abandon func(*flashRead) // at its deadline (Engine.abandon)
	limit   time.Duration    // a read's deadline, from when its reader issues it
	queue   chan *flashRead  // to a waiting reader
	kick    chan struct{}    // the list was empty and is not
	quit    chan struct{}
	watched chan struct{} // closed when the watch has returned

	mu struct {
		sync.Mutex
		head, tail *flashRead
		armed      bool // the watch's timer is set: a read listed now needs no kick
		readers    int  // readers that stay
		closed     bool
	}
}

func newReads(run, abandon func(*flashRead), limit time.Duration) *reads {
	rs := &reads{run: run, abandon: abandon, limit: limit, queue: make(chan *flashRead), kick: make(chan struct{}, 1),
		quit: make(chan struct{}), watched: make(chan struct{})}
	go rs.watch()
	return rs
}

// start hands r to a reader, which lists it with its deadline as it
// issues it (issue).
func (rs *reads) start(r *flashRead) {
	select {
	case rs.queue <- r:
		return
	default:
	}
	rs.mu.Lock()
	stay := !rs.mu.closed && rs.mu.readers < maxReaders
	if stay {
		rs.mu.readers++
	}
	rs.mu.Unlock()
	go rs.reader(r, stay)
}

// issue lists r with its deadline, limit from now, and runs it.
func (rs *reads) issue(r *flashRead) {
	rs.list(r)
	rs.run(r)
}

// list lists r with its deadline, limit from now: the watch abandons it
// then unless it is unlisted first. The read of a send from the device
// (fileSend) is listed by its sender, which makes it itself.
func (rs *reads) list(r *flashRead) {
	rs.mu.Lock()
	r.issued = time.Now()
	r.deadline = r.issued.Add(rs.limit) // under the lock: the list stays in deadline order
	r.listed = true
	r.prev = rs.mu.tail
	if rs.mu.tail == nil {
		rs.mu.head = r
		if !rs.mu.armed { // the watch waits for a kick; otherwise it wakes before r's deadline
			select {
			case rs.kick <- struct{}{}:
			default:
			}
		}
	} else {
		rs.mu.tail.next = r
	}
	rs.mu.tail = r
	rs.mu.Unlock()
}

// reader runs r, then, if it stays, every read handed to it until close.
func (rs *reads) reader(r *flashRead, stay bool) {
	rs.issue(r)
	if !stay {
		return
	}
	for {
		select {
		case r := <-rs.queue:
			rs.issue(r)
		case <-rs.quit:
			return
		}
	}
}

// unlist takes r out of the list, if the watch has not.
func (rs *reads) unlist(r *flashRead) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if !r.listed {
		return
	}
	r.listed = false
	if r.prev == nil {
		rs.mu.head = r.next
	} else {
		r.prev.next = r.next
	}
	if r.next == nil {
		rs.mu.tail = r.prev
	} else {
		r.next.prev = r.prev
	}
	r.prev, r.next = nil, nil
}

// expired takes the first read past its deadline at now out of the list;
// otherwise it returns the first deadline, for which the watch arms its
// timer (zero: the list is empty, the watch waits for a kick).
func (rs *reads) expired(now time.Time) (*flashRead, time.Time) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	r := rs.mu.head
	if r == nil {
		rs.mu.armed = false
		return nil, time.Time{}
	}
	if r.deadline.After(now) {
		rs.mu.armed = true
		return nil, r.deadline
	}
	r.listed = false
	rs.mu.head = r.next
	if r.next == nil {
		rs.mu.tail = nil
	} else {
		r.next.prev = nil
	}
	r.prev, r.next = nil, nil
	return r, time.Time{}
}

// watch abandons the reads past their deadline, sleeping until the
// first one's.
func (rs *reads) watch() {
	defer close(rs.watched)
	t := time.NewTimer(time.Hour)
	t.Stop()
	for {
		r, next := rs.expired(time.Now())
		if r != nil {
			rs.abandon(r)
			continue
		}
		var wake <-chan time.Time
		if !next.IsZero() {
			t.Reset(time.Until(next))
			wake = t.C
		}
		select {
		case <-wake:
		case <-rs.kick:
		case <-rs.quit:
			t.Stop()
			return
		}
	}
}

// close stops the watch, and waits for it, and the waiting readers.
// Reads in progress complete on their readers, which then stop; the
// requests that wait for them wake when they do (past close, a read has
// no deadline: a stopped engine's device is closed, its reads fail).
func (rs *reads) close() {
	if rs == nil {
		return
	}
	rs.mu.Lock()
	if rs.mu.closed {
		rs.mu.Unlock()
		return
	}
	rs.mu.closed = true
	rs.mu.Unlock()
	close(rs.quit)
	<-rs.watched
}
