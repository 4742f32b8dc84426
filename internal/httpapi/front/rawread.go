package front

import (
	"errors"
	"io"
	"net"
	"os"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// A rawReader reads a connection's socket for readHeader as net.Conn's
// Read does, but with its read(2) made as a raw system call: the socket
// is non-blocking, so the call never waits (EAGAIN, and the poller waits
// for the next bytes as it does for Read), and the runtime's bookkeeping
// around a system call that may block (handing the processor over, the
// monitor taking it back) is a cost a request's read does not need. The
// deadlines are the connection's: the poller keeps them as for Read.
type rawReader struct {
	lc    *lingerConn
	rc    syscall.RawConn
	laddr net.Addr
	raddr net.Addr
	p     []byte // the read's buffer, for fn
	n     int
	errno syscall.Errno
	fn    func(fd uintptr) bool // made once: read reads p
}

// newRawReader returns the raw reader of c, nil if c is not a lingering
// TCP connection (then Read it is).
func newRawReader(c net.Conn) *rawReader {
	if raceEnabled {
		// The race detector sees a raw read(2) neither write the
		// buffer nor order what the socket carried: Read it is.
		return nil
	}
	lc, ok := c.(*lingerConn)
	if !ok {
		return nil
	}
	tc, ok := lc.Conn.(*net.TCPConn)
	if !ok {
		return nil
	}
	rc, err := tc.SyscallConn()
	if err != nil {
		return nil
	}
	r := &rawReader{lc: lc, rc: rc, laddr: tc.LocalAddr(), raddr: tc.RemoteAddr()}
	r.fn = r.read
	return r
}

func (r *rawReader) read(fd uintptr) bool {
	for {
		n, _, errno := unix.RawSyscall(unix.SYS_READ, fd, uintptr(unsafe.Pointer(&r.p[0])), uintptr(len(r.p)))
		if errno == unix.EINTR {
			continue
		}
		r.n, r.errno = int(n), errno
		return errno != unix.EAGAIN
	}
}

// Read reads into p (not empty) as lingerConn.Read and net.Conn.Read do:
// the end of the stream is io.EOF, a closed connection net.ErrClosed, an
// error a *net.OpError.
func (r *rawReader) Read(p []byte) (int, error) {
	if r.lc.closed.Load() {
		return 0, net.ErrClosed
	}
	r.p, r.n, r.errno = p, 0, 0
	err := r.rc.Read(r.fn)
	r.p = nil
	if r.lc.closed.Load() {
		return 0, net.ErrClosed // what it read is the lingering's to discard
	}
	switch {
	case err != nil:
		// The poller's error (a deadline, a closed descriptor) comes as
		// a "raw-read" OpError: the read's is Read's.
		var oe *net.OpError
		if errors.As(err, &oe) {
			err = oe.Err
		}
		return 0, &net.OpError{Op: "read", Net: "tcp", Source: r.laddr, Addr: r.raddr, Err: err}
	case r.errno != 0:
		return 0, &net.OpError{Op: "read", Net: "tcp", Source: r.laddr, Addr: r.raddr, Err: os.NewSyscallError("read", r.errno)}
	case r.n == 0:
		return 0, io.EOF
	}
	return r.n, nil
}
