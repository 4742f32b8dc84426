package des

import (
	"testing"
	"time"
)

// Step runs one event at a time in time order, same-time events in the
// order they were scheduled, and moves the clock to each.
func TestLoopStep(t *testing.T) {
	var l Loop
	if l.Step() {
		t.Fatal("an empty loop ran an event")
	}
	var got []string
	at := func(d time.Duration, name string) { l.At(d, func() { got = append(got, name) }) }
	at(2*time.Second, "c")
	at(time.Second, "a")
	at(time.Second, "b")
	l.At(time.Second, func() { at(0, "now") }) // a past time runs at the current one
	var clock []time.Duration
	for l.Step() {
		clock = append(clock, l.Now())
	}
	if want := []string{"a", "b", "now", "c"}; len(got) != len(want) || got[0] != "a" || got[1] != "b" || got[2] != "now" || got[3] != "c" {
		t.Fatalf("order %v, want %v", got, want)
	}
	if clock[0] != time.Second || clock[len(clock)-1] != 2*time.Second || l.Pending() != 0 {
		t.Fatalf("clock %v, pending %d", clock, l.Pending())
	}
}
