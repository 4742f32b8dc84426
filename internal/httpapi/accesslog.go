package httpapi

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"sync"
	"time"

	"github.com/strata-media/strata/internal/httpapi/front"
)

// An AccessLog writes one JSON line per request, in the flat shape log
// shippers (Filebeat, Vector, Fluent Bit, Loki's promtail) parse without
// configuration:
//
//	{"time":"2026-11-24T01:02:03.456Z","remote_addr":"10.0.0.7:51234","method":"GET",
//	 "path":"/videos/t/700k/1.m4s","proto":"HTTP/1.1","status":200,"bytes":524288,
//	 "duration_ms":1.73,"tier":"ssd","upstream_ms":0.9,"request_id":"a1b2",
//	 "user_agent":"curl/8.5.0","referer":""}
//
// tier is the X-Strata-Tier of the response (ram, ssd, origin, flash,
// disk, upstream...), cache the edge's X-Strata-Cache (HIT, MISS, STALE,
// REVALIDATED, PASS...), upstream_ms the time the request waited for the
// capacity tier or an edge upstream (NoteUpstream), present only when it
// did, upstream_status the status of the last upstream response and
// upstream_bytes the body bytes received from upstreams for it
// (NoteUpstreamResponse, NoteUpstreamBytes); request_id is the request's
// X-Request-Id, if any. The query string is never logged: it may carry a
// signature. A file is opened for appending, so that logrotate's
// copytruncate and a rename followed by Reopen both work.
//
// SetFormat(AccessLogCombined) writes the "combined" text format of
// Apache and nginx instead, the fields above that it lacks appended as
// key=value pairs (see appendCombined).
type AccessLog struct {
	path   string // "" or "-": standard output, never reopened
	now    func() time.Time
	format string // AccessLogJSON or AccessLogCombined

	mu struct {
		sync.Mutex
		w io.Writer
		f *os.File // nil for standard output
	}
}

// OpenAccessLog opens the access log at path: "-" for w (standard output
// in strata serve), else a file created 0640 if missing and appended to.
func OpenAccessLog(path string, stdout io.Writer) (*AccessLog, error) {
	l := &AccessLog{path: path, now: time.Now, format: AccessLogJSON}
	if path == "-" || path == "" {
		l.mu.w = stdout
		return l, nil
	}
	f, err := openAppend(path)
	if err != nil {
		return nil, err
	}
	l.mu.w, l.mu.f = f, f
	return l, nil
}

func openAppend(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o640)
	if err != nil {
		return nil, fmt.Errorf("httpapi: access log: %w", err)
	}
	return f, nil
}

// Reopen closes the log file and opens path again: after logrotate renamed
// it (the SIGHUP handler calls it). Standard output is left alone. Lines
// being written meanwhile go to one file or the other, never half to each.
func (l *AccessLog) Reopen() error {
	if l.path == "-" || l.path == "" {
		return nil
	}
	f, err := openAppend(l.path)
	if err != nil {
		return err
	}
	l.mu.Lock()
	old := l.mu.f
	l.mu.w, l.mu.f = f, f
	l.mu.Unlock()
	return old.Close()
}

// Close closes the log file.
func (l *AccessLog) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.mu.f == nil {
		return nil
	}
	err := l.mu.f.Close()
	l.mu.f, l.mu.w = nil, io.Discard
	return err
}

// AccessEntry is one line of the access log.
type AccessEntry struct {
	Time       time.Time `json:"time"`
	RemoteAddr string    `json:"remote_addr"`
	Method     string    `json:"method"`
	Path       string    `json:"path"`
	Proto      string    `json:"proto"`
	Status     int       `json:"status"`
	Bytes      int64     `json:"bytes"`
	DurationMS float64   `json:"duration_ms"`
	Tier       string    `json:"tier,omitempty"`
	Cache      string    `json:"cache,omitempty"`
	UpstreamMS *float64  `json:"upstream_ms,omitempty"`
	// UpstreamStatus is the status of the last upstream response, 0
	// (left out) when none came.
	UpstreamStatus int `json:"upstream_status,omitempty"`
	// UpstreamBytes are the body bytes received from upstreams, present
	// when the request reached one.
	UpstreamBytes *int64 `json:"upstream_bytes,omitempty"`
	RequestID     string `json:"request_id,omitempty"`
	UserAgent     string `json:"user_agent,omitempty"`
	Referer       string `json:"referer,omitempty"`
}

// Handler wraps h so that every request it answers is logged when it
// ends, its status and the bytes of its body as they went to the client
// (compressed, if compressed after h).
func (l *AccessLog) Handler(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := l.now()
		t := &upstreamTimer{}
		rw := &front.CountingWriter{ResponseWriter: w}
		defer func() { l.write(l.entry(r, rw.Header(), rw.Status, rw.Bytes, t, start)) }()
		h.ServeHTTP(rw, r.WithContext(context.WithValue(r.Context(), upstreamKey{}, t)))
	})
}

// StatusClientGone is the status the access log gives a request whose
// client went away before anything was answered (nginx's 499): none was
// sent.
const StatusClientGone = 499

// entry describes the request r answered with status, the header h and
// n bytes of body.
func (l *AccessLog) entry(r *http.Request, h http.Header, status int, n int64, t *upstreamTimer, start time.Time) AccessEntry {
	switch {
	case status == 0 && ClientGone(r):
		status = StatusClientGone // aborted (AbortIfGone): nothing was sent
	case status == 0:
		status = http.StatusOK // a handler that wrote nothing
	}
	e := AccessEntry{Time: start.UTC(), RemoteAddr: r.RemoteAddr, Method: r.Method, Path: r.URL.EscapedPath(),
		Proto: r.Proto, Status: status, Bytes: n, DurationMS: ms(l.now().Sub(start)),
		Tier: h.Get("X-Strata-Tier"), Cache: Clip(h.Get("X-Strata-Cache"), 32), RequestID: Clip(r.Header.Get("X-Request-Id"), 128),
		UserAgent: Clip(r.UserAgent(), 256), Referer: Clip(r.Referer(), 256)}
	e.Path = Clip(e.Path, 1024)
	if d, ok := t.total(); ok {
		v := ms(d)
		e.UpstreamMS = &v
	}
	if u := t.upstream(); u.reached {
		e.UpstreamStatus = u.status
		e.UpstreamBytes = &u.bytes
	}
	return e
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// write appends e as one line, in one write.
func (l *AccessLog) write(e AccessEntry) {
	var b []byte
	if l.format == AccessLogCombined {
		b = appendCombined(nil, &e)
	} else {
		var err error
		if b, err = json.Marshal(e); err != nil {
			return // cannot happen: strings and numbers only
		}
	}
	b = append(b, '\n')
	l.mu.Lock()
	defer l.mu.Unlock()
	l.mu.w.Write(b) //nolint:errcheck // a full disk must not fail requests
}

// frontLog is an AccessLog as the Front logs to it (front.AccessLog).
type frontLog struct{ l *AccessLog }

func (f frontLog) Timer(ctx context.Context) (context.Context, front.Timer) {
	t := &upstreamTimer{}
	return context.WithValue(ctx, upstreamKey{}, t), t
}

func (f frontLog) Log(r *http.Request, h http.Header, status int, n int64, t front.Timer, start time.Time) {
	f.l.write(f.l.entry(r, h, status, n, t.(*upstreamTimer), start))
}

// upstreamKey is the context key of a request's *upstreamTimer.
type upstreamKey struct{}

// upstreamTimer sums the time a request waited for an upstream, and
// what the upstream answered.
type upstreamTimer struct {
	mu  sync.Mutex
	d   time.Duration
	set bool
	up  upstreamNote
}

// upstreamNote is what a request got from edge upstreams.
type upstreamNote struct {
	reached bool  // an upstream answered or was tried
	status  int   // the last response's status; 0 for none
	bytes   int64 // body bytes received
}

func (t *upstreamTimer) upstream() upstreamNote {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.up
}

// Reset forgets what was recorded: the Front's connections reuse one
// timer from one request to the next.
func (t *upstreamTimer) Reset() {
	t.mu.Lock()
	t.d, t.set, t.up = 0, false, upstreamNote{}
	t.mu.Unlock()
}

func (t *upstreamTimer) total() (time.Duration, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.d, t.set
}

// NoteUpstream records, for the access log of the request of ctx, that it
// waited d for the capacity tier (an origin read) or an edge upstream.
// Without an access log it does nothing.
func NoteUpstream(ctx context.Context, d time.Duration) {
	t, ok := ctx.Value(upstreamKey{}).(*upstreamTimer)
	if !ok {
		return
	}
	t.mu.Lock()
	t.d += d
	t.set = true
	t.mu.Unlock()
}

// NoteUpstreamResponse records, for the access log of the request of ctx,
// that an edge upstream answered it with status (0: no answer: refused,
// reset, timed out). The last one is logged. Without an access log it
// does nothing.
func NoteUpstreamResponse(ctx context.Context, status int) {
	t, ok := ctx.Value(upstreamKey{}).(*upstreamTimer)
	if !ok {
		return
	}
	t.mu.Lock()
	t.up.reached, t.up.status = true, status
	t.mu.Unlock()
}

// NoteUpstreamBytes records, for the access log of the request of ctx,
// that n body bytes of an edge upstream's response were received for it.
func NoteUpstreamBytes(ctx context.Context, n int64) {
	t, ok := ctx.Value(upstreamKey{}).(*upstreamTimer)
	if !ok {
		return
	}
	t.mu.Lock()
	t.up.reached = true
	t.up.bytes += n
	t.mu.Unlock()
}
