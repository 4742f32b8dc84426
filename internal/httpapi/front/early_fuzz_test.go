package front

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzEarlyProblem: the rewriter of net/http's early answers never
// panics; what it rewrites is one of them (net/http's status line, its
// fields, then the status again or its reason), and the rewrite is a
// well-formed HTTP/1.1 response of the same status, bounded, whose
// problem body has the length it says and the reason as its detail; a
// write that does not start as an early answer is never rewritten. Built
// from a status and a reason, the early answer is always rewritten.
func FuzzEarlyProblem(f *testing.F) {
	f.Add([]byte("HTTP/1.1 431 Request Header Fields Too Large"+earlyHeaders+"431 Request Header Fields Too Large"), 400, "missing required Host header")
	f.Add([]byte("HTTP/1.1 400 Bad Request: bad"+earlyHeaders+"400 Bad Request: bad"), 501, "")
	f.Add([]byte("HTTP/1.1 501 Not Implemented"+earlyHeaders+"Unsupported transfer encoding"), 431, "x\r\ny")
	f.Add([]byte("HTTP/1.1 200 OK\r\n\r\n"), 599, "\"quoted\" \\ \x00")
	f.Fuzz(func(t *testing.T, p []byte, code int, reason string) {
		check := func(in []byte) (detail string, ok bool) {
			t.Helper()
			out, ok := earlyProblem(in)
			if !ok {
				if out != nil {
					t.Fatalf("not rewritten, yet %d bytes out", len(out))
				}
				return "", false
			}
			if !bytes.HasPrefix(in, []byte("HTTP/1.1 4")) && !bytes.HasPrefix(in, []byte("HTTP/1.1 5")) ||
				!bytes.Contains(in, []byte(earlyHeaders)) || len(in) > 4096 {
				t.Fatalf("rewrote %q, not an early answer", in)
			}
			// Bounded: JSON writes a byte of the reason as at most six
			// (\u0001, or \ufffd for a byte that is not UTF-8).
			if len(out) > 1024+6*len(in) {
				t.Fatalf("%d bytes out of %d in", len(out), len(in))
			}
			status, _ := strconv.Atoi(string(in[9:12]))
			resp, err := http.ReadResponse(bufio.NewReader(bytes.NewReader(out)), nil)
			if err != nil {
				t.Fatalf("rewrite of %q does not parse: %v\n%q", in, err, out)
			}
			body, err := io.ReadAll(resp.Body)
			var prob struct {
				Type, Title, Detail string
				Status              int
			}
			if err != nil || int64(len(body)) != resp.ContentLength || json.Unmarshal(body, &prob) != nil {
				t.Fatalf("rewrite of %q: body %q, Content-Length %d, %v", in, body, resp.ContentLength, err)
			}
			if resp.StatusCode != status || prob.Status != status || prob.Title != http.StatusText(status) ||
				resp.Header.Get("Content-Type") != "application/problem+json" || !resp.Close || prob.Detail == "" {
				t.Fatalf("rewrite of %q: %d %v %+v", in, resp.StatusCode, resp.Header, prob)
			}
			return prob.Detail, true
		}
		check(p)
		text := http.StatusText(code)
		if code < 400 || code > 599 || text == "" {
			return
		}
		line := strconv.Itoa(code) + " " + text
		if reason != "" {
			if strings.ContainsAny(reason, "\r\n") || len(reason) > 1024 {
				return
			}
			line += ": " + reason
		}
		detail, ok := check([]byte("HTTP/1.1 " + line + earlyHeaders + line))
		switch {
		case !ok:
			t.Fatalf("net/http's early answer %q not rewritten", line)
		case reason != "" && utf8.ValidString(reason) && detail != reason:
			t.Fatalf("detail %q, want the reason %q", detail, reason)
		}
	})
}
