package device

import (
	"testing"
	"testing/synctest"
	"time"
)

// A FractionBusy accrues its fraction of the time passed, and a change
// applies from the moment it is made.
func TestFractionBusy(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := NewFractionBusy(0.5)
		b.Busy()
		time.Sleep(4 * time.Second)
		b.Set(0.25)
		time.Sleep(4 * time.Second)
		if got, _ := b.Busy(); got != 3*time.Second {
			t.Fatalf("busy %v after 4 s at 50%% and 4 s at 25%%, want 3s", got)
		}
		e := NewEpoch(b, time.Second)
		e.Tick(time.Now())
		time.Sleep(time.Second)
		if u, _ := e.Tick(time.Now()); u != 0.25 {
			t.Fatalf("epoch utilization %.3f, want 0.25", u)
		}
	})
}
