// Package progress is the one shape of progress output of Strata's
// long-running lab tools (the simulators, the offline replays, the
// benchmarks' searches): a line on standard error per step, stamped with
// the seconds since the run began,
//
//	[   12s] fig7: reinsert at 120 req/s: 0 misses
//
// so that a slow step shows in the stamps and parallel jobs' lines stay
// whole.
package progress

import (
	"bytes"
	"fmt"
	"io"
	"sync"
	"time"
)

// A Func reports one step, as fmt.Sprintf's format and arguments; a nil
// Func reports nothing (see Discard).
type Func func(format string, args ...any)

// To returns a Func that writes each step to w on a line of its own,
// stamped with the seconds since To was called. It is safe for concurrent
// use: lines of parallel jobs never interleave.
func To(w io.Writer) Func {
	start := time.Now()
	var mu sync.Mutex
	return func(format string, args ...any) {
		line := fmt.Sprintf("[%5.0fs] %s\n", time.Since(start).Seconds(), fmt.Sprintf(format, args...))
		mu.Lock()
		defer mu.Unlock()
		io.WriteString(w, line)
	}
}

// Discard reports nothing.
func Discard(string, ...any) {}

// Writer is an io.Writer that reports each line written to it as one
// step of f, for code that logs to a writer.
func Writer(f Func) io.Writer { return &lineWriter{f: f} }

type lineWriter struct {
	mu  sync.Mutex
	f   Func
	buf []byte
}

func (w *lineWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf = append(w.buf, p...)
	for {
		i := bytes.IndexByte(w.buf, '\n')
		if i < 0 {
			return len(p), nil
		}
		w.f("%s", w.buf[:i])
		w.buf = w.buf[i+1:]
	}
}
