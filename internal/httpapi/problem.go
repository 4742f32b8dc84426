package httpapi

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"
	"unicode/utf8"
)

// ProblemType is the media type of every error body (RFC 9457).
const ProblemType = "application/problem+json"

// A Problem is an RFC 9457 problem details body, the one error format of
// every route.
type Problem struct {
	// Type is a URI naming the kind of problem; "about:blank" says the
	// status code is all there is to know (RFC 9457 §4.2.1).
	Type string `json:"type"`
	// Title is the status code's text.
	Title string `json:"title"`
	// Status is the HTTP status code.
	Status int `json:"status"`
	// Detail explains this occurrence, for a person.
	Detail string `json:"detail,omitempty"`
}

// MaxDetail bounds a problem's detail, bytes, so that no error echoes
// unbounded client input.
const MaxDetail = 512

// MaxID bounds a client-supplied id quoted in a detail, bytes.
const MaxID = 64

// RetryAfter is the Retry-After of every 503 (Error sets it unless the
// handler did): a store that cannot be reached, a node shutting down, a
// stream that cannot be admitted, an image replaced while it was read.
// Long enough for a restarting store, short enough for a player's retry.
const RetryAfter = 5 * time.Second

// retryAfter is RetryAfter as the field's value, in seconds.
var retryAfter = []string{strconv.Itoa(int(RetryAfter / time.Second))}

// Error writes a problem with status and detail, never cached; a 503 says
// when to retry (RetryAfter). Details of 5xx errors should not carry
// internal state (paths, device errors): the caller logs those and says
// what failed in general terms.
func Error(w http.ResponseWriter, status int, detail string) {
	p := Problem{Type: "about:blank", Title: http.StatusText(status), Status: status, Detail: Clip(detail, MaxDetail)}
	h := w.Header()
	if status == http.StatusServiceUnavailable && h.Get("Retry-After") == "" {
		h["Retry-After"] = retryAfter
	}
	h.Del("Content-Length")
	h.Del("Content-Encoding")
	h.Del("ETag")
	h.Del("Last-Modified")
	h.Set("Content-Type", ProblemType)
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	writeIndented(w, p) //nolint:errcheck // the status is sent
}

// Clip returns s cut to at most max bytes on a rune boundary, with "..."
// appended when it was cut: for ids and other client input quoted in a
// detail.
func Clip(s string, max int) string {
	if len(s) <= max {
		return s
	}
	cut := max - 3
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "..."
}

// ClipID is Clip(id, MaxID).
func ClipID(id string) string { return Clip(id, MaxID) }

// ErrNotProblem reports a response that is not a well-formed problem.
var ErrNotProblem = errors.New("httpapi: not a problem details response")

// ReadProblem decodes the problem of an error response whose body has
// been read, and checks it is one: the media type, the status it
// repeats, a title and a bounded detail.
func ReadProblem(resp *http.Response, body []byte) (Problem, error) {
	var p Problem
	if ct := resp.Header.Get("Content-Type"); ct != ProblemType {
		return p, fmt.Errorf("%w: status %d, Content-Type %q", ErrNotProblem, resp.StatusCode, ct)
	}
	if err := json.Unmarshal(body, &p); err != nil {
		return p, fmt.Errorf("%w: %v", ErrNotProblem, err)
	}
	if p.Status != resp.StatusCode || p.Type == "" || p.Title == "" || len(p.Detail) > MaxDetail {
		return p, fmt.Errorf("%w: %+v for status %d", ErrNotProblem, p, resp.StatusCode)
	}
	return p, nil
}
