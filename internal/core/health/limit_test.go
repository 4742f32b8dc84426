package health

import (
	"testing"
	"time"
)

const ms = time.Millisecond

// window reports n reads of took each within the window starting at at,
// then asks Admit with inflight reads at the window's last instant, and
// returns the next window's start.
func window(l *Limit, at time.Duration, n int, took time.Duration) time.Duration {
	for i := range n {
		l.Done(took, at+time.Duration(i)*ms)
	}
	return at + l.o.Window
}

func TestLimitFallsWhenReadsWaitAndRisesWhenTheyDoNot(t *testing.T) {
	l := NewLimit(LimitOptions{Target: 50 * ms, Window: 100 * ms, Min: 4, Max: 64})
	if got := l.Report().Limit; got != 64 {
		t.Fatalf("starts at %d, want Max 64", got)
	}
	if !l.Admit(63, 0) || l.Admit(64, 0) {
		t.Fatal("at Max 64: 63 in flight admits one more, 64 does not")
	}

	// Reads taking 80 ms on average (over the 50 ms target): down by a
	// quarter each window, to Min and no lower.
	now := 100 * ms
	want := []int{48, 36, 27, 21, 16, 12, 9, 7, 6, 5, 4, 4}
	for i, w := range want {
		now = window(l, now, 10, 80*ms)
		l.Admit(0, now) // rolls the window
		if got := l.Report().Limit; got != w {
			t.Fatalf("slow window %d: limit %d, want %d", i, got, w)
		}
	}

	// Fast reads while nothing is turned away: the limit stays (no
	// evidence that more would be served in time).
	for range 5 {
		now = window(l, now, 10, 5*ms)
		l.Admit(0, now)
	}
	if got := l.Report().Limit; got != 4 {
		t.Fatalf("fast windows that turned none away: limit %d, want 4", got)
	}

	// Fast reads while the limit turns some away: up by an eighth, one
	// at least.
	want = []int{5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 18, 20}
	shedBefore := l.Report().Shed
	for i, w := range want {
		if l.Admit(l.Report().Limit, now) {
			t.Fatal("a read past the limit was admitted")
		}
		now = window(l, now, 10, 5*ms)
		l.Admit(0, now)
		if got := l.Report().Limit; got != w {
			t.Fatalf("fast window %d that turned one away: limit %d, want %d", i, got, w)
		}
	}
	if got := l.Report().Shed - shedBefore; got != uint64(len(want)) {
		t.Fatalf("shed %d, want %d", got, len(want))
	}

	// A window where reads are turned away but none ends (a device that
	// hangs): the limit stays.
	before := l.Report().Limit
	l.Admit(before, now)
	now += 100 * ms
	l.Admit(0, now)
	if got := l.Report().Limit; got != before {
		t.Fatalf("no read ended: limit %d, want %d", got, before)
	}
}

func TestLimitUpToMax(t *testing.T) {
	l := NewLimit(LimitOptions{Target: 50 * ms, Max: 10})
	now := time.Duration(0)
	for range 3 {
		now = window(l, now, 5, 100*ms)
		l.Admit(0, now)
	}
	for range 50 {
		l.Admit(l.Report().Limit, now)
		now = window(l, now, 5, 1*ms)
		l.Admit(0, now)
	}
	if got := l.Report().Limit; got != 10 {
		t.Fatalf("limit %d, want Max 10", got)
	}
}

func TestLimitOff(t *testing.T) {
	l := NewLimit(LimitOptions{Target: -1, Max: 4})
	now := time.Duration(0)
	for range 10 {
		now = window(l, now, 10, time.Second)
	}
	if !l.Admit(1000, now) {
		t.Fatal("a negative Target turns the limit off: every read admitted")
	}
	if r := l.Report(); r.Shed != 0 || r.Limit != 4 {
		t.Fatalf("report %+v, want limit 4 (Max) and nothing shed", r)
	}
}
