package front

import (
	"cmp"
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// A Front serves the plain reads of the fast routes (Options.Routes)
// straight off the connection, and hands every other request, with its
// connection, to net/http.
//
// net/http spends more on a small RAM hit than the hit itself: two
// write(2)s per response (its 4 KiB buffer splits the header from the
// body), a goroutine and a read per keep-alive request to watch for the
// client going away, a parsed URL, a header map cloned, sorted and
// checked. The Front parses a strict subset of HTTP/1.1 (a GET or HEAD
// of an origin-form path of plain characters, a Host, header fields on
// one line each, no body) in a buffer of its own, lets the FastHandler
// answer through a ResponseWriter that writes the header and the body in
// one writev(2), and keeps the connection for the next request.
//
// Anything else (another method, a query, an escape, a body, Expect,
// Upgrade, Connection: close, HTTP/1.0, an HTTP/2 preface, a header it
// does not parse or that does not fit its buffer, a request the
// FastHandler hands back) goes to net/http with the bytes read so far, as
// if net/http had read them: the Front answers only what it understands
// completely, and never refuses a request itself. Its answers are
// net/http's byte for byte (the header fields sorted, Date last), which
// this package's tests and the node's check on the wire.
//
// A connection handed over is net/http's until an answer leaves it ready
// for the next request (Wrap): then the Front takes it back (reclaim)
// with what net/http had read of the next requests, so that a player that
// asks for a manifest first keeps its segments on the Front. A
// connection net/http closes, hijacks or keeps for a request it has not
// answered whole stays with net/http.
type Front struct {
	opts    Options
	handoff *handoffListener
	date    dateCache

	mu struct {
		sync.Mutex
		ln      net.Listener
		conns   map[*frontConn]struct{} // the open ones (their state: frontConn.state)
		closing bool
	}
	done chan struct{} // closed by Shutdown and Close
}

// Options configure a Front.
type Options struct {
	// Routes are the FastHandlers and the prefixes they are asked about.
	Routes []Route
	// CORS returns the CORS policy in force, passed to the FastHandlers.
	// Nil: none.
	CORS func() CORS
	// Skip reports the requests a layer of the general path must see
	// (a signed-URL guard): the Front hands them over.
	Skip func(*http.Request) bool
	// Observe is called with the route, status and duration of each
	// answer of a FastHandler (the route metrics). Nil: none.
	Observe func(route string, status int, d time.Duration)
	// Counters count what the Front does with connections.
	Counters Counters
	// ReadHeader is how long a request's header may take once its first
	// byte has arrived; Idle how long a connection may wait for its next
	// request; Write how long an answer may take from its request's end.
	// Zero: no limit. They are net/http's ReadHeaderTimeout, IdleTimeout
	// and WriteTimeout, and should be the same values.
	ReadHeader, Idle, Write time.Duration
	// AccessLog, if set, gets a line per request the Front answers, as
	// the general path's access log writes for the others.
	AccessLog AccessLog
	// Track is called with +1 when the Front starts answering a request
	// and -1 when it is done, so that a shutdown waits for both servers'
	// handlers.
	Track func(delta int)
	// Logger receives accept errors and handlers' panics. Nil:
	// slog.Default().
	Logger *slog.Logger
}

// A Counter counts events (a prometheus.Counter is one).
type Counter interface{ Inc() }

// Counters count what the Front does with connections: the requests it
// answers, the connections it hands to net/http and those it takes back,
// and the answers it sent with a header laid out for an earlier one
// (LaidWriter). A nil Counter counts nothing.
type Counters struct{ Answers, Handovers, Reclaims, Laid Counter }

// An AccessLog logs the requests the Front answers, in the general path's
// access log.
type AccessLog interface {
	// Timer returns ctx carrying a new Timer, which the handlers of
	// the requests of ctx add their upstream waits to. The Front makes
	// one per connection, and resets it before each request.
	Timer(ctx context.Context) (context.Context, Timer)
	// Log writes the line of the request r, answered with status, the
	// header h and n bytes of body, started at start, t its Timer.
	Log(r *http.Request, h http.Header, status int, n int64, t Timer, start time.Time)
}

// A Timer is what an AccessLog records of a request while it is served.
type Timer interface{ Reset() }

func (o Options) withDefaults() Options {
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.CORS == nil {
		o.CORS = func() CORS { return noCORS{} }
	}
	if o.Observe == nil {
		o.Observe = func(string, int, time.Duration) {}
	}
	return o
}

// inc counts an event on c, if c is set.
func inc(c Counter) {
	if c != nil {
		c.Inc()
	}
}

// frontBufSize bounds a request's header on the Front (net/http's own
// limit applies to the requests handed over): a player's or a cache's
// GET is a few hundred bytes. A connection costs it what net/http's
// reader costs, 4 KiB.
const frontBufSize = 4 << 10

// New returns a Front over o's routes, nil if there is none.
func New(o Options) *Front {
	if len(o.Routes) == 0 {
		return nil
	}
	f := &Front{opts: o.withDefaults(), done: make(chan struct{})}
	f.handoff = &handoffListener{conns: make(chan net.Conn), done: f.done}
	f.mu.conns = map[*frontConn]struct{}{}
	return f
}

// Listener is where net/http accepts the connections the Front hands
// over: serve it with the http.Server whose ConnContext is the Front's
// and whose handler goes through Wrap.
func (f *Front) Listener() net.Listener { return f.handoff }

// Serve accepts connections on ln until ln fails or the Front is shut
// down (then it returns http.ErrServerClosed).
func (f *Front) Serve(ln net.Listener) error {
	f.mu.Lock()
	if f.mu.closing {
		f.mu.Unlock()
		return http.ErrServerClosed
	}
	f.mu.ln = ln
	f.handoff.addr = ln.Addr()
	f.mu.Unlock()
	var backoff time.Duration
	for {
		c, err := ln.Accept()
		if err != nil {
			select {
			case <-f.done:
				return http.ErrServerClosed
			default:
			}
			// As net/http: a temporary error (EMFILE) is retried.
			if te, ok := err.(interface{ Temporary() bool }); ok && te.Temporary() {
				backoff = min(max(2*backoff, 5*time.Millisecond), time.Second)
				f.opts.Logger.Warn("accept", "err", err, "retry in", backoff)
				time.Sleep(backoff)
				continue
			}
			f.handoff.fail(err)
			return err
		}
		backoff = 0
		c = linger(c) // its closes, the Front's and net/http's, linger
		fc := f.newConn(c)
		if fc == nil {
			c.Close()
			continue
		}
		go fc.serve()
	}
}

// Shutdown stops accepting, closes the idle connections and those that
// finish their request, and waits for the others until ctx is done; then
// it closes them all and returns ctx's error. The connections handed to
// net/http are its Shutdown's.
func (f *Front) Shutdown(ctx context.Context) error {
	f.close()
	t := time.NewTicker(10 * time.Millisecond)
	defer t.Stop()
	for {
		if f.closeIdle() == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			f.closeAll()
			return ctx.Err()
		case <-t.C:
		}
	}
}

// Close closes the listener and every connection of the Front at once.
func (f *Front) Close() error {
	f.close()
	f.closeAll()
	return nil
}

func (f *Front) close() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.mu.closing {
		return
	}
	f.mu.closing = true
	close(f.done)
	if f.mu.ln != nil {
		f.mu.ln.Close()
	}
}

// closeIdle closes the connections waiting for a request and returns how
// many are left (answering one).
func (f *Front) closeIdle() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	for fc := range f.mu.conns {
		if fc.state.CompareAndSwap(connIdle, connClosed) {
			fc.c.Close()
			delete(f.mu.conns, fc)
		}
	}
	return len(f.mu.conns)
}

func (f *Front) closeAll() {
	f.mu.Lock()
	defer f.mu.Unlock()
	for fc := range f.mu.conns {
		fc.state.Store(connClosed)
		fc.cancel()
		fc.c.Close()
		delete(f.mu.conns, fc)
	}
}

// newConn registers c, nil if the Front is closing.
func (f *Front) newConn(c net.Conn) *frontConn {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.mu.closing {
		return nil
	}
	fc := &frontConn{f: f, c: c, buf: make([]byte, frontBufSize), remote: c.RemoteAddr().String(), rr: newRawReader(c)}
	fc.ctx, fc.cancel = context.WithCancel(context.Background())
	if f.opts.AccessLog != nil {
		fc.ctx, fc.timer = f.opts.AccessLog.Timer(fc.ctx)
	}
	fc.tmpl = (&http.Request{}).WithContext(fc.ctx)
	fc.req = new(http.Request)
	fc.hdr = http.Header{}
	fc.w.h = http.Header{}
	fc.w.fc = fc
	f.mu.conns[fc] = struct{}{}
	return fc
}

// setBusy marks fc answering a request (busy) or idle, and reports
// whether it may go on: false once the Front is closing and fc idle, or
// fc closed (closeIdle, closeAll). Its state is fc's own, an atomic:
// the Front's lock is taken only to close.
func (f *Front) setBusy(fc *frontConn, busy bool) bool {
	if busy {
		return fc.state.CompareAndSwap(connIdle, connBusy)
	}
	if f.closing() {
		if fc.state.CompareAndSwap(connBusy, connClosed) {
			f.forget(fc)
		}
		return false
	}
	return fc.state.CompareAndSwap(connBusy, connIdle)
}

// A frontConn's states (frontConn.state): waiting for a request,
// answering one, closed by the Front.
const (
	connIdle int32 = iota
	connBusy
	connClosed
)

func (f *Front) forget(fc *frontConn) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.mu.conns, fc)
}

func (f *Front) closing() bool {
	select {
	case <-f.done:
		return true
	default:
		return false
	}
}

// A frontConn is a connection the Front serves: a read buffer, and the
// request and response of the moment, reused from one request to the
// next.
type frontConn struct {
	f      *Front
	c      net.Conn
	buf    []byte // buf[r:n] is read and not yet consumed
	r, n   int
	remote string
	served int // requests answered
	ctx    context.Context
	cancel context.CancelFunc
	timer  Timer // the access log's record, reset per request (nil: no log)
	// readErr is the read error that ended a partial request: net/http
	// gets it after the bytes read.
	readErr error
	// hdrDeadline is the ReadHeader deadline of the request being read
	// (zero if none): net/http keeps it for a header handed over half
	// read.
	hdrDeadline time.Time

	// rr reads c's socket for readHeader (nil: c.Read does).
	rr *rawReader
	// state is connIdle, connBusy or connClosed (setBusy).
	state atomic.Int32

	// rdl is the read deadline the Front last set on c, as far as
	// readHeader knows (the watch's reads change it: disarm forgets it).
	rdl time.Time

	// wdl is the write deadline the Front last set on c (zero: none
	// yet), so that an answer whose deadline is the same sets none.
	wdl time.Time

	req  *http.Request
	url  url.URL
	hdr  http.Header
	vals []string     // backing of hdr's values
	prev []headerLine // the previous request's fields: their strings are reused
	cur  []headerLine
	tmpl *http.Request // a request with ctx: each request starts as a copy
	hang watch         // a read for the client's hang-up while a handler runs
	w    frontWriter
	out  [2][]byte // writev's buffers
}

// headerLine is a parsed header field.
type headerLine struct{ key, value string }

func (fc *frontConn) serve() {
	handedOff := false
	defer func() {
		// As net/http: a handler's panic ends its connection, not the
		// process; ErrAbortHandler is not logged.
		if err := recover(); err != nil && err != http.ErrAbortHandler {
			buf := make([]byte, 64<<10)
			buf = buf[:runtime.Stack(buf, false)]
			fc.f.opts.Logger.Error("http: panic serving "+fc.remote, "err", err, "stack", string(buf))
		}
		fc.cancel()
		fc.f.forget(fc)
		if !handedOff {
			fc.c.Close()
		}
	}()
	for {
		end, ok := fc.readHeader()
		if !ok {
			return
		}
		if end < 0 {
			fc.handOff(nil)
			handedOff = true
			return
		}
		if !fc.f.setBusy(fc, true) {
			return
		}
		route, next, keep := fc.answer(end)
		if next != nil {
			fc.f.setBusy(fc, false)
			fc.handOff(next)
			handedOff = true
			return
		}
		if route == "" || !keep {
			return
		}
		if !fc.f.setBusy(fc, false) {
			return
		}
	}
}

// readHeader reads until buf[r:] holds a whole request header, and
// returns the index just past it. It returns -1 when the request is to
// go to net/http (it does not fit the buffer, or has bare LF line ends),
// ok false when the connection is to be closed (the client closed it, a
// timeout, the Front closing): net/http closes it too then, silently.
func (fc *frontConn) readHeader() (end int, ok bool) {
	started := false // the header's deadline is set
	fc.hdrDeadline = time.Time{}
	for {
		switch i := headerEnd(fc.buf[fc.r:fc.n]); {
		case i > 0:
			return fc.r + i, true
		case i < 0:
			return -1, true
		}
		if fc.r > 0 { // keep what is left of the buffer at its start
			fc.n = copy(fc.buf, fc.buf[fc.r:fc.n])
			fc.r = 0
		}
		if fc.n == len(fc.buf) {
			return -1, true
		}
		// Waiting for a request: Idle. Once its first bytes are in
		// (and not all of it), ReadHeader from then: the one deadline
		// a request that arrives whole costs is the idle one.
		o := fc.f.opts
		switch {
		case fc.n == 0 && fc.served == 0: // a new connection: as net/http, its first request has ReadHeader from the start
			fc.hdrDeadline = deadline(o.ReadHeader)
			fc.c.SetReadDeadline(fc.hdrDeadline) //nolint:errcheck // a closed conn fails the read
			fc.rdl = fc.hdrDeadline
			started = true
		case fc.n == 0:
			// Rounded up (idleStep): the waits of a connection within
			// one step share a deadline, set once.
			if d := idleDeadline(cmp.Or(o.Idle, o.ReadHeader)); !d.Equal(fc.rdl) {
				fc.c.SetReadDeadline(d) //nolint:errcheck
				fc.rdl = d
			}
		case !started:
			fc.hdrDeadline = deadline(o.ReadHeader)
			fc.c.SetReadDeadline(fc.hdrDeadline) //nolint:errcheck
			fc.rdl = fc.hdrDeadline
			started = true
		}
		var k int
		var err error
		if fc.rr != nil {
			k, err = fc.rr.Read(fc.buf[fc.n:])
		} else {
			k, err = fc.c.Read(fc.buf[fc.n:])
		}
		fc.n += k
		if err != nil {
			if fc.n-fc.r > 0 {
				// Part of a request, then a timeout or the end: net/http
				// is to see both, and answer as it does (400, or not).
				fc.readErr = err
				return -1, true
			}
			return 0, false
		}
	}
}

// watchAfter is how long a handler may run before the Front reads the
// connection for the client's hang-up: a RAM hit is answered long before
// (and pays no read, no goroutine), a miss waits for an upstream.
const watchAfter = 2 * time.Millisecond

// A watch reads the connection while a FastHandler runs, as net/http's
// background read does: the client's hang-up (the end of the stream, or
// an error) cancels the request's context, so that a handler waiting for
// an upstream stops waiting. A byte that arrives instead (the next
// pipelined request) is kept for the next read.
type watch struct {
	timer *time.Timer
	mu    sync.Mutex
	state int           // watchIdle, watchArmed, watchReading, watchDone
	done  chan struct{} // closed when the read returns
	stop  bool          // disarm interrupts the read: its timeout is not a hang-up
	b     [1]byte
	got   bool // b holds a byte read
}

const (
	watchIdle = iota
	watchArmed
	watchReading
	watchDone
)

// arm starts the watch of fc's next watchAfter, if the buffer has room
// for the byte it may read.
func (h *watch) arm(fc *frontConn) {
	if fc.n == len(fc.buf) {
		return
	}
	h.mu.Lock()
	h.state, h.stop, h.got = watchArmed, false, false
	h.mu.Unlock()
	if h.timer == nil {
		h.timer = time.AfterFunc(watchAfter, func() { h.read(fc) })
	} else {
		h.timer.Reset(watchAfter)
	}
}

// read runs in the timer's goroutine: it reads one byte of fc, and
// cancels fc's context if the client has gone.
func (h *watch) read(fc *frontConn) {
	h.mu.Lock()
	if h.state != watchArmed {
		h.mu.Unlock()
		return
	}
	h.state = watchReading
	h.done = make(chan struct{})
	fc.c.SetReadDeadline(time.Time{}) //nolint:errcheck // as net/http: no deadline while the handler runs
	h.mu.Unlock()
	n, err := fc.c.Read(h.b[:])
	h.mu.Lock()
	defer h.mu.Unlock()
	h.got = n == 1
	if err != nil && !h.stop {
		fc.cancel() // the client hung up (or the connection failed)
	}
	h.state = watchDone
	close(h.done)
}

// disarm ends the watch once the handler has returned, and puts the byte
// it read, if any, at the end of fc's buffer.
func (h *watch) disarm(fc *frontConn) {
	h.mu.Lock()
	switch h.state {
	case watchIdle:
		h.mu.Unlock()
		return
	case watchArmed:
		h.state = watchIdle
		h.mu.Unlock()
		h.timer.Stop()
		return
	case watchReading:
		h.stop = true
		h.mu.Unlock()
		fc.c.SetReadDeadline(aLongTimeAgo) //nolint:errcheck // interrupts the read
		<-h.done
		h.mu.Lock()
	}
	// Under the lock: a timer armed for an earlier answer may still run
	// read, which looks at the state under it (the race detector saw
	// the write outside).
	h.state = watchIdle
	fc.rdl = time.Time{} // read and disarm set their own
	got, b := h.got, h.b[0]
	h.mu.Unlock()
	if got {
		fc.buf[fc.n] = b
		fc.n++
	}
}

// aLongTimeAgo is a deadline in the past: it interrupts a read at once.
var aLongTimeAgo = time.Unix(1, 0)

// idleDeadline is the read deadline of a connection waiting for its next
// request, idle from now, rounded up to idleStep(idle).
func idleDeadline(idle time.Duration) time.Time {
	if idle <= 0 {
		return time.Time{}
	}
	step := idleStep(idle)
	return time.Now().Add(idle).Truncate(step).Add(step)
}

// idleStep is what an idle deadline is rounded up to: a second, or a
// sixteenth of a shorter idle time (a timer's update per answer was 1% of
// a small hit).
func idleStep(idle time.Duration) time.Duration {
	return max(min(time.Second, idle/16), time.Millisecond)
}

// deadline is d from now, none if d is 0.
func deadline(d time.Duration) time.Time {
	if d <= 0 {
		return time.Time{}
	}
	return time.Now().Add(d)
}

// answer serves the request buf[r:end] if it is a plain read the fast
// path takes: route is the route it stood for (empty if it was not
// served), keep whether the connection may take another request. next is
// the request net/http is to serve (the FastHandler's, or the Front's
// own if the request is not one the Front takes).
func (fc *frontConn) answer(end int) (route string, next *http.Request, keep bool) {
	r := fc.req
	if !fc.parse(fc.buf[fc.r:end]) {
		return "", r, false
	}
	f := fc.f
	h := For(f.opts.Routes, r)
	if h == nil || f.opts.Skip != nil && f.opts.Skip(r) {
		return "", r, false
	}
	start := time.Now()
	if f.opts.Track != nil {
		f.opts.Track(1)
		defer f.opts.Track(-1)
	}
	fc.w.deadline = time.Time{}
	if f.opts.Write > 0 {
		// Rounded up to a tenth of a second: the answers of a
		// connection within one tenth share a deadline, set once (a
		// timer's update per answer was 2% of a small hit).
		fc.w.deadline = start.Add(f.opts.Write).Truncate(writeDeadlineStep).Add(writeDeadlineStep)
		if !fc.w.deadline.Equal(fc.wdl) {
			fc.c.SetWriteDeadline(fc.w.deadline) //nolint:errcheck
			fc.wdl = fc.w.deadline
		}
	}
	if fc.timer != nil {
		fc.timer.Reset()
	}
	w := &fc.w
	w.reset(r.Method == http.MethodHead)
	watched := !IsPrompt(h)
	if watched {
		fc.hang.arm(fc)
	}
	route, status, next := h.ServeFast(w, r, f.opts.CORS())
	if watched {
		fc.hang.disarm(fc)
	}
	if next != nil {
		if w.sent {
			// The contract says it writes nothing when it hands back.
			return "", nil, false
		}
		return "", next, false
	}
	fc.r = end
	fc.served++
	inc(f.opts.Counters.Answers)
	w.finish(status)
	f.opts.Observe(route, status, time.Since(start))
	if l := f.opts.AccessLog; l != nil {
		l.Log(r, w.h, w.status, w.n, fc.timer, start)
	}
	return route, nil, w.err == nil && !w.close
}

// writeDeadlineStep is what an answer's write deadline is rounded up to.
const writeDeadlineStep = 100 * time.Millisecond

// handOff gives the connection to net/http with the bytes read and not
// consumed (the request being handed over first). first is the request
// the FastHandler handed back, whose context carries what it learnt (nil
// if none): the first request net/http reads on the connection gets it
// (Wrap). The connection is no longer the Front's after it.
func (fc *frontConn) handOff(first *http.Request) {
	fc.c.SetDeadline(time.Time{}) //nolint:errcheck // net/http sets its own
	fc.wdl = time.Time{}
	hc := &handoffConn{Conn: fc.c, buf: fc.buf[fc.r:fc.n], err: fc.readErr}
	if first != nil && first != fc.req {
		hc.first.Store(first)
	}
	if first == nil {
		// A header handed over half read (a bare LF, too long): net/http
		// is to read the rest by the deadline of its first byte, not by
		// a ReadHeader of its own from now (a slowloris client would
		// hold the connection twice as long).
		hc.clamp = fc.hdrDeadline
	}
	inc(fc.f.opts.Counters.Handovers)
	fc.f.handoff.give(hc)
}

// frontWriter is the ResponseWriter of the Front's answers: the header
// and the first write of the body go out in one writev(2), the header as
// net/http would have written it.
type frontWriter struct {
	fc      *frontConn
	h       http.Header
	status  int
	head    bool // a HEAD: no body
	sent    bool // the header is out
	n       int64
	err     error
	close   bool // close the connection after the answer
	keys    []string
	checked bool // keys are the last answer's field names, sorted and within the contract
	hbuf    []byte
	clength int64 // the Content-Length set, -1 if none
	// deadline is the answer's write deadline (zero: none), which
	// SendFile's slices shorten and restore.
	deadline time.Time
	bs       bufferedSend // SendFile's of a BufferedFileBody
	ms       moreSend     // SendFile's header and memory parts of other FileBodies (writeMore)
	laidOK   bool         // hbuf is a header Laid may give (SendFile from the file, a 200)
	hsec     int64        // the second hbuf was laid out in (its Date's, if the Front added one)
}

func (w *frontWriter) reset(head bool) {
	clear(w.h)
	w.status, w.head, w.sent, w.n, w.err, w.close, w.laidOK = 0, head, false, 0, nil, false, false
}

func (w *frontWriter) Header() http.Header { return w.h }

func (w *frontWriter) WriteHeader(code int) {
	if w.sent || w.status != 0 || code < 200 {
		return
	}
	w.status = code
}

func (w *frontWriter) Write(p []byte) (int, error) {
	if w.err != nil {
		return 0, w.err
	}
	if w.status == 0 {
		w.status = http.StatusOK
	}
	if w.head || !bodyAllowed(w.status) {
		// As net/http: nothing of a body of a HEAD, 204 or 304 goes out
		// (on the wire it would be read as the next answer).
		if !w.sent {
			w.sendHeader(nil)
		}
		return 0, http.ErrBodyNotAllowed
	}
	if !w.sent {
		w.sendHeader(p)
		if w.err != nil {
			return 0, w.err
		}
		if w.clength >= 0 && int64(len(p)) > w.clength {
			return 0, http.ErrContentLength // sendHeader sent no body
		}
		w.n += int64(len(p))
		return len(p), nil
	}
	if w.clength >= 0 && w.n+int64(len(p)) > w.clength {
		// As net/http: a write past the Content-Length is refused
		// whole, and finish closes the connection short of it.
		return 0, http.ErrContentLength
	}
	k, err := w.fc.c.Write(p)
	w.n += int64(k)
	if err != nil {
		w.err, w.close = err, true
	}
	return k, err
}

// finish sends the header if nothing was written, and decides whether the
// connection may be kept: not if the body was not the length announced.
func (w *frontWriter) finish(status int) {
	if w.status == 0 {
		w.status = status
	}
	if !w.sent {
		w.sendHeader(nil)
	}
	if !w.head && w.clength >= 0 && w.n != w.clength {
		w.close = true
	}
}

// sendHeader writes the status line and header, sorted as net/http sorts
// them, with Date after them, then body, in one writev(2).
func (w *frontWriter) sendHeader(body []byte) {
	body, ok := w.header(body)
	if !ok {
		return
	}
	b := w.hbuf
	if len(body) == 0 {
		_, w.err = w.fc.c.Write(b)
	} else {
		w.fc.out = [2][]byte{b, body}
		bufs := net.Buffers(w.fc.out[:])
		_, w.err = bufs.WriteTo(vectored(w.fc.c))
		w.fc.out = [2][]byte{}
	}
	if w.err != nil {
		w.close = true
	}
}

// header marks the header sent and lays it out in w.hbuf, for a first
// write of body, and returns the part of body that may follow it (nil
// if it is longer than the Content-Length); false if the answer breaks
// the contract (nothing is to go out, w.err says why).
func (w *frontWriter) header(body []byte) ([]byte, bool) {
	w.sent = true
	// A FastHandler's answers repeat their field names: the last
	// answer's, sorted and checked, serve again when they are the same.
	names := !w.sameNames()
	if names {
		w.keys, w.checked = w.keys[:0], false
		for k := range w.h {
			w.keys = append(w.keys, k)
		}
	}
	if why := w.breach(names); why != "" {
		// Refused: nothing of it goes out, and the connection closes,
		// as after a panic (the contract, doc.go).
		w.err, w.close, w.checked = errContract, true, false
		w.fc.f.opts.Logger.Error("front: a FastHandler broke its contract; connection closed", "path", w.fc.req.URL.Path, "breach", why)
		return nil, false
	}
	b := w.hbuf[:0]
	b = append(b, "HTTP/1.1 "...)
	b = strconv.AppendInt(b, int64(w.status), 10)
	b = append(b, ' ')
	if text := http.StatusText(w.status); text != "" {
		b = append(b, text...)
	} else { // as net/http
		b = append(b, "status code "...)
		b = strconv.AppendInt(b, int64(w.status), 10)
	}
	b = append(b, "\r\n"...)
	// The length is the first Content-Length value, as net/http reads
	// it. One that is not a length never goes out on an answer with a
	// body (net/http drops it too): the answer ends with the connection.
	w.clength = -1
	badLength := false
	if v := w.h["Content-Length"]; len(v) > 0 {
		if n, err := strconv.ParseInt(v[0], 10, 64); err == nil && n >= 0 {
			w.clength = n
		} else {
			badLength = !w.head
		}
	}
	if w.clength >= 0 && int64(len(body)) > w.clength {
		body = nil // Write refuses it, as net/http
	}
	// A Connection: close of the handler's closes the connection after
	// the answer, as net/http; one that does not say close gives way to
	// the Front's own close.
	conn := w.h["Connection"]
	if len(conn) > 0 && conn[0] == "close" { // net/http's test, exactly
		w.close = true
	}
	if names {
		slices.Sort(w.keys)
		w.checked = true
	}
	// Whether the answer closes the connection (below): then, as
	// net/http, a Connection field of the handler's that does not say
	// close gives way to the Front's.
	closing := w.close || w.fc.f.closing() || w.clength < 0 && bodyAllowed(w.status) && !w.head && body != nil
	ownClose := closing && !connectionClose(conn)
	for _, k := range w.keys {
		if k == "Connection" && ownClose || k == "Content-Length" && badLength {
			continue
		}
		for _, v := range w.h[k] {
			b = append(b, k...)
			b = append(b, ": "...)
			b = appendFieldValue(b, v)
			b = append(b, "\r\n"...)
		}
	}
	if _, ok := w.h["Date"]; !ok {
		b = append(b, "Date: "...)
		b, w.hsec = w.fc.f.date.append(b)
		b = append(b, "\r\n"...)
	} else {
		w.hsec = time.Now().Unix()
	}
	if w.clength < 0 && !w.head && body == nil && bodyAllowed(w.status) {
		// Nothing written and no length set: net/http sends 0 when the
		// handler is done; the Front calls this only then for a nil body.
		b = append(b, "Content-Length: 0\r\n"...)
		w.clength = 0
	} else if w.clength < 0 && bodyAllowed(w.status) && !w.head {
		w.close = true // no framing: the answer ends with the connection (a HEAD has no body to frame)
	}
	if _, ok := w.h["Content-Type"]; !ok && len(body) > 0 && bodyAllowed(w.status) && w.h.Get("Content-Encoding") == "" {
		// As net/http: a body without a type is sniffed (its first
		// write; net/http's first 2 KiB buffered).
		b = append(b, "Content-Type: "...)
		b = append(b, http.DetectContentType(body)...)
		b = append(b, "\r\n"...)
	}
	if ownClose {
		b = append(b, "Connection: close\r\n"...)
	}
	w.close = w.close || closing
	b = append(b, "\r\n"...)
	w.hbuf = b
	return body, true
}

// errContract is the error of the writes of an answer the Front refused
// (breach).
var errContract = errors.New("front: the FastHandler's answer breaks the contract")

// sameNames reports whether the answer's field names are the last
// answer's, w.keys, sorted and checked.
func (w *frontWriter) sameNames() bool {
	if !w.checked || len(w.keys) != len(w.h) {
		return false
	}
	for _, k := range w.keys {
		if _, ok := w.h[k]; !ok {
			return false
		}
	}
	return true
}

// breach describes what of the answer's status and fields (w.keys: their
// names unless names is false, names already checked) breaks the
// FastHandler contract in a way the Front refuses, "" if nothing.
func (w *frontWriter) breach(names bool) string {
	if w.status > 599 {
		return "status " + strconv.Itoa(w.status)
	}
	if !names {
		return ""
	}
	for _, k := range w.keys {
		if !validFieldName(k) {
			return "field name " + strconv.Quote(k)
		}
		if strings.EqualFold(k, "Transfer-Encoding") || strings.EqualFold(k, "Trailer") {
			return "field " + k
		}
	}
	return ""
}

// connectionClose reports whether a Connection field says close, as
// net/http reads it (its first value, hasToken).
func connectionClose(vs []string) bool {
	return len(vs) > 0 && hasToken(vs[0], "close")
}

// hasToken is net/http's (server.go): whether token occurs in v between
// token boundaries (space, comma, tab), case-insensitively. It finds
// close in "0 close", which the comma lists of r.Close do not.
func hasToken(v, token string) bool {
	for sp := 0; sp+len(token) <= len(v); sp++ {
		if sp > 0 && !isTokenBoundary(v[sp-1]) {
			continue
		}
		if end := sp + len(token); end != len(v) && !isTokenBoundary(v[end]) {
			continue
		}
		if strings.EqualFold(v[sp:sp+len(token)], token) {
			return true
		}
	}
	return false
}

func isTokenBoundary(b byte) bool { return b == ' ' || b == ',' || b == '\t' }

func bodyAllowed(status int) bool {
	return status >= 200 && status != http.StatusNoContent && status != http.StatusNotModified
}

// appendFieldValue appends v as net/http writes a header value: newlines
// replaced by spaces, surrounding white space trimmed.
func appendFieldValue(b []byte, v string) []byte {
	i, j := 0, len(v)
	for i < j && isSpace(v[i]) {
		i++
	}
	for j > i && isSpace(v[j-1]) {
		j--
	}
	if t := v[i:j]; strings.IndexByte(t, '\r') < 0 && strings.IndexByte(t, '\n') < 0 { // the common case: as it is (two IndexByte: vectorized, no set built per call)
		return append(b, v[i:j]...)
	}
	for k := i; k < j; k++ {
		c := v[k]
		if c == '\r' || c == '\n' {
			c = ' '
		}
		b = append(b, c)
	}
	return b
}

// isSpace is textproto.TrimString's notion of white space.
func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// dateCache is the Date header's value, formatted once a second.
type dateCache struct {
	v atomic.Pointer[dateValue]
}

type dateValue struct {
	sec int64
	b   []byte
}

// append appends the Date of now to b, and returns the second it says.
func (d *dateCache) append(b []byte) ([]byte, int64) {
	now := time.Now()
	v := d.v.Load()
	if v == nil || v.sec != now.Unix() {
		v = &dateValue{sec: now.Unix(), b: now.UTC().AppendFormat(nil, http.TimeFormat)}
		d.v.Store(v)
	}
	return append(b, v.b...), v.sec
}

// A handoffListener is where net/http accepts the Front's connections.
type handoffListener struct {
	conns chan net.Conn
	done  <-chan struct{}
	addr  net.Addr

	mu      sync.Mutex
	closed  chan struct{} // by Close: net/http's Shutdown or Close
	failure error
}

func (l *handoffListener) closedCh() chan struct{} {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed == nil {
		l.closed = make(chan struct{})
	}
	return l.closed
}

// give hands c to net/http, or closes it if net/http no longer accepts.
func (l *handoffListener) give(c net.Conn) {
	select {
	case l.conns <- c:
	case <-l.closedCh():
		c.Close() // net/http no longer accepts: nobody else is to close it
	}
}

// fail makes Accept return err: the Front's own listener failed.
func (l *handoffListener) fail(err error) {
	l.mu.Lock()
	l.failure = err
	l.mu.Unlock()
	l.Close()
}

func (l *handoffListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.closedCh():
		l.mu.Lock()
		defer l.mu.Unlock()
		if l.failure != nil {
			return nil, l.failure
		}
		return nil, net.ErrClosed
	}
}

func (l *handoffListener) Close() error {
	ch := l.closedCh()
	l.mu.Lock()
	defer l.mu.Unlock()
	select {
	case <-ch:
	default:
		close(ch)
	}
	return nil
}

func (l *handoffListener) Addr() net.Addr { return l.addr }

// A handoffConn is a connection the Front handed to net/http: the bytes
// the Front read and did not consume come first, then the error that
// ended them, if any.
type handoffConn struct {
	net.Conn
	buf   []byte
	err   error
	first atomic.Pointer[http.Request]
	// clamp, if set, bounds net/http's first read deadline (its
	// ReadHeader's): the Front's for the header it hands over.
	clamp time.Time
}

// SetReadDeadline sets the read deadline, the first one no later than
// clamp.
func (c *handoffConn) SetReadDeadline(t time.Time) error {
	if d := c.clamp; !d.IsZero() {
		c.clamp = time.Time{}
		if t.IsZero() || t.After(d) {
			t = d
		}
	}
	return c.Conn.SetReadDeadline(t)
}

func (c *handoffConn) Read(p []byte) (int, error) {
	if len(c.buf) > 0 {
		n := copy(p, c.buf)
		c.buf = c.buf[n:]
		return n, nil
	}
	if err := c.err; err != nil {
		c.err = nil
		return 0, err
	}
	return c.Conn.Read(p)
}

// ReadFrom keeps the connection's sendfile(2) for whole files.
func (c *handoffConn) ReadFrom(r io.Reader) (int64, error) {
	if rf, ok := c.Conn.(io.ReaderFrom); ok {
		return rf.ReadFrom(r)
	}
	return io.Copy(struct{ io.Writer }{c.Conn}, r)
}

// CloseWrite half-closes the connection, as net/http does before closing
// one it refuses.
func (c *handoffConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}

// handoffKey is the context key of a handed-over connection (ConnContext).
type handoffKey struct{}

// ConnContext is the http.Server's ConnContext with the Front: it notes
// the connections the Front handed over, for Wrap.
func (f *Front) ConnContext(ctx context.Context, c net.Conn) context.Context {
	if hc, ok := c.(*handoffConn); ok {
		return context.WithValue(ctx, handoffKey{}, hc)
	}
	return ctx
}

// Wrap returns h, which is to be the net/http server's handler, giving
// the first request of a connection the Front handed over what the
// FastHandler learnt of it (its engine answer), so that it is not asked
// twice. And it takes the connection back for the Front after an answer
// that leaves it ready for the next request (reclaim): a player that asks
// for a manifest first keeps its connection's segments on the Front.
func (f *Front) Wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hc, ok := r.Context().Value(handoffKey{}).(*handoffConn)
		if !ok {
			h.ServeHTTP(w, r)
			return
		}
		if first := hc.first.Swap(nil); first != nil && first.Method == r.Method && first.URL.Path == r.URL.Path {
			// The fast path has answered it already: FastPath is not
			// to ask the FastHandler again.
			r = r.WithContext(context.WithValue(valuesFrom{r.Context(), first.Context()}, fastTriedKey{}, true))
		}
		if !reusable(r) || f.closing() {
			h.ServeHTTP(w, r)
			return
		}
		cw := &CountingWriter{ResponseWriter: w}
		h.ServeHTTP(cw, r)
		if complete(r, cw) {
			f.reclaim(hc, w)
		}
	})
}

// reusable reports whether r leaves its connection to the next request
// once answered, as far as the request goes: an HTTP/1.1 GET or HEAD
// without a body that does not ask to close (r.Close, or net/http's
// wantsClose, which also reads "Connection: x close") or to change
// protocol.
func reusable(r *http.Request) bool {
	return (r.Method == http.MethodGet || r.Method == http.MethodHead) && r.ProtoMajor == 1 && r.ProtoMinor == 1 &&
		!r.Close && !hasToken(r.Header.Get("Connection"), "close") && r.ContentLength == 0 && (r.Body == nil || r.Body == http.NoBody) && len(r.TransferEncoding) == 0 &&
		r.Header.Get("Upgrade") == ""
}

// complete reports whether the answer written through cw is whole on the
// wire once flushed, with nothing net/http would still add when the
// handler returns: a status, and a body of its announced Content-Length
// (or none: HEAD, 204, 304), not chunked, the connection not to close.
// An answer without a length is chunked or finished by net/http: the
// connection stays with it.
func complete(r *http.Request, cw *CountingWriter) bool {
	h := cw.Header()
	if cw.Status < 200 || h.Get("Transfer-Encoding") != "" || h.Get("Connection") != "" {
		return false
	}
	if r.Method == http.MethodHead || !bodyAllowed(cw.Status) {
		return cw.Bytes == 0 // net/http adds no length nor chunks to these
	}
	n, err := strconv.ParseInt(h.Get("Content-Length"), 10, 64)
	return err == nil && n == cw.Bytes
}

// reclaim flushes w's answer, takes its connection from net/http and
// serves it on the Front, with what net/http had read of the next
// requests. A connection net/http has hijacked already, or that fails,
// is left alone.
func (f *Front) reclaim(hc *handoffConn, w http.ResponseWriter) {
	rc := http.NewResponseController(w)
	if rc.Flush() != nil {
		return
	}
	c, brw, err := rc.Hijack()
	if err != nil {
		return
	}
	if c != net.Conn(hc) { // not ours: cannot happen with ConnContext's key
		c.Close()
		return
	}
	// What net/http's reader holds comes before what it has not read
	// of hc's own buffer.
	pending, _ := brw.Reader.Peek(brw.Reader.Buffered())
	pending = append(pending[:len(pending):len(pending)], hc.buf...)
	if len(pending) > frontBufSize {
		hc.buf = pending // more than the Front takes: back to net/http
		f.handoff.give(hc)
		return
	}
	fc := f.newConn(hc.Conn)
	if fc == nil {
		hc.Close()
		return
	}
	fc.n = copy(fc.buf, pending)
	fc.served = 1 // between requests: the idle timeout
	inc(f.opts.Counters.Reclaims)
	go fc.serve()
}

// fastTriedKey marks the context of a request the Front's FastHandler
// has handed back.
type fastTriedKey struct{}

// valuesFrom is ctx with the values of extra it does not have itself.
type valuesFrom struct {
	context.Context
	extra context.Context
}

func (v valuesFrom) Value(key any) any {
	if x := v.Context.Value(key); x != nil {
		return x
	}
	return v.extra.Value(key)
}
