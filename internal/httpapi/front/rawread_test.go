package front

import (
	"errors"
	"io"
	"net"
	"os"
	"testing"
	"time"
)

// A raw read reads and fails as a lingering connection's Read does: the
// bytes sent, a deadline's timeout as a "read" OpError, the end of the
// stream as io.EOF, and net.ErrClosed once the connection is closed.
func TestRawReaderAsRead(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector's build reads with Read")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	peer := make(chan net.Conn, 1)
	go func() {
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			peer <- nil
			return
		}
		peer <- c
	}()
	s, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	c := <-peer
	if c == nil {
		t.Fatal("no peer")
	}
	defer c.Close()
	lc := linger(s)
	r := newRawReader(lc)
	if r == nil {
		t.Fatal("no raw reader for a lingering TCP connection")
	}
	buf := make([]byte, 16)
	io.WriteString(c, "hello")
	if n, err := r.Read(buf); err != nil || string(buf[:n]) != "hello" {
		t.Fatalf("read %q, %v", buf[:n], err)
	}
	lc.SetReadDeadline(time.Now().Add(20 * time.Millisecond))
	_, err = r.Read(buf)
	var oe *net.OpError
	if !errors.As(err, &oe) || oe.Op != "read" || !oe.Timeout() || !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("past the deadline: %v, want a read OpError that is a timeout", err)
	}
	if _, inner := oe.Err.(*net.OpError); inner {
		t.Fatalf("the poller's OpError wrapped again: %v", err)
	}
	lc.SetReadDeadline(time.Time{})
	c.(*net.TCPConn).CloseWrite()
	if _, err := r.Read(buf); err != io.EOF {
		t.Fatalf("at the end of the stream: %v, want io.EOF", err)
	}
	lc.Close()
	if _, err := r.Read(buf); !errors.Is(err, net.ErrClosed) {
		t.Fatalf("closed: %v, want net.ErrClosed", err)
	}
}
