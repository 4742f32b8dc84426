package model

import (
	"fmt"
	"time"
)

// Striped is RAID-0 over member models: stripe units rotate over the
// members, a request becomes one contiguous request per member it touches
// (all at the same time), and it completes when the last one does.
type Striped struct {
	name    string
	unit    int64
	members []Model
	size    int64
	busy    busyClock
	lastNow time.Duration
}

var _ Model = (*Striped)(nil)

// NewStriped stripes members with the given stripe unit in bytes.
func NewStriped(name string, unit int64, members ...Model) (*Striped, error) {
	if unit <= 0 || len(members) == 0 {
		return nil, fmt.Errorf("%w: striped %q: need a positive unit and members", ErrInvalidParams, name)
	}
	small := members[0].Size()
	for _, m := range members {
		small = min(small, m.Size())
	}
	size := small / unit * unit * int64(len(members))
	return &Striped{name: name, unit: unit, members: members, size: size}, nil
}

// Name returns the array's name.
func (s *Striped) Name() string { return s.name }

// Size returns the array's capacity.
func (s *Striped) Size() int64 { return s.size }

// Busy returns the time the array had a request outstanding up to now.
func (s *Striped) Busy(now time.Duration) time.Duration { return s.busy.at(now) }

// Submit splits r over the members and returns when the last part is done.
func (s *Striped) Submit(now time.Duration, r Request) time.Duration {
	now = max(now, s.lastNow)
	s.lastNow = now
	off, n, ok := clampRange(r.Offset, r.Length, s.size)
	if !ok {
		return now
	}
	done := now
	for i, m := range s.members {
		if lo, hi, ok := s.memberRange(i, off, off+n); ok {
			done = max(done, m.Submit(now, Request{Op: r.Op, Offset: lo, Length: hi - lo, Stream: r.Stream}))
		}
	}
	s.busy.add(now, done)
	return done
}

// memberRange returns the member-local byte range that array range
// [lo, hi) covers on member i: the pieces a contiguous range puts on one
// member are contiguous there.
func (s *Striped) memberRange(i int, lo, hi int64) (int64, int64, bool) {
	first := s.firstOn(i, lo)
	last := s.firstOn(i, hi) // member offset just past the range
	return first, last, last > first
}

// firstOn maps array offset x to the first member-local offset on member
// i at or after x.
func (s *Striped) firstOn(i int, x int64) int64 {
	k := int64(len(s.members))
	stripe, within := x/s.unit, x%s.unit
	row, col := stripe/k, stripe%k
	switch {
	case col == int64(i):
		return row*s.unit + within
	case col < int64(i):
		return row * s.unit
	default:
		return (row + 1) * s.unit
	}
}
