package front

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"
	"time"
)

// net/http answers a request it cannot read (a header larger than its
// MaxHeaderBytes, a malformed request line or field, a transfer coding
// it does not implement) itself, before any handler, as text/plain, in
// one write to the connection (conn.serve in net/http's server.go):
//
//	"HTTP/1.1 " + status [": " + reason] + earlyHeaders + status [": " + reason]
//
// (for a 501, the text "Unsupported transfer encoding"). Every other
// error of Strata's is an RFC 9457 problem, so the connections of
// Lingering (every plain HTTP/1.1 connection of the node's, the Front's
// or net/http's alone) rewrite that write into a problem of the same
// status: earlyProblem. Over TLS net/http writes to its *tls.Conn, which
// no wrapper can stand in for, and those answers stay net/http's text.
const earlyHeaders = "\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n"

// earlyDetails are the details of net/http's early answers that give no
// reason of their own.
var earlyDetails = map[int]string{
	http.StatusRequestHeaderFieldsTooLarge: "the request's header fields are larger than the server accepts",
	http.StatusBadRequest:                  "the request is not valid HTTP/1.1",
	http.StatusNotImplemented:              "the request's transfer coding is not supported",
}

// earlyProblem returns the problem answer that replaces p if p is one of
// net/http's early text answers (earlyHeaders), and false for any other
// write. A handler's answer never matches: net/http writes its fields
// sorted, Connection before Content-Type, and with a Date.
func earlyProblem(p []byte) ([]byte, bool) {
	rest, ok := bytes.CutPrefix(p, []byte("HTTP/1.1 "))
	if !ok || len(rest) < 5 || len(p) > 4096 || rest[0] != '4' && rest[0] != '5' {
		return nil, false // the common case: an answer of a handler's
	}
	i := bytes.IndexByte(rest, '\r')
	if i < 4 || rest[3] != ' ' || !bytes.HasPrefix(rest[i:], []byte(earlyHeaders)) {
		return nil, false
	}
	status, body := rest[:i], rest[i+len(earlyHeaders):]
	code, err := strconv.Atoi(string(status[:3]))
	text := http.StatusText(code)
	if err != nil || code < 400 || code > 599 || text == "" {
		return nil, false
	}
	detail := earlyDetails[code]
	switch line := string(status[4:]); {
	case line == text && (string(body) == string(status) ||
		code == http.StatusNotImplemented && string(body) == "Unsupported transfer encoding"):
	case len(line) > len(text)+2 && line[:len(text)+2] == text+": " && string(body) == string(status):
		detail = line[len(text)+2:] // net/http's reason: "missing required Host header"
	default:
		return nil, false
	}
	if detail == "" {
		detail = text
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent("", "  ") // as every problem of the API's (httpapi.Error)
	enc.Encode(struct {     //nolint:errcheck // strings and an int
		Type   string `json:"type"`
		Title  string `json:"title"`
		Status int    `json:"status"`
		Detail string `json:"detail"`
	}{"about:blank", text, code, detail})
	out := make([]byte, 0, 256+b.Len())
	out = append(out, "HTTP/1.1 "...)
	out = strconv.AppendInt(out, int64(code), 10)
	out = append(out, ' ')
	out = append(out, text...)
	out = append(out, "\r\nCache-Control: no-store\r\nConnection: close\r\nContent-Length: "...)
	out = strconv.AppendInt(out, int64(b.Len()), 10)
	out = append(out, "\r\nContent-Type: application/problem+json\r\nX-Content-Type-Options: nosniff\r\nDate: "...)
	out = time.Now().UTC().AppendFormat(out, http.TimeFormat)
	out = append(out, "\r\n\r\n"...)
	return append(out, b.Bytes()...), true
}
