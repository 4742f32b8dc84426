package httpapi

import (
	"bufio"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// A request refused before its body is read is answered at once, and its
// connection closes soon after, whether the declared body never comes or
// comes whole: net/http reads and discards a small unread body (under
// 256 KiB) after the handler returns, whatever the answer's Connection
// field says, and held the connection of a body that never came until
// the read timeout (forever without one). A body that came is read, not
// left in the kernel, so the close does not reset the answer away.
func TestRefusedBodyCloses(t *testing.T) {
	ts := newTestAPI(t, testModule{name: "m"})
	a := New(Options{Logger: slog.New(slog.DiscardHandler)}) // no token: admin routes disabled
	if err := a.Mount(testModule{name: "m"}); err != nil {
		t.Fatal(err)
	}
	off := httptest.NewServer(a.Handler())
	t.Cleanup(off.Close)
	for _, c := range []struct {
		name, url, head, body string
		status                int
	}{
		{"no token", ts.URL, "POST /m HTTP/1.1\r\nHost: a\r\nContent-Length: 1000\r\n\r\n", "", 401},
		{"wrong token", ts.URL, "POST /m HTTP/1.1\r\nHost: a\r\nAuthorization: Bearer nope\r\nContent-Length: 1000\r\n\r\n", "", 401},
		{"chunked, no token", ts.URL, "POST /m HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n", "", 401},
		{"admin disabled", off.URL, "POST /m HTTP/1.1\r\nHost: a\r\nContent-Length: 1000\r\n\r\n", "", 403},
		{"body sent", ts.URL, "POST /m HTTP/1.1\r\nHost: a\r\nContent-Length: 1000\r\n\r\n", strings.Repeat("x", 1000), 401},
	} {
		conn, err := net.Dial("tcp", strings.TrimPrefix(c.url, "http://"))
		if err != nil {
			t.Fatal(err)
		}
		io.WriteString(conn, c.head+c.body)
		conn.SetReadDeadline(time.Now().Add(5 * time.Second))
		br := bufio.NewReader(conn)
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		_, err = io.Copy(io.Discard, resp.Body)
		if err != nil || resp.StatusCode != c.status || !resp.Close {
			t.Errorf("%s: %d, Connection: close %v, body %v; want %d, close", c.name, resp.StatusCode, resp.Close, err, c.status)
		}
		_, err = br.ReadByte()
		var ne net.Error
		switch {
		case errors.As(err, &ne) && ne.Timeout():
			t.Errorf("%s: the connection was still open 5 s after the %d", c.name, resp.StatusCode)
		case err != io.EOF:
			t.Errorf("%s: after the answer %v, want EOF (a clean close)", c.name, err)
		}
		conn.Close()
	}
}
