package edge

import (
	"context"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// logRecorder is a slog.Handler keeping the records it gets.
type logRecorder struct {
	mu   sync.Mutex
	recs []slog.Record
}

func (l *logRecorder) Enabled(context.Context, slog.Level) bool { return true }
func (l *logRecorder) WithAttrs([]slog.Attr) slog.Handler       { return l }
func (l *logRecorder) WithGroup(string) slog.Handler            { return l }
func (l *logRecorder) Handle(_ context.Context, r slog.Record) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.recs = append(l.recs, r.Clone())
	return nil
}

// take returns the records with message msg logged since the last take,
// each as its attributes (values as text), and forgets every record.
func (l *logRecorder) take(msg string) []map[string]string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []map[string]string
	for _, r := range l.recs {
		if r.Message != msg {
			continue
		}
		m := map[string]string{"level": r.Level.String()}
		r.Attrs(func(a slog.Attr) bool { m[a.Key] = a.Value.String(); return true })
		out = append(out, m)
	}
	l.recs = nil
	return out
}

// brokenUpstream makes path of f's upstream answer normally (uncacheable,
// so that every request reaches it) until down is set, then drop the
// connection without an answer.
func brokenUpstream(f *fixture, path string, down *atomic.Bool) {
	f.up.handle(path, func(w http.ResponseWriter, r *http.Request) {
		if down.Load() {
			c, _, err := http.NewResponseController(w).Hijack()
			if err == nil {
				c.Close()
			}
			return
		}
		w.Write([]byte("ok"))
	}, "Cache-Control", "no-store")
}

// An upstream that starts failing is logged once with the cause, again
// at most once per LogInterval with the count of what was left out, and
// its recovery once; a failure and recovery inside the interval are only
// counted.
func TestUpstreamFailureLog(t *testing.T) {
	rec := &logRecorder{}
	f := newFixture(t, func(o *Options) { o.Logger = slog.New(rec); o.Attempts = 1 })
	var down atomic.Bool
	brokenUpstream(f, "/media/x", &down)
	if r := f.get("/cdn/x"); r.status != 200 {
		t.Fatalf("status %d", r.status)
	}
	down.Store(true)
	for range 3 {
		if r := f.get("/cdn/x"); r.status != 502 {
			t.Fatalf("upstream down: status %d", r.status)
		}
	}
	w := rec.take("edge upstream failing")
	if len(w) != 1 || w[0]["level"] != "WARN" || w[0]["prefix"] != "/cdn/" || w[0]["failures"] != "1" ||
		!strings.Contains(w[0]["err"], "upstream failed") || !strings.HasPrefix(w[0]["upstream"], f.up.srv.URL) {
		t.Fatalf("warnings for 3 failures: %v", w)
	}
	f.clock.Advance(DefaultLogInterval)
	f.get("/cdn/x")
	if w := rec.take("edge upstream failing"); len(w) != 1 || w[0]["failures"] != "4" || w[0]["suppressed"] != "2" ||
		w[0]["failing_for"] != "10s" {
		t.Fatalf("warning after the interval: %v", w)
	}
	down.Store(false)
	f.clock.Advance(time.Second)
	f.get("/cdn/x")
	f.get("/cdn/x")
	if r := rec.take("edge upstream recovered"); len(r) != 1 || r[0]["level"] != "INFO" || r[0]["failures"] != "4" || r[0]["down_for"] != "11s" {
		t.Fatalf("recovery: %v", r)
	}
	// A flap inside the interval: counted, not logged.
	down.Store(true)
	f.get("/cdn/x")
	down.Store(false)
	f.get("/cdn/x")
	if l := len(rec.take("edge upstream failing")) + len(rec.take("edge upstream recovered")); l != 0 {
		t.Fatalf("%d lines for a flap inside the interval", l)
	}
	f.clock.Advance(DefaultLogInterval)
	down.Store(true)
	f.get("/cdn/x")
	if w := rec.take("edge upstream failing"); len(w) != 1 || w[0]["suppressed"] != "2" || w[0]["failures"] != "1" {
		t.Fatalf("warning after a flap: %v", w)
	}
}
