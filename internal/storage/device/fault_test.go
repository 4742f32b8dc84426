package device

import (
	"bytes"
	"errors"
	"sync"
	"syscall"
	"testing"
	"time"
)

const blk = 4096

func newTestFault() (*Fault, *Mem) {
	m := NewMem(1<<20, blk)
	return NewFault(m), m
}

// ops runs one read, write, trim and sync at off and returns which failed
// with ErrInjected.
func ops(t *testing.T, f *Fault, off int64) Op {
	t.Helper()
	var failed Op
	buf := make([]byte, blk)
	note := func(op Op, err error) {
		switch {
		case errors.Is(err, ErrInjected):
			failed |= op
		case err != nil:
			t.Fatalf("%s: unexpected error %v", op, err)
		}
	}
	_, err := f.ReadAt(buf, off)
	note(OpRead, err)
	_, err = f.WriteAt(buf, off)
	note(OpWrite, err)
	note(OpTrim, f.Trim(off, blk))
	note(OpSync, f.Sync())
	return failed
}

func TestFaultFailAll(t *testing.T) {
	f, _ := newTestFault()
	if got := ops(t, f, 0); got != 0 {
		t.Fatalf("fresh Fault injected %s", got)
	}
	f.FailAll(OpRead | OpSync)
	for range 3 {
		if got := ops(t, f, 0); got != OpRead|OpSync {
			t.Fatalf("failed %s, want read|sync", got)
		}
	}
	if f.Injected() != 6 {
		t.Errorf("Injected = %d", f.Injected())
	}
	f.Reset()
	if got := ops(t, f, 0); got != 0 {
		t.Fatalf("after Reset, failed %s", got)
	}
}

func TestFaultFailNext(t *testing.T) {
	f, _ := newTestFault()
	f.FailNext(OpWrite, 2)
	f.FailNext(OpRead, 0) // does nothing
	for i, want := range []Op{OpWrite, OpWrite, 0, 0} {
		if got := ops(t, f, 0); got != want {
			t.Errorf("round %d: failed %s, want %s", i, got, want)
		}
	}
	f.FailNext(OpAll, 3)
	if got := ops(t, f, 0); got != OpRead|OpWrite|OpTrim {
		t.Errorf("FailNext(all, 3) failed %s", got)
	}
}

func TestFaultFailRange(t *testing.T) {
	f, _ := newTestFault()
	f.FailRange(OpAll, 2*blk+100, 10)
	for off, want := range map[int64]Op{blk: 0, 2 * blk: OpRead | OpWrite | OpTrim, 3 * blk: 0} {
		if got := ops(t, f, off); got != want {
			t.Errorf("at %d: failed %s, want %s", off, got, want)
		}
	}
	buf := make([]byte, 4*blk)
	if _, err := f.WriteAt(buf, 0); !errors.Is(err, ErrInjected) {
		t.Errorf("write spanning the range: %v", err)
	}
}

func TestFaultLatency(t *testing.T) {
	f, _ := newTestFault()
	var mu sync.Mutex
	var slept []time.Duration
	f.SetSleep(func(d time.Duration) {
		mu.Lock()
		defer mu.Unlock()
		slept = append(slept, d)
	})
	f.SetLatency(OpRead, 5*time.Millisecond)
	f.SetLatency(OpWrite|OpSync, time.Millisecond)
	ops(t, f, 0)
	want := []time.Duration{5 * time.Millisecond, time.Millisecond, time.Millisecond}
	if len(slept) != len(want) || slept[0] != want[0] || slept[1] != want[1] || slept[2] != want[2] {
		t.Errorf("slept %v, want %v", slept, want)
	}
	f.SetSleep(nil) // back to time.Sleep
	f.SetLatency(OpAll, 0)
	ops(t, f, 0)
}

func TestFaultTearWrite(t *testing.T) {
	f, m := newTestFault()
	old := pattern(8*blk, 1)
	if _, err := m.WriteAt(old, 0); err != nil {
		t.Fatal(err)
	}
	f.TearWriteAt(6*blk + 123) // beyond the next write: stays pending
	f.TearWriteAt(2*blk + 123) // replaces it
	if _, err := f.WriteAt(pattern(blk, 2), 4*blk); err != nil {
		t.Fatalf("write not covering the tear: %v", err)
	}
	p := pattern(4*blk, 3)
	n, err := f.WriteAt(p, blk)
	if !errors.Is(err, ErrInjected) || n != blk {
		t.Fatalf("torn write = %d, %v; want %d, ErrInjected", n, err, blk)
	}
	got := make([]byte, 8*blk)
	if _, err := m.ReadAt(got, 0); err != nil {
		t.Fatal(err)
	}
	want := bytes.Clone(old)
	copy(want[blk:2*blk], p[:blk])
	copy(want[4*blk:], pattern(blk, 2))
	if !bytes.Equal(got, want) {
		t.Error("torn write left the wrong bytes")
	}
	if _, err := f.WriteAt(p, blk); err != nil {
		t.Errorf("tear fired twice: %v", err)
	}
}

func TestFaultTearAtStart(t *testing.T) {
	f, m := newTestFault()
	f.TearWriteAt(blk)
	if _, err := f.WriteAt(make([]byte, 10), blk); !errors.Is(err, ErrUnaligned) {
		t.Fatalf("unaligned write: %v", err)
	}
	n, err := f.WriteAt(pattern(2*blk, 5), blk)
	if n != 0 || !errors.Is(err, ErrInjected) || m.Writes() != 0 {
		t.Errorf("tear at the first byte: n=%d err=%v inner writes %d", n, err, m.Writes())
	}
}

func TestFaultCorruptReads(t *testing.T) {
	f, m := newTestFault()
	data := pattern(2*blk, 7)
	if _, err := f.WriteAt(data, 0); err != nil {
		t.Fatal(err)
	}
	f.CorruptReads(blk+17, 100)
	got := make([]byte, 2*blk)
	if _, err := f.ReadAt(got, 0); err != nil {
		t.Fatal(err)
	}
	want := bytes.Clone(data)
	want[blk+17] ^= 0xff
	if !bytes.Equal(got, want) {
		t.Error("read not corrupted at exactly one byte")
	}
	if _, err := f.ReadAt(got[:blk], 0); err != nil || !bytes.Equal(got[:blk], data[:blk]) {
		t.Error("read outside the range corrupted")
	}
	if _, err := m.ReadAt(got, 0); err != nil || !bytes.Equal(got, data) {
		t.Error("corruption reached the device")
	}
	if f.Injected() != 1 {
		t.Errorf("Injected = %d", f.Injected())
	}
}

func TestFaultConcurrent(t *testing.T) {
	f, _ := newTestFault()
	f.FailNext(OpWrite, 50)
	f.SetSleep(func(time.Duration) {})
	f.SetLatency(OpRead, time.Second)
	var wg sync.WaitGroup
	var mu sync.Mutex
	failures := 0
	for i := range 8 {
		wg.Go(func() {
			for j := range 20 {
				err := checkRoundTrip(f, int64(i*20+j)*blk, blk)
				mu.Lock()
				failures += btoi(errors.Is(err, ErrInjected))
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if failures != 50 || f.Injected() != 50 {
		t.Errorf("%d round trips failed, %d injected; want 50", failures, f.Injected())
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

func TestOpString(t *testing.T) {
	for op, want := range map[Op]string{OpRead: "read", OpWrite | OpSync: "write|sync", 0: "none", OpAll: "read|write|trim|sync"} {
		if op.String() != want {
			t.Errorf("%d.String() = %q, want %q", uint8(op), op.String(), want)
		}
	}
}

// FailAllWith's errors wrap both ErrInjected and the given cause, for
// callers that tell a full device from a failing one.
func TestFailAllWith(t *testing.T) {
	f := NewFault(NewMem(1<<20, 4096))
	f.FailAllWith(OpWrite, syscall.ENOSPC)
	_, err := f.WriteAt(make([]byte, 4096), 0)
	if !errors.Is(err, ErrInjected) || !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("write: %v, want ErrInjected and ENOSPC", err)
	}
	if _, err := f.ReadAt(make([]byte, 4096), 0); err != nil {
		t.Fatalf("read: %v", err)
	}
	f.Reset()
	if _, err := f.WriteAt(make([]byte, 4096), 0); err != nil {
		t.Fatalf("write after Reset: %v", err)
	}
}

// TestFaultTearWrites: until Reset, every write lands only its first half
// and fails; after Reset writes are whole again.
func TestFaultTearWrites(t *testing.T) {
	f, m := newTestFault()
	f.TearWrites()
	for i := range 3 {
		p := pattern(4*blk, byte(10+i))
		n, err := f.WriteAt(p, int64(i)*4*blk)
		if !errors.Is(err, ErrInjected) || n != 2*blk {
			t.Fatalf("write %d = %d, %v; want %d, ErrInjected", i, n, err, 2*blk)
		}
		got := make([]byte, 4*blk)
		if _, err := m.ReadAt(got, int64(i)*4*blk); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got[:2*blk], p[:2*blk]) || !bytes.Equal(got[2*blk:], make([]byte, 2*blk)) {
			t.Errorf("write %d: not torn at its half", i)
		}
	}
	if f.Injected() != 3 {
		t.Errorf("injected %d, want 3", f.Injected())
	}
	f.Reset()
	if _, err := f.WriteAt(pattern(4*blk, 9), 0); err != nil {
		t.Errorf("write after Reset: %v", err)
	}
}
