package feed

import (
	"errors"
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/strata-media/strata/internal/core/health"
	"github.com/strata-media/strata/internal/core/tier"
	"github.com/strata-media/strata/internal/storage/device"
	"github.com/strata-media/strata/internal/storage/store"
)

// TestClassify: device errors are failures by kind; a record that does not
// verify is the record's fault, not the device's.
func TestClassify(t *testing.T) {
	wrap := func(err error) error { return fmt.Errorf("store: reading: %w", err) }
	for _, c := range []struct {
		err    error
		kind   health.Kind
		failed bool
	}{
		{nil, 0, false},
		{wrap(store.ErrMismatch), 0, false},
		{wrap(tier.ErrCorrupt), 0, false},
		{wrap(fmt.Errorf("%w: %w", device.ErrInjected, syscall.ENOSPC)), health.NoSpace, true},
		{wrap(fmt.Errorf("%w: %w", device.ErrInjected, syscall.EIO)), health.IOError, true},
		{wrap(device.ErrInjected), health.IOError, true},
		{ErrDeadline, health.Timeout, true},
	} {
		if k, failed := classify(c.err); failed != c.failed || failed && k != c.kind {
			t.Errorf("classify(%v) = %s %v, want %s %v", c.err, k, failed, c.kind, c.failed)
		}
	}
}

// TestSlowWriteCounts: a write that succeeds after SlowWrite counts as a
// timeout; three in a row degrade writes, not reads.
func TestSlowWriteCounts(t *testing.T) {
	var now time.Duration
	h := NewHealth("test", HealthOptions{SlowWrite: time.Second, Now: func() time.Duration { return now }})
	for range 3 {
		h.written(false, 2*time.Second, nil)
	}
	h.written(false, time.Millisecond, errors.New("unused")) // a fourth failure, of kind io
	r := h.Report()
	if !r.Write.Degraded || r.Read.Degraded || r.Write.Errors["timeout"] != 3 || r.Write.Errors["io"] != 1 {
		t.Fatalf("%+v", r)
	}
	if ok, _ := h.Admit(health.Write); ok {
		t.Error("a degraded write admitted before the backoff")
	}
	now = 2 * time.Second
	ok, probe := h.Admit(health.Write)
	if !ok || !probe {
		t.Fatalf("no probe after the backoff: %v %v", ok, probe)
	}
	h.written(probe, time.Millisecond, nil)
	if r := h.Report(); r.Degraded || r.Write.Recoveries != 1 {
		t.Errorf("not recovered: %+v", r)
	}
}
