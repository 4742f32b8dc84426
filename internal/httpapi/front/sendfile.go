package front

import (
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"runtime"
	"slices"
	"strconv"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// A FileBody is an answer's body that lies in ranges of a file: a flash
// hit whose records are verified, pinned so that their block is not
// rewritten while they are sent (store.FileHit). The Front sends it from
// the file, in slices of at most SendSlice bytes each under a write
// deadline of SendSliceWait; between slices, and when a slice's deadline
// passes (a slow client), it asks Yield, and when a writer waits for the
// file's bytes it takes the rest in memory (Rest) and writes that
// instead. A slow client with no writer waiting holds the file's bytes,
// not memory, up to the answer's own deadline.
type FileBody interface {
	// Len is the body's length; Parts and Part its parts, in order:
	// each a range of the file (mem nil), or bytes in memory (mem: a
	// file opened with O_DIRECT sends only aligned ranges).
	Len() int64
	Parts() int
	Part(i int) (off, n int64, mem []byte, err error)
	// WithFD runs fn with the file's descriptor.
	WithFD(fn func(fd int) error) error
	// Yield reports whether the sender is to stop sending from the file.
	Yield() bool
	// Rest returns the body's bytes from off on, in memory: after it
	// the file is not to be used.
	Rest(off int64) ([]byte, error)
}

// A TimedFileBody is a FileBody whose reads of its file are timed (the
// device's health, decision 0035): the Front calls BeginFileRead before
// each read of the file (each splice of it into the send's pipe, each
// sendfile(2) when no pipe can be had) and EndFileRead after it, with
// the read's error (nil: it read). A non-nil error from BeginFileRead is
// that read's error: the read is not made, and EndFileRead is still
// called with it. The socket's side of a send is not timed: a slow
// client is not a slow device.
type TimedFileBody interface {
	BeginFileRead() error
	EndFileRead(err error)
}

// readFile runs read, one read of b's file, between b's BeginFileRead
// and EndFileRead if b is a TimedFileBody.
func readFile(tb TimedFileBody, read func() (int64, error)) (int64, error) {
	if tb == nil {
		return read()
	}
	if err := tb.BeginFileRead(); err != nil {
		tb.EndFileRead(err)
		return 0, err
	}
	k, err := read()
	tb.EndFileRead(err)
	return k, err
}

// A FileWriter is a ResponseWriter that can send a FileBody from its
// file: the Front's on a plain TCP connection, for a GET whose header is
// not out yet. A FastHandler asks CanSendFile before it looks up the
// body, so that it pins nothing it would copy anyway.
type FileWriter interface {
	CanSendFile() bool
	// SendFile sends the header, whose Content-Length must be b.Len(),
	// and b. It returns the body's bytes sent.
	SendFile(b FileBody) (int64, error)
}

// A LaidWriter is a FileWriter that can send again a header it laid out
// for an earlier answer: a FastHandler whose answers repeat (the hits of
// one stored record within a second) keeps the header of one and sends
// it with the next, without filling the header map, nor the Front
// sorting, checking and writing it out again.
type LaidWriter interface {
	FileWriter
	// Laid returns the header the Front laid out for the answer just
	// sent by SendFile (from a memory file or a flash hit's parts), for
	// SendFileLaid; ok false
	// if that answer's header is not one to send again (it closed the
	// connection, or went out otherwise).
	Laid() (l *Laid, ok bool)
	// SendFileLaid sends l and b, a body as long as that of the answer l
	// was laid for, as SendFile would send the same header and b: ok
	// false, with nothing sent, when the Front cannot (a HEAD, another
	// second than l's, the Front closing, an access log that is to see
	// the answer's fields, a body of another length or kind); the
	// handler then answers as usual.
	SendFileLaid(l *Laid, b FileBody) (n int64, err error, ok bool)
}

// A Laid is a header the Front laid out (LaidWriter): the status line
// and fields exactly, the second it was laid in (its Date's, if the
// Front added one: it is sent again only within that second) and the
// body's length it announces. It is never changed.
type Laid struct {
	hdr     []byte
	sec     int64
	clength int64
}

// A LaidSlot keeps one Laid for what holds the slot (a stored record, an
// object's memory file), with the key of what the header was made of
// besides it (an Age, a CORS policy, the request's Origin...): the next
// hits send it again while their key is the same. Safe for concurrent
// use; its zero value is empty.
type LaidSlot[K comparable] struct{ p atomic.Pointer[laidEntry[K]] }

type laidEntry[K comparable] struct {
	key  K
	laid *Laid
}

// Get returns the Laid kept for k, nil if none is.
func (s *LaidSlot[K]) Get(k K) *Laid {
	if e := s.p.Load(); e != nil && e.key == k {
		return e.laid
	}
	return nil
}

// Keep keeps l for k, in place of what the slot kept.
func (s *LaidSlot[K]) Keep(k K, l *Laid) { s.p.Store(&laidEntry[K]{key: k, laid: l}) }

// Laid returns the header of the answer just sent (LaidWriter).
func (w *frontWriter) Laid() (*Laid, bool) {
	if !w.laidOK || w.close || w.err != nil || w.fc.f.opts.AccessLog != nil {
		return nil, false
	}
	return &Laid{hdr: slices.Clone(w.hbuf), sec: w.hsec, clength: w.clength}, true
}

// SendFileLaid sends l and b (LaidWriter).
func (w *frontWriter) SendFileLaid(l *Laid, b FileBody) (int64, error, bool) {
	if l.sec != time.Now().Unix() || l.clength != b.Len() || b.Len() == 0 || w.fc.f.opts.AccessLog != nil || !w.CanSendFile() || w.status != 0 || w.fc.f.closing() {
		return 0, nil, false
	}
	tc, ok := vectored(w.fc.c).(*net.TCPConn)
	if !ok {
		return 0, nil, false
	}
	w.sent, w.status, w.clength = true, http.StatusOK, l.clength
	inc(w.fc.f.opts.Counters.Laid)
	if bb, ok := b.(BufferedFileBody); ok && bb.Buffered() {
		n, err := w.sendFrom(tc, l.hdr, bb)
		return n, err, true
	}
	n, err := w.sendParts(tc, l.hdr, b)
	return n, err, true
}

// SendSlice and SendSliceWait bound how long a block writer waits for a
// sender to yield: at most one slice's deadline.
const (
	SendSlice     = 1 << 20
	SendSliceWait = 200 * time.Millisecond
)

// CanSendFile reports whether SendFile sends from the file.
func (w *frontWriter) CanSendFile() bool {
	_, ok := vectored(w.fc.c).(*net.TCPConn)
	return ok && !w.sent && !w.head && w.err == nil
}

// SendFile sends the header and b (FileWriter).
func (w *frontWriter) SendFile(b FileBody) (int64, error) {
	if w.err != nil {
		return 0, w.err
	}
	if w.status == 0 {
		w.status = http.StatusOK
	}
	tc, ok := vectored(w.fc.c).(*net.TCPConn)
	cl := w.h["Content-Length"]
	if !ok || w.sent || w.head || !bodyAllowed(w.status) || len(cl) != 1 || cl[0] != strconv.FormatInt(b.Len(), 10) || b.Len() == 0 {
		data, err := b.Rest(0)
		if err != nil {
			w.err, w.close = err, true
			return 0, err
		}
		n, err := w.Write(data)
		runtime.KeepAlive(b) // data may be b's file's, mapped
		return int64(n), err
	}
	if _, ok := w.header(nil); !ok {
		return 0, w.err
	}
	w.laidOK = w.status == http.StatusOK
	if bb, ok := b.(BufferedFileBody); ok && bb.Buffered() {
		return w.sendBuffered(tc, bb)
	}
	return w.sendParts(tc, w.hbuf, b)
}

// sendParts sends hdr, the header, and b's parts: the file's ranges
// spliced in slices, each under its deadline, the memory parts written;
// once a block write waits for b's file (Yield), the rest from memory
// (sendRest). It returns the body's bytes sent.
func (w *frontWriter) sendParts(tc *net.TCPConn, hdr []byte, b FileBody) (int64, error) {
	rc, err := w.rawConn(tc)
	if err != nil {
		return 0, err
	}
	defer w.restoreDeadline(tc)
	// Every send but the answer's last says that more follows at once
	// (MSG_MORE, SPLICE_F_MORE): the header and a memory part (a record's
	// unaligned ends) then go out in the segments of what follows them,
	// not each as a packet of its own that the client is woken for.
	parts := b.Parts()
	if rest, err := w.sliced(tc, b, hdr, parts > 0); err != nil {
		return w.sendRest(tc, b, rest, 0, err)
	}
	var sent int64
	for i := range parts {
		if b.Yield() {
			return w.sendRest(tc, b, nil, sent, errYield)
		}
		off, n, mem, err := b.Part(i)
		if err != nil {
			w.err, w.close = err, true // the header is out: only a close tells the client
			return sent, err
		}
		more := i < parts-1
		if mem != nil {
			rest, err := w.sliced(tc, b, mem, more)
			sent += int64(len(mem) - len(rest))
			w.n = sent
			if err != nil {
				return w.sendRest(tc, b, nil, sent, err)
			}
			continue
		}
		for n > 0 {
			if b.Yield() {
				return w.sendRest(tc, b, nil, sent, errYield)
			}
			k := sliceLen(off, n)
			w.slice(tc)
			m, err := sendfile(rc, b, off, k, more || k < n)
			sent, off, n = sent+m, off+m, n-m
			w.n = sent
			if err != nil && !w.slow(err) {
				return w.sendRest(tc, b, nil, sent, err)
			}
		}
	}
	return sent, nil
}

// errYield ends a send from the file: a block write waits for its bytes.
var errYield = errors.New("front: a block write waits for the file's bytes")

// slow reports whether err is a slice's deadline only (a slow client),
// not the answer's: the send goes on, from the file while no write waits.
func (w *frontWriter) slow(err error) bool {
	return errors.Is(err, os.ErrDeadlineExceeded) && (w.deadline.IsZero() || time.Now().Before(w.deadline))
}

// sliced writes p in slices, each under its deadline, going on past a
// slice's deadline unless a write waits for b's file (errYield); with
// more, each write says MSG_MORE (more of the answer follows at once).
// It returns what of p was not written, and why.
func (w *frontWriter) sliced(tc *net.TCPConn, b FileBody, p []byte, more bool) ([]byte, error) {
	for len(p) > 0 {
		w.slice(tc)
		var k int
		var err error
		if more {
			k, err = w.writeMore(tc, p)
		} else {
			k, err = tc.Write(p)
		}
		p = p[k:]
		switch {
		case err == nil:
		case !w.slow(err):
			return p, err
		case b.Yield():
			return p, errYield
		}
	}
	return nil, nil
}

// A BufferedFileBody is a FileBody whose file is not opened with
// O_DIRECT and whose parts are all ranges of it (a memory file of the RAM
// tier, ramfile.Body): the Front sends them with sendfile(2), aligned or
// not, the header ahead with MSG_MORE, under the answer's own deadline
// (no slices, no Yield, no Rest). FD is the file's descriptor, open for
// as long as the body is referenced.
type BufferedFileBody interface {
	FileBody
	Buffered() bool
	FD() int
}

// sendBuffered sends the header and b, a BufferedFileBody, under the
// answer's own write deadline: the header with MSG_MORE, so that it goes
// out in one segment with the body's first bytes, not as a packet of its
// own; each of b's ranges with sendfile(2), the socket referring to the
// file's pages. Nothing ever waits for such a file's bytes: no slices,
// no yield. It allocates nothing (the connection's raw conn and callback
// are made once). It returns the body's bytes sent; after an error the
// connection closes.
func (w *frontWriter) sendBuffered(tc *net.TCPConn, b BufferedFileBody) (int64, error) {
	return w.sendFrom(tc, w.hbuf, b)
}

// rawConn is tc's raw connection, made once for the connection (a
// frontWriter is one connection's); after an error the connection
// closes.
func (w *frontWriter) rawConn(tc *net.TCPConn) (syscall.RawConn, error) {
	bs := &w.bs
	if bs.rc == nil {
		rc, err := tc.SyscallConn()
		if err != nil {
			w.err, w.close = err, true
			return nil, err
		}
		bs.rc, bs.write, w.ms.write = rc, bs.send, w.ms.send
	}
	return bs.rc, nil
}

// writeMore writes p to tc with MSG_MORE, as tc.Write would without it:
// the bytes written, and the poller's deadline error past tc's write
// deadline.
func (w *frontWriter) writeMore(tc *net.TCPConn, p []byte) (int, error) {
	rc, err := w.rawConn(tc)
	if err != nil {
		return 0, err
	}
	ms := &w.ms
	ms.p, ms.n, ms.err = p, 0, nil
	ms.raw = !raceEnabled && len(p) <= moreRawMax
	err = rc.Write(ms.write)
	ms.p = nil
	if ms.err != nil {
		err = ms.err
	}
	return ms.n, err
}

// moreRawMax is the longest write writeMore makes with a raw call: a
// header or a record's unaligned ends, copied into the socket at once.
const moreRawMax = 16 << 10

// moreSend is a frontWriter's write with MSG_MORE (writeMore), what the
// poller's callback reads.
type moreSend struct {
	write func(fd uintptr) bool // send, made once
	p     []byte                // what is left to write
	n     int                   // written
	err   error
	raw   bool
}

// send writes what is left of p with MSG_MORE: true when done or failed
// (err), false when the socket is full.
func (ms *moreSend) send(out uintptr) bool {
	full, err := sendAllMore(out, &ms.p, &ms.n, ms.raw)
	ms.err = err
	return !full
}

// sendAllMore sends *p on the socket out with MSG_MORE (sendMore) until
// it is all out, taking what went off *p and adding it to *n: full when
// the socket is (EAGAIN: the poller waits for room), else done or err.
func sendAllMore(out uintptr, p *[]byte, n *int, raw bool) (full bool, err error) {
	for len(*p) > 0 {
		k, e := sendMore(out, *p, raw)
		if k > 0 {
			*p, *n = (*p)[k:], *n+k
		}
		switch {
		case e == unix.EAGAIN:
			return true, nil
		case e == unix.EINTR:
		case e != nil:
			return false, e
		}
	}
	return false, nil
}

// sendFrom is sendBuffered with hdr as the header.
func (w *frontWriter) sendFrom(tc *net.TCPConn, hdr []byte, b BufferedFileBody) (int64, error) {
	bs := &w.bs
	if _, err := w.rawConn(tc); err != nil {
		return 0, err
	}
	bs.hdr, bs.fd, bs.err = hdr, b.FD(), nil
	bs.raw = !raceEnabled && b.Len() <= rawSendMax
	var sent int64
	for i := range b.Parts() {
		off, n, _, err := b.Part(i)
		if err != nil {
			bs.err = err
			break
		}
		bs.off, bs.end = off, off+n
		if err := bs.rc.Write(bs.write); bs.err == nil {
			bs.err = err
		}
		sent += n - (bs.end - bs.off)
		w.n = sent
		if bs.err != nil {
			break
		}
	}
	runtime.KeepAlive(b) // its file is open until now
	bs.hdr = nil
	if err := bs.err; err != nil {
		w.err, w.close = err, true
		return sent, err
	}
	return sent, nil
}

// bufferedSend is a frontWriter's send of a BufferedFileBody's range
// (sendBuffered), what the poller's callback reads.
type bufferedSend struct {
	rc       syscall.RawConn
	write    func(fd uintptr) bool // send, made once
	hdr      []byte                // the header, not yet sent
	fd       int
	off, end int64 // the range of the file left to send
	err      error
	raw      bool // the send's system calls are raw (sendMore)
}

// send writes what is left of the header with MSG_MORE, then the file's
// range with sendfile(2): true when done or failed (err), false when the
// socket is full (the poller waits for room and calls again).
func (bs *bufferedSend) send(out uintptr) bool {
	var sent int
	if full, err := sendAllMore(out, &bs.hdr, &sent, bs.raw); full || err != nil {
		bs.err = err
		return !full
	}
	for bs.off < bs.end {
		c, e := sendFileRange(out, bs.fd, &bs.off, bs.end-bs.off, bs.raw)
		switch {
		case e == unix.EAGAIN:
			return false
		case e == unix.EINTR:
		case e != nil:
			bs.err = e
			return true
		case c <= 0:
			bs.err = io.ErrUnexpectedEOF // the file ends short of its range
			return true
		}
	}
	return true
}

// sendMore sends p on the socket out with MSG_MORE, and sendFileRange
// up to n bytes of the file fd from *off with sendfile(2); with raw, as
// raw system calls. The socket is non-blocking (a full one answers
// EAGAIN, and the poller waits) and a memory file's pages are in memory,
// so the runtime's bookkeeping around a call that may block (its monitor
// handing the processor to another thread during a send of tens of
// microseconds, and taking one back after) can be spared: about 14% of a
// 100 KiB RAM hit's CPU (decision 0040). A body over rawSendMax goes by
// ordinary calls: its send lasts long enough that the processor is better
// handed over (raw, 1 MiB hits ran 14-18% slower on loopback). A call
// the kernel does make sleep (the memory cgroup's reclaim, a page swapped
// out) holds its processor meanwhile, as a page fault of Go's own heap
// does under the same pressure. A build with the race detector makes
// ordinary calls, whose memory it sees.
func sendMore(out uintptr, p []byte, raw bool) (int, error) {
	if !raw {
		return unix.SendmsgN(int(out), p, nil, nil, unix.MSG_MORE|unix.MSG_NOSIGNAL)
	}
	k, _, errno := unix.RawSyscall6(unix.SYS_SENDTO, out, uintptr(unsafe.Pointer(&p[0])), uintptr(len(p)), unix.MSG_MORE|unix.MSG_NOSIGNAL, 0, 0)
	if errno != 0 {
		return 0, errno
	}
	return int(k), nil
}

func sendFileRange(out uintptr, fd int, off *int64, n int64, raw bool) (int, error) {
	if !raw {
		return unix.Sendfile(int(out), fd, off, int(n))
	}
	k, _, errno := unix.RawSyscall6(unix.SYS_SENDFILE, out, uintptr(fd), uintptr(unsafe.Pointer(off)), uintptr(n), 0, 0)
	if errno != 0 {
		return 0, errno
	}
	return int(k), nil
}

// rawSendMax is the longest body sendBuffered sends with raw calls.
const rawSendMax = 256 << 10

// slice sets the write deadline of one slice: SendSliceWait, or the
// answer's own deadline if that comes first.
func (w *frontWriter) slice(tc *net.TCPConn) {
	t := time.Now().Add(SendSliceWait)
	if !w.deadline.IsZero() && w.deadline.Before(t) {
		t = w.deadline
	}
	tc.SetWriteDeadline(t) //nolint:errcheck
	w.fc.wdl = t
}

// restoreDeadline sets the answer's own write deadline again, after
// slices.
func (w *frontWriter) restoreDeadline(tc *net.TCPConn) {
	tc.SetWriteDeadline(w.deadline) //nolint:errcheck
	w.fc.wdl = w.deadline
}

// sendRest writes hdr, the rest of the header, and b's bytes from off on
// out of memory, under the answer's deadline, once a block write waits
// for b's file (errYield); after any other error the connection closes.
func (w *frontWriter) sendRest(tc *net.TCPConn, b FileBody, hdr []byte, off int64, err error) (int64, error) {
	if err != errYield {
		w.err, w.close = err, true
		return off, err
	}
	w.restoreDeadline(tc)
	data, err := b.Rest(off)
	if err != nil {
		w.err, w.close = err, true // the header is out: only a close tells the client
		return off, err
	}
	w.fc.out = [2][]byte{hdr, data}
	bufs := net.Buffers(w.fc.out[:])
	k, err := bufs.WriteTo(tc)
	w.fc.out = [2][]byte{}
	sent := off + max(k-int64(len(hdr)), 0)
	w.n = sent
	if err != nil {
		w.err, w.close = err, true
	}
	return sent, err
}

// sendfile sends n bytes of b's file from off to the connection, parking
// on Go's poller while the socket is full: it returns the bytes sent and
// the poller's deadline error past the write deadline. It splices through
// a pipe of its own of up to SendSlice bytes: sendfile(2) goes through
// the kernel's pipe of 64 KiB, which from an O_DIRECT file is one device
// read per 64 KiB (twice the CPU of a buffered hit, measured); a pipe of
// 1 MiB reads a slice in one.
//
// A send resumed after a slice's deadline starts wherever the client's
// socket stopped taking bytes, seldom on an O_DIRECT file's alignment,
// where the file refuses to be read (EINVAL): so it reads from the
// aligned offset below off (fileAlign) and drops the lead from the pipe
// before anything goes to the socket.
func sendfile(rc syscall.RawConn, b FileBody, off, n int64, more bool) (int64, error) {
	p, err := pipes.get()
	if err != nil {
		if off%fileAlign != 0 {
			// sendfile(2) would read the file from an unaligned offset,
			// which an O_DIRECT file refuses: the rest goes from memory
			// (SendFile's sendRest).
			return 0, errYield
		}
		return sendfileDirect(rc, b, off, n)
	}
	lead := off % fileAlign // read before off, dropped
	drop := lead            // of the lead, still in the pipe or unread
	var rd, in, sent int64  // bytes spliced from the file, of them the range's in the pipe, and out of it
	var serr error
	tb, _ := b.(TimedFileBody)
	err = b.WithFD(func(fd int) error {
		for rd < lead+n {
			o := off - lead + rd
			k, e := readFile(tb, func() (int64, error) { // the device's part of the send
				for {
					k, e := unix.Splice(fd, &o, p.w, nil, int(min(lead+n-rd, int64(p.size))), unix.SPLICE_F_MOVE)
					switch {
					case e == unix.EINTR:
						continue
					case e == nil && k <= 0:
						e = io.ErrUnexpectedEOF // the file ends short of its range
					}
					return k, e
				}
			})
			if e != nil {
				serr = e
				return nil
			}
			rd += k
			if drop > 0 {
				if e := dropPipe(p, min(drop, rd-(lead-drop))); e != nil {
					serr = e
					return nil
				}
				drop = lead - min(lead, rd)
			}
			in = max(rd-lead, 0)
			flags := unix.SPLICE_F_MOVE | unix.SPLICE_F_NONBLOCK
			if more || rd < lead+n {
				flags |= unix.SPLICE_F_MORE // more of the answer follows at once
			}
			werr := rc.Write(func(out uintptr) bool {
				for sent < in {
					c, e := unix.Splice(p.r, nil, int(out), nil, int(in-sent), flags)
					if c > 0 {
						sent += c
					}
					switch {
					case e == unix.EAGAIN:
						return false
					case e == unix.EINTR:
					case e != nil:
						serr = e
						return true
					}
				}
				return true
			})
			if werr != nil || serr != nil {
				return werr
			}
		}
		return nil
	})
	if in == sent && drop == 0 {
		pipes.put(p)
	} else {
		p.close() // bytes left in it
	}
	if serr != nil {
		return sent, serr
	}
	return sent, err
}

// sendfileDirect is sendfile with sendfile(2), when no pipe can be had.
func sendfileDirect(rc syscall.RawConn, b FileBody, off, n int64) (int64, error) {
	var sent int64
	var serr error
	tb, _ := b.(TimedFileBody)
	err := b.WithFD(func(in int) error {
		return rc.Write(func(out uintptr) bool {
			for sent < n {
				o := off + sent
				var c int
				var e error
				// sendfile(2) reads the file and writes the socket in one
				// call: it is timed whole, and only EIO is the file's.
				readFile(tb, func() (int64, error) { //nolint:errcheck // e says
					c, e = unix.Sendfile(int(out), in, &o, int(n-sent))
					if e == unix.EIO {
						return int64(c), e
					}
					return int64(c), nil
				})
				if c > 0 {
					sent += int64(c)
				}
				switch {
				case e == unix.EAGAIN:
					return false
				case e == unix.EINTR:
				case e != nil:
					serr = e
					return true
				case c <= 0:
					serr = io.ErrUnexpectedEOF // the file ends short of its range
					return true
				}
			}
			return true
		})
	})
	if serr != nil {
		return sent, serr
	}
	return sent, err
}

// sliceLen is the length of the next slice of a send of n bytes of a
// file part from off: at most SendSlice, and ending on the file's
// alignment unless it is the part's last (a part ends aligned). A send
// resumed at an unaligned offset (sendfile reads from the aligned one
// below) would otherwise ask an O_DIRECT file for an unaligned end, which
// it refuses (EINVAL): a slow client's answer was cut there.
func sliceLen(off, n int64) int64 {
	k := min(n, SendSlice)
	if k < n {
		k -= (off + k) % fileAlign
	}
	return k
}

// fileAlign is the offset alignment sendfile reads a file from: a
// multiple of every logical block size an O_DIRECT file has here (512
// or 4096 bytes).
const fileAlign = 4096

// dropPipe reads n bytes out of p and forgets them: the lead of a read
// from an aligned offset below the send's.
func dropPipe(p *pipe, n int64) error {
	var scratch [fileAlign]byte
	for n > 0 {
		k, e := unix.Read(p.r, scratch[:min(n, fileAlign)])
		switch {
		case e == unix.EINTR:
			continue
		case e != nil:
			return e
		case k <= 0:
			return io.ErrUnexpectedEOF
		}
		n -= int64(k)
	}
	return nil
}

// pipe2 makes a pipe: unix.Pipe2, or a test's failure (out of
// descriptors).
var pipe2 = unix.Pipe2

// A pipe is a splice pipe, empty when pooled.
type pipe struct {
	r, w, size int
}

func (p *pipe) close() {
	unix.Close(p.r) //nolint:errcheck
	unix.Close(p.w) //nolint:errcheck
}

// pipePool keeps up to cap(free) empty pipes for the sends in progress.
type pipePool struct{ free chan *pipe }

var pipes = pipePool{free: make(chan *pipe, 64)}

func (pp *pipePool) get() (*pipe, error) {
	select {
	case p := <-pp.free:
		return p, nil
	default:
	}
	var fds [2]int
	if err := pipe2(fds[:], unix.O_CLOEXEC); err != nil {
		return nil, err
	}
	p := &pipe{r: fds[0], w: fds[1], size: 64 << 10}
	if n, err := unix.FcntlInt(uintptr(p.w), unix.F_SETPIPE_SZ, SendSlice); err == nil {
		p.size = n
	}
	return p, nil
}

func (pp *pipePool) put(p *pipe) {
	select {
	case pp.free <- p:
	default:
		p.close()
	}
}
