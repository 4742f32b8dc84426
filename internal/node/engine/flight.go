package engine

import (
	"context"
	"sync"
)

// A flight is one load of a key, shared by the callers that want it at the
// same time (its waiters). It runs while at least one of them still wants
// it, and is abandoned (its context canceled: the upstream request with
// it) when the last has gone. A loader that returns its bytes all the
// same (it had them all when it was abandoned) has them stored: that
// costs nothing upstream.
type flight struct {
	name string
	done chan struct{} // closed once res and err are set
	res  Result
	err  error

	// Guarded by flights' mutex.
	waiters int
	state   flightState
	cancel  context.CancelFunc // cancels the load's context
}

type flightState int

const (
	flightLoading   flightState = iota // the loader runs: abandoned when no waiter is left
	flightStoring                      // the loader has returned: finishes whatever happens
	flightOver                         // res and err are set
	flightAbandoned                    // the last waiter left while it loaded
)

// flights are the loads in progress, by flight name (key and
// invalidation token).
type flights struct {
	mu sync.Mutex
	m  map[string]*flight
}

// join returns the flight of name with one more waiter, starting it with
// start if there is none (then leader is true). start runs in a goroutine
// of its own.
func (fs *flights) join(name string, start func(*flight)) (f *flight, leader bool) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	if f = fs.m[name]; f != nil {
		f.waiters++
		return f, false
	}
	if fs.m == nil {
		fs.m = make(map[string]*flight)
	}
	f = &flight{name: name, done: make(chan struct{}), waiters: 1, cancel: func() {}}
	fs.m[name] = f
	go start(f)
	return f, true
}

// leave takes a waiter off f: the last one to leave while f loads
// abandons it (cancels its load, and takes it off the map so that the
// next caller of the name starts a load of its own).
func (fs *flights) leave(f *flight) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	f.waiters--
	if f.waiters > 0 || f.state != flightLoading {
		return
	}
	f.state = flightAbandoned
	f.cancel()
	if fs.m[f.name] == f {
		delete(fs.m, f.name)
	}
}

// setCancel gives f the cancel of its load's context: false if f was
// abandoned already (its load is not to start).
func (fs *flights) setCancel(f *flight, cancel context.CancelFunc) bool {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	f.cancel = cancel
	return f.state == flightLoading
}

// storing records that f's loader has returned its bytes: it finishes,
// waiters or not.
func (fs *flights) storing(f *flight) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	if f.state == flightLoading {
		f.state = flightStoring
	}
}

// finish sets f's result, takes it off the map and wakes its waiters.
func (fs *flights) finish(f *flight, res Result, err error) {
	fs.mu.Lock()
	if f.state != flightAbandoned {
		f.state = flightOver
	}
	if fs.m[f.name] == f {
		delete(fs.m, f.name)
	}
	fs.mu.Unlock()
	f.res, f.err = res, err
	close(f.done)
}

// hold adds a waiter to f while it loads: ok false once it was abandoned
// (its load was canceled), release a no-op once it is storing or over.
func (fs *flights) hold(f *flight) (release func(), ok bool) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	switch f.state {
	case flightAbandoned:
		return nil, false
	case flightLoading:
		f.waiters++
		var once sync.Once
		return func() { once.Do(func() { fs.leave(f) }) }, true
	}
	return func() {}, true
}

// holdKey is the context key of a load's flight (Hold).
type holdKey struct{}

type heldFlight struct {
	fs *flights
	f  *flight
}

// Hold, called with the context a Loader was given, keeps the load going
// for one more interested party until release is called: a load runs
// while at least one caller waits for it (or holds it), and is canceled
// when the last has gone. A loader that hands its bytes to a client as
// they arrive, before it returns (the edge's streamed misses), holds its
// load for each such client, since that client no longer waits in
// GetWith. ok is false once the load was abandoned (the bytes will not
// come); with a context that is not a loader's, Hold holds nothing and
// returns a no-op release and true.
func Hold(ctx context.Context) (release func(), ok bool) {
	h, found := ctx.Value(holdKey{}).(heldFlight)
	if !found {
		return func() {}, true
	}
	return h.fs.hold(h.f)
}

// LoadDone, called with the context a Loader was given, returns a channel
// closed once that load is over: its bytes stored, or not. A client that
// had its answer from the bytes as they arrived waits on it, so that its
// next request finds them stored, without joining (or starting) a load of
// its own: no load slot, and no other client's load of the same key. Nil
// with a context that is not a loader's.
func LoadDone(ctx context.Context) <-chan struct{} {
	h, found := ctx.Value(holdKey{}).(heldFlight)
	if !found {
		return nil
	}
	return h.f.done
}

// Holder is Hold for later: the function it returns holds the load of
// ctx each time it is called (a client joining the bytes in progress).
func Holder(ctx context.Context) func() (release func(), ok bool) {
	return func() (func(), bool) { return Hold(ctx) }
}
