package front

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// slowClose dials addr, sends head, waits gap, sends a line that makes
// the Front hand the connection over (a bare LF), then a byte every
// 50 ms, and returns how long after its first byte the server closed.
func slowClose(t *testing.T, addr, head string, gap time.Duration) time.Duration {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	start := time.Now()
	io.WriteString(c, head)
	closed := make(chan time.Duration, 1)
	go func() {
		io.Copy(io.Discard, c) //nolint:errcheck
		closed <- time.Since(start)
	}()
	time.Sleep(gap)
	io.WriteString(c, "X-A: b\n")
	for i := 0; i < 100; i++ { // at most 5 s
		select {
		case d := <-closed:
			return d
		case <-time.After(50 * time.Millisecond):
			if _, err := io.WriteString(c, "x"); err != nil {
				return <-closed
			}
		}
	}
	return 5 * time.Second
}

// TestFrontSlowHeaderHandedOver: a header the Front hands over half read
// (a bare LF, or more than its buffer) keeps the ReadHeader deadline of
// its first byte, as net/http alone does: it does not get a second one
// from net/http (a slowloris client would hold a connection twice as
// long). Both servers run side by side; the Front may close later than
// net/http alone by scheduling noise, not by another ReadHeader.
func TestFrontSlowHeaderHandedOver(t *testing.T) {
	if testing.Short() {
		t.Skip("takes seconds")
	}
	const rh = time.Second
	front, plain, _, _ := serveBoth(t, oddRoutes(closed()), Options{ReadHeader: rh, Idle: rh, Write: rh})
	for _, head := range []string{"GET /v/ok HTTP/1.1\r\nHost: a\r\n", "GET /v/ok HTTP/1.1\r\nHost: a\r\nX-B: " + strings.Repeat("b", frontBufSize-40)} {
		res := make(chan time.Duration, 2)
		go func() { res <- slowClose(t, plain, head, rh*8/10) }()
		f := slowClose(t, front, head, rh*8/10)
		p := <-res
		t.Logf("closed after %v (the Front), %v (net/http alone)", f, p)
		if f > p+rh/2 {
			t.Errorf("the Front's connection closed %v after its first byte, net/http alone's %v: a second ReadHeader", f, p)
		}
	}
}

// TestFrontWriteTimeout: a client that asks for a large answer and does
// not read it holds the connection no longer than the Write timeout: the
// server closes it with the answer short, the Front as net/http alone.
func TestFrontWriteTimeout(t *testing.T) {
	if testing.Short() {
		t.Skip("takes a second")
	}
	front, plain, _, _ := serveBoth(t, oddRoutes(closed()), Options{ReadHeader: time.Second, Idle: time.Second, Write: 300 * time.Millisecond})
	for _, addr := range []string{front, plain} {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		io.WriteString(c, req("/v/big"))
		time.Sleep(time.Second) // the Write timeout passes, the client reading nothing
		c.SetReadDeadline(time.Now().Add(5 * time.Second))
		n, err := io.Copy(io.Discard, c)
		t.Logf("%s (front %t): %d bytes, %v", addr, addr == front, n, err)
		if n >= bigBody || err != nil && !isReset(err) {
			t.Errorf("%s: read %d bytes of a %d-byte answer, %v: want it cut short by the Write timeout", addr, n, bigBody, err)
		}
	}
}

func isReset(err error) bool { return strings.Contains(err.Error(), "reset") }

// countingListener's connections count their SetWriteDeadline calls.
type countingListener struct {
	net.Listener
	n *atomic.Int64
}

func (l countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return countingConn{c, l.n}, nil
}

type countingConn struct {
	net.Conn
	n *atomic.Int64
}

func (c countingConn) SetWriteDeadline(t time.Time) error {
	c.n.Add(1)
	return c.Conn.SetWriteDeadline(t)
}

// TestWriteDeadlineShared: answers of a connection in a row share their
// write deadline (rounded up to writeDeadlineStep), set on the
// connection once, not once per answer.
func TestWriteDeadlineShared(t *testing.T) {
	lf, lp := listenPair(t)
	var sets atomic.Int64
	front, _, _, _ := serveBothOn(t, oddRoutes(closed()), Options{ReadHeader: time.Second, Idle: time.Second, Write: 10 * time.Second},
		countingListener{lf, &sets}, lp)
	const answers = 10
	got := exchangeN(t, front, strings.Repeat(req("/v/ok"), answers), answers)
	if got != answers {
		t.Fatalf("%d answers of %d", got, answers)
	}
	if n := sets.Load(); n == 0 || n >= answers {
		t.Fatalf("%d write deadlines set for %d pipelined answers: want them shared", n, answers)
	}
}

// exchangeN sends raw on a new connection and reads n answers.
func exchangeN(t *testing.T, addr, raw string, n int) int {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	io.WriteString(c, raw)
	br := bufio.NewReader(c)
	for i := range n {
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			return i
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	return n
}
