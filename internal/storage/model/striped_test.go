package model

import (
	"math/rand/v2"
	"testing"
	"time"
)

// recorder is a Model that records what it is asked and takes 1 ms per
// request.
type recorder struct {
	size int64
	reqs []Request
}

func (r *recorder) Submit(now time.Duration, q Request) time.Duration {
	r.reqs = append(r.reqs, q)
	return now + time.Millisecond
}
func (r *recorder) Size() int64                      { return r.size }
func (r *recorder) Busy(time.Duration) time.Duration { return 0 }
func (r *recorder) Name() string                     { return "recorder" }

// TestStripedSplit checks the split against a byte-by-byte mapping.
func TestStripedSplit(t *testing.T) {
	const unit, k = 16, 3
	members := make([]Model, k)
	recs := make([]*recorder, k)
	for i := range members {
		recs[i] = &recorder{size: 1000}
		members[i] = recs[i]
	}
	s, err := NewStriped("t", unit, members...)
	if err != nil {
		t.Fatal(err)
	}
	if want := int64(1000 / unit * unit * k); s.Size() != want {
		t.Fatalf("size %d, want %d", s.Size(), want)
	}
	rng := rand.New(rand.NewPCG(1, 1))
	for range 500 {
		off := rng.Int64N(s.Size())
		n := 1 + rng.Int64N(min(200, s.Size()-off))
		for _, r := range recs {
			r.reqs = r.reqs[:0]
		}
		s.Submit(0, Request{Op: Read, Offset: off, Length: n})
		checkSplit(t, recs, unit, off, n)
	}
}

// checkSplit compares the members' requests with where each byte goes.
func checkSplit(t *testing.T, recs []*recorder, unit, off, n int64) {
	t.Helper()
	k := int64(len(recs))
	lo, hi := make([]int64, k), make([]int64, k)
	for i := range lo {
		lo[i], hi[i] = -1, -1
	}
	for x := off; x < off+n; x++ {
		stripe := x / unit
		m, local := stripe%k, (stripe/k)*unit+x%unit
		if lo[m] < 0 {
			lo[m] = local
		}
		hi[m] = local + 1
	}
	for i, r := range recs {
		switch {
		case lo[i] < 0 && len(r.reqs) != 0:
			t.Fatalf("[%d,+%d): member %d got %v, want nothing", off, n, i, r.reqs)
		case lo[i] >= 0 && (len(r.reqs) != 1 || r.reqs[0].Offset != lo[i] || r.reqs[0].Length != hi[i]-lo[i]):
			t.Fatalf("[%d,+%d): member %d got %v, want [%d,%d)", off, n, i, r.reqs, lo[i], hi[i])
		}
	}
}

// TestBusyClock checks io_ticks semantics: the union of the intervals a
// request was outstanding, queried at nondecreasing times.
func TestBusyClock(t *testing.T) {
	var b busyClock
	steps := []struct{ start, done, now, want time.Duration }{
		{0, 10, 5, 5},     // within the first request
		{5, 8, 10, 10},    // nested: no double counting
		{9, 20, 25, 20},   // extends the busy period; idle after 20
		{30, 35, 32, 22},  // a new period
		{33, 40, 100, 30}, // overlapping it
	}
	for _, s := range steps {
		b.add(s.start, s.done)
		if got := b.at(s.now); got != s.want {
			t.Errorf("after [%d,%d]: busy at %d = %d, want %d", s.start, s.done, s.now, got, s.want)
		}
	}
}
