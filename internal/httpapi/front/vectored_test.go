package front

import (
	"net"
	"testing"
)

// The Front's answers go out in one writev(2): net.Buffers does that only
// for the net package's own connections, so the connection the Front
// writes to must be the socket itself, not the lingering wrapper around it.
func TestAnswersWriteToTheSocket(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		if c, err := net.Dial("tcp", ln.Addr().String()); err == nil {
			defer c.Close()
			c.Read(make([]byte, 1))
		}
	}()
	c, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	lc := linger(c)
	if _, ok := lc.(*lingerConn); !ok {
		t.Fatalf("linger(%T) = %T, want a lingering connection", c, lc)
	}
	if _, ok := vectored(lc).(*net.TCPConn); !ok {
		t.Fatalf("the Front writes its answers to a %T, not the socket: net.Buffers would write buffer by buffer", vectored(lc))
	}
}
