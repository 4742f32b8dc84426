// Package wtrace records and reads traces of flash writes: one line per
// write with its time, place, size and lifetime class, so that the writes a
// live server issued can be replayed into the SSD model (strata serve
// --trace-writes, strata-lab sim streams).
package wtrace

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"sync"
	"time"
)

// ErrFormat reports a malformed trace line.
var ErrFormat = errors.New("wtrace: malformed trace")

// Header is the first line of a trace file.
const Header = "# strata write trace v1: time_ns device offset length class stream"

// A Record is one write.
type Record struct {
	// Time is when the write was issued, since the trace started.
	Time time.Duration
	// Device names the flash file or device written ("segments",
	// "files", "images-lsm", ...): each has its own address space.
	Device string
	Offset int64
	Length int64
	// Class is the write's lifetime class ("short", "medium", "long",
	// "extreme", or a finer name such as "lsm-l0"), as the writer
	// labelled it.
	Class string
	// Stream is the write stream the writer assigned (0 if none).
	Stream int
}

// Format renders r as one trace line, without the newline.
func (r Record) Format() string {
	return fmt.Sprintf("%d %s %d %d %s %d", r.Time.Nanoseconds(), r.Device, r.Offset, r.Length, r.Class, r.Stream)
}

// Parse parses one trace line.
func Parse(line string) (Record, error) {
	f := strings.Fields(line)
	if len(f) != 6 {
		return Record{}, fmt.Errorf("%w: %q has %d fields, want 6", ErrFormat, line, len(f))
	}
	var r Record
	var t int64
	var err error
	parse := func(s string, v *int64) {
		if err == nil {
			*v, err = strconv.ParseInt(s, 10, 64)
		}
	}
	parse(f[0], &t)
	parse(f[2], &r.Offset)
	parse(f[3], &r.Length)
	var st int64
	parse(f[5], &st)
	if err != nil || t < 0 || r.Offset < 0 || r.Length <= 0 || r.Offset > math.MaxInt64-r.Length || st < 0 {
		return Record{}, fmt.Errorf("%w: %q", ErrFormat, line)
	}
	r.Time, r.Device, r.Class, r.Stream = time.Duration(t), f[1], f[4], int(st)
	return r, nil
}

// A Writer appends records to a trace. It is safe for concurrent use.
type Writer struct {
	mu    sync.Mutex // protects w, start, err
	w     *bufio.Writer
	start time.Time
	err   error
}

// NewWriter starts a trace on w, timed from start.
func NewWriter(w io.Writer, start time.Time) *Writer {
	tw := &Writer{w: bufio.NewWriter(w), start: start}
	_, tw.err = tw.w.WriteString(Header + "\n")
	return tw
}

// Write records a write issued now.
func (t *Writer) Write(now time.Time, device string, off, n int64, class string, stream int) {
	if t == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.err != nil {
		return
	}
	r := Record{Time: now.Sub(t.start), Device: device, Offset: off, Length: n, Class: class, Stream: stream}
	_, t.err = t.w.WriteString(r.Format() + "\n")
}

// Flush writes buffered records out and returns the first error met.
func (t *Writer) Flush() error {
	if t == nil {
		return nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.err == nil {
		t.err = t.w.Flush()
	}
	return t.err
}

// Read calls fn for every record of a trace, skipping comment lines.
func Read(r io.Reader, fn func(Record) error) error {
	sc := bufio.NewScanner(r)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		rec, err := Parse(line)
		if err != nil {
			return fmt.Errorf("line %d: %w", n, err)
		}
		if err := fn(rec); err != nil {
			return err
		}
	}
	return sc.Err()
}
