package front

import (
	"io"
	"net"
	"sync/atomic"
	"time"
)

// A server that closes a TCP connection with bytes of the client's still
// unread in the kernel (a request pipelined behind the last answer, the
// rest of a malformed one) makes the kernel send a reset instead of the
// end of the stream, and a reset makes the client's kernel drop what it
// had received and its reader had not yet read: the answers sent before
// the close arrive cut. RFC 9112, section 9.6, asks a server to close in
// stages instead: half-close, then read until the client closes (or long
// enough that it has the last answer), then close.
//
// Lingering does that for every close of the connections it wraps, in
// the background (Close returns at once, as net/http and the Front call
// it with locks held): the write side is shut at once (the client sees
// the end of the answers as before), the client's bytes are read and
// discarded until it closes its side, lingerBytes have come or
// lingerTime has passed, and only then is the socket closed. Its
// connections also answer problem details where net/http would write
// its own text (early.go).
const (
	lingerTime  = time.Second
	lingerBytes = 256 << 10
)

// Lingering returns ln whose connections close lingering (see
// lingerConn): the listener net/http alone serves, so that its closes are
// the Front's (the Front lingers its own connections, those it hands to
// net/http and those it takes back).
func Lingering(ln net.Listener) net.Listener { return lingerListener{ln} }

type lingerListener struct{ net.Listener }

func (l lingerListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return linger(c), nil
}

// linger wraps c so that it closes lingering, unless it does already or
// cannot half-close (then a lingering read would wait for nothing).
func linger(c net.Conn) net.Conn {
	switch c.(type) {
	case *lingerConn:
		return c
	case interface{ CloseWrite() error }:
		return &lingerConn{Conn: c}
	}
	return c
}

// A lingerConn is a connection whose Close half-closes it, then reads and
// discards for a bounded time and size before closing it (lingerTime,
// lingerBytes). Once it is closed, its reads, writes and deadlines fail
// with net.ErrClosed, as a closed connection's do, and a read that was
// pending returns as soon as it can.
type lingerConn struct {
	net.Conn
	closed atomic.Bool
}

func (c *lingerConn) Close() error {
	if !c.closed.CompareAndSwap(false, true) {
		return net.ErrClosed
	}
	raw := c.Conn
	raw.(interface{ CloseWrite() error }).CloseWrite() //nolint:errcheck // a connection already reset closes below
	// A read pending on the connection (a server's background read, the
	// Front's watch) is woken: it returns net.ErrClosed (Read).
	raw.SetReadDeadline(aLongTimeAgo) //nolint:errcheck
	go func() {
		raw.SetReadDeadline(time.Now().Add(lingerTime)) //nolint:errcheck
		io.CopyN(io.Discard, raw, lingerBytes)          //nolint:errcheck // the end, a reset, the deadline: done
		raw.Close()                                     //nolint:errcheck
	}()
	return nil
}

func (c *lingerConn) Read(p []byte) (int, error) {
	if c.closed.Load() {
		return 0, net.ErrClosed
	}
	n, err := c.Conn.Read(p)
	if c.closed.Load() {
		return 0, net.ErrClosed // what it read is the lingering's to discard
	}
	return n, err
}

// Write writes p, or, for net/http's text answer to a request it could
// not read, the problem details that replace it (earlyProblem).
func (c *lingerConn) Write(p []byte) (int, error) {
	if c.closed.Load() {
		return 0, net.ErrClosed
	}
	if q, ok := earlyProblem(p); ok {
		if _, err := c.Conn.Write(q); err != nil {
			return 0, err
		}
		return len(p), nil
	}
	return c.Conn.Write(p)
}

// The deadlines of a closed connection are the lingering's.

func (c *lingerConn) SetDeadline(t time.Time) error {
	if c.closed.Load() {
		return net.ErrClosed
	}
	return c.Conn.SetDeadline(t)
}

func (c *lingerConn) SetReadDeadline(t time.Time) error {
	if c.closed.Load() {
		return net.ErrClosed
	}
	return c.Conn.SetReadDeadline(t)
}

func (c *lingerConn) SetWriteDeadline(t time.Time) error {
	if c.closed.Load() {
		return net.ErrClosed
	}
	return c.Conn.SetWriteDeadline(t)
}

// CloseWrite half-closes the connection, as net/http does before closing
// one it refuses.
func (c *lingerConn) CloseWrite() error {
	if c.closed.Load() {
		return net.ErrClosed
	}
	return c.Conn.(interface{ CloseWrite() error }).CloseWrite()
}

// ReadFrom keeps the connection's sendfile(2) for whole files.
func (c *lingerConn) ReadFrom(r io.Reader) (int64, error) {
	if c.closed.Load() {
		return 0, net.ErrClosed
	}
	if rf, ok := c.Conn.(io.ReaderFrom); ok {
		return rf.ReadFrom(r)
	}
	return io.Copy(struct{ io.Writer }{c.Conn}, r)
}

// vectored returns the connection a writev(2) goes to: c's own socket when
// c lingers, since net.Buffers writes one buffer at a time (a write(2)
// each) to any net.Conn that is not the net package's own. Only the
// Front's answers go this way, never net/http's early text (early.go).
func vectored(c net.Conn) net.Conn {
	if lc, ok := c.(*lingerConn); ok {
		return lc.Conn
	}
	return c
}
