package front

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// What net/http answers itself (a header too large, a request it cannot
// parse, a transfer coding it does not implement) reaches the client as
// an RFC 9457 problem of the same status, on the Front and on net/http
// alone, and the connection still closes after it.
func TestEarlyAnswersAreProblems(t *testing.T) {
	front, plain, _, _ := serveBoth(t, oddRoutes(closed()), Options{ReadHeader: 5 * time.Second, Idle: time.Second, Write: time.Second})
	cases := []struct {
		name, raw string
		code      int
		detail    string
	}{
		{"431", "GET /v/ok HTTP/1.1\r\nHost: a\r\nX-A: " + strings.Repeat("b", 1<<20+8<<10) + "\r\n\r\n", 431, "larger than the server accepts"},
		{"400 with a reason", "GET /v/ok HTTP/1.1\r\n\r\n", 400, "missing required Host header"},
		{"400", "GET /v/ok HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", 400, "not valid HTTP/1.1"},
		{"501", "GET /v/ok HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: gzip\r\n\r\n", 501, "transfer coding"},
	}
	for _, c := range cases {
		for _, addr := range []string{front, plain} {
			got := wire(t, addr, c.raw)
			resp, err := http.ReadResponse(bufio.NewReader(strings.NewReader(got)), nil)
			if err != nil {
				t.Fatalf("%s, front %t: %v in %.200q", c.name, addr == front, err, got)
			}
			body, err := io.ReadAll(resp.Body)
			var p struct {
				Type, Title, Detail string
				Status              int
			}
			if err != nil || json.Unmarshal(body, &p) != nil {
				t.Fatalf("%s, front %t: %v %q", c.name, addr == front, err, body)
			}
			if resp.StatusCode != c.code || resp.Header.Get("Content-Type") != "application/problem+json" || !resp.Close ||
				p.Status != c.code || p.Title != http.StatusText(c.code) || p.Type != "about:blank" || !strings.Contains(p.Detail, c.detail) {
				t.Errorf("%s, front %t: %d %v %+v", c.name, addr == front, resp.StatusCode, resp.Header, p)
			}
		}
	}
}

// Only net/http's own early answers are rewritten: a handler's answer
// with the same status and text goes out as the handler wrote it.
func TestEarlyProblemMatchesOnlyNetHTTP(t *testing.T) {
	for _, p := range []string{
		"HTTP/1.1 431 Request Header Fields Too Large\r\nConnection: close\r\nContent-Type: text/plain; charset=utf-8\r\nDate: x\r\n\r\n431 Request Header Fields Too Large",
		"HTTP/1.1 200 OK" + earlyHeaders + "200 OK",
		"HTTP/1.1 400 Bad Request" + earlyHeaders + "something else",
		"HTTP/1.1 ",
		"HTTP/1.1 4",
	} {
		if _, ok := earlyProblem([]byte(p)); ok {
			t.Errorf("rewrote %q", p)
		}
	}
	if _, ok := earlyProblem([]byte("HTTP/1.1 431 Request Header Fields Too Large" + earlyHeaders + "431 Request Header Fields Too Large")); !ok {
		t.Error("net/http's 431 not rewritten")
	}
}
