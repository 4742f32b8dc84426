package httpapitest

import (
	"io"
	"net"
	"sync"
)

// NotifyClose returns ln whose connections say on the channel returned,
// once each, when the server starts closing them (half-closes or closes,
// whichever comes first): a test can then read what the server sent
// before its close, the server having gone as far as it will.
func NotifyClose(ln net.Listener) (net.Listener, <-chan struct{}) {
	ch := make(chan struct{}, 64)
	return notifyListener{ln, ch}, ch
}

type notifyListener struct {
	net.Listener
	ch chan struct{}
}

func (l notifyListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &notifyConn{Conn: c, ch: l.ch}, nil
}

type notifyConn struct {
	net.Conn
	ch   chan struct{}
	once sync.Once
}

// notify says it once, if the channel has room (64 closes not taken).
func (c *notifyConn) notify() {
	c.once.Do(func() {
		select {
		case c.ch <- struct{}{}:
		default:
		}
	})
}

func (c *notifyConn) Close() error {
	err := c.Conn.Close()
	c.notify()
	return err
}

func (c *notifyConn) CloseWrite() error {
	var err error
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		err = cw.CloseWrite()
	}
	c.notify()
	return err
}

// ReadFrom keeps the connection's sendfile(2).
func (c *notifyConn) ReadFrom(r io.Reader) (int64, error) {
	if rf, ok := c.Conn.(io.ReaderFrom); ok {
		return rf.ReadFrom(r)
	}
	return io.Copy(struct{ io.Writer }{c.Conn}, r)
}
