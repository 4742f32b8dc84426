package httpapitest

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"os"
	"testing"

	"golang.org/x/sys/unix"
)

// SpliceClient returns a get that sends req on c, reads the answer's
// header (a 200 that must contain field, e.g. "X-Strata-Tier: ssd"),
// then splices its body of n bytes to /dev/null: the client's CPU as
// small as can be, so that a benchmark's CPU per request is the server's.
func SpliceClient(tb testing.TB, c *net.TCPConn, req []byte, n int64, field string) func() {
	null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { null.Close() })
	var fds [2]int
	if err := unix.Pipe2(fds[:], unix.O_CLOEXEC); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { unix.Close(fds[0]); unix.Close(fds[1]) })
	unix.FcntlInt(uintptr(fds[1]), unix.F_SETPIPE_SZ, 1<<20) //nolint:errcheck
	rc, err := c.SyscallConn()
	if err != nil {
		tb.Fatal(err)
	}
	hdr := make([]byte, 2048)
	return func() {
		if _, err := c.Write(req); err != nil {
			tb.Fatal(err)
		}
		// The header: peeked at until it is whole, then read, so that
		// nothing of the body is read here.
		var h []byte
		for end := -1; end < 0; {
			var k int
			var e error
			if err := rc.Read(func(fd uintptr) bool {
				k, _, e = unix.Recvfrom(int(fd), hdr, unix.MSG_PEEK)
				return e != unix.EAGAIN
			}); err != nil || e != nil || k == 0 {
				tb.Fatal("peeking at the header: ", err, e)
			}
			if end = bytes.Index(hdr[:k], []byte("\r\n\r\n")); end >= 0 {
				h = hdr[:end+4]
				if _, err := io.ReadFull(c, h); err != nil {
					tb.Fatal(err)
				}
			}
		}
		if !bytes.HasPrefix(h, []byte("HTTP/1.1 200 ")) || !bytes.Contains(h, []byte(field)) {
			tb.Fatalf("answer %q", h)
		}
		var got int64
		var serr error
		err := rc.Read(func(fd uintptr) bool {
			for got < n {
				k, e := unix.Splice(int(fd), nil, fds[1], nil, int(n-got), unix.SPLICE_F_MOVE|unix.SPLICE_F_NONBLOCK)
				if e == unix.EAGAIN {
					return false
				}
				if e != nil || k == 0 {
					serr = fmt.Errorf("splice from the socket: %d, %v", k, e)
					return true
				}
				for out := int64(0); out < k; {
					m, e := unix.Splice(fds[0], nil, int(null.Fd()), nil, int(k-out), unix.SPLICE_F_MOVE)
					if e != nil {
						serr = e
						return true
					}
					out += m
				}
				got += k
			}
			return true
		})
		if err != nil || serr != nil {
			tb.Fatal(err, serr)
		}
	}
}
