// Package model is timing models of storage devices (hard disks and flash SSDs) in virtual time, shared by the simulator and the live server's emulated devices.
package model

import (
	"errors"
	"fmt"
	"time"
)

// ErrInvalidParams reports device parameters a model cannot be built from.
var ErrInvalidParams = errors.New("model: invalid parameters")

// Op is the kind of a Request.
type Op uint8

// The request kinds.
const (
	Read  Op = iota // read Length bytes at Offset
	Write           // write Length bytes at Offset
	Trim            // discard Length bytes at Offset (TRIM / UNMAP)
)

var opNames = [...]string{"read", "write", "trim"}

// String returns "read", "write" or "trim".
func (o Op) String() string {
	if int(o) < len(opNames) {
		return opNames[o]
	}
	return fmt.Sprintf("op(%d)", uint8(o))
}

// A Request is one I/O submitted to a Model.
type Request struct {
	Op     Op
	Offset int64 // bytes from the start of the device
	Length int64 // bytes
	// Stream is the write stream of a Write, for multi-streamed SSDs
	// (multi-streamed SSD §3): 0 is the default stream. Models without
	// streams, and SSDs asked for a stream they do not have, use 0.
	Stream int
}

// A Model is a storage device in virtual time. Requests are submitted in
// nondecreasing now (an earlier now is treated as the latest one seen); the
// model queues each one the way the device would (one head for a disk,
// per-die timelines for an SSD, so a read to an idle die overlaps a long
// write elsewhere) and returns its completion time. Parts of a request
// beyond Size are ignored. A Model is not safe for concurrent use.
type Model interface {
	// Submit queues r at virtual time now and returns when it completes.
	Submit(now time.Duration, r Request) (done time.Duration)
	// Size is the capacity in bytes.
	Size() int64
	// Busy is the cumulative time up to now during which at least one
	// submitted request was outstanding, like Linux's io_ticks.
	Busy(now time.Duration) time.Duration
	// Name names the device, e.g. "ocz-core-v2".
	Name() string
}

// busyClock accumulates the union of [submit, done] intervals whose starts
// arrive in nondecreasing order: io_ticks for a model.
type busyClock struct {
	total      time.Duration // closed intervals
	start, end time.Duration // the open interval
	open       bool
}

// add records that a request was outstanding over [start, done].
func (b *busyClock) add(start, done time.Duration) {
	if b.open && start <= b.end {
		b.end = max(b.end, done)
		return
	}
	if b.open {
		b.total += b.end - b.start
	}
	b.start, b.end, b.open = start, done, true
}

// at returns the busy time accumulated up to now.
func (b *busyClock) at(now time.Duration) time.Duration {
	t := b.total
	if b.open && now > b.start {
		t += min(now, b.end) - b.start
	}
	return t
}

// xferTime is the time to move n bytes at rate bytes per second.
func xferTime(n int64, rate float64) time.Duration {
	if rate <= 0 || n <= 0 {
		return 0
	}
	return time.Duration(float64(n) / rate * float64(time.Second))
}

// clampRange cuts [off, off+n) to [0, size) and reports whether anything
// is left.
func clampRange(off, n, size int64) (int64, int64, bool) {
	off = max(off, 0)
	end := min(off+max(n, 0), size)
	if end <= off {
		return off, 0, false
	}
	return off, end - off, true
}
