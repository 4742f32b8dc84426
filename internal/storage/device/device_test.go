package device

import (
	"bytes"
	"errors"
	"math"
	"path/filepath"
	"testing"
)

func TestCheckAligned(t *testing.T) {
	cases := []struct {
		off, n int64
		align  int
		size   int64
		want   error
	}{
		{0, 4096, 4096, 8192, nil},
		{4096, 4096, 4096, 8192, nil},
		{8192, 0, 4096, 8192, nil},
		{1, 4096, 4096, 8192, ErrUnaligned},
		{0, 100, 4096, 8192, ErrUnaligned},
		{8192, 4096, 4096, 8192, ErrOutOfRange},
		{-4096, 4096, 4096, 8192, ErrOutOfRange},
		{0, -4096, 4096, 8192, ErrOutOfRange},
		{4096, math.MaxInt64 &^ 4095, 4096, 8192, ErrOutOfRange}, // off+n overflows
		{12288, 0, 4096, 8192, ErrOutOfRange},
		{3, 5, 0, 8192, nil}, // align < 1 is treated as 1
	}
	for _, c := range cases {
		err := CheckAligned(c.off, c.n, c.align, c.size)
		if (c.want == nil && err != nil) || !errors.Is(err, c.want) {
			t.Errorf("CheckAligned(%d, %d, %d, %d) = %v, want %v", c.off, c.n, c.align, c.size, err, c.want)
		}
	}
}

func TestAlignedBuffer(t *testing.T) {
	for _, align := range []int{0, 1, 512, 4096, 65536, 3000} {
		for _, n := range []int{-1, 0, 1, 4096, 10000} {
			p := AlignedBuffer(n, align)
			if len(p) != max(n, 0) || cap(p) != len(p) || !IsAlignedBuffer(p, align) {
				t.Errorf("AlignedBuffer(%d, %d): len %d cap %d aligned %v", n, align, len(p), cap(p), IsAlignedBuffer(p, align))
			}
		}
	}
	if p := AlignedBuffer(8192, 4096); IsAlignedBuffer(p[1:], 4096) {
		t.Error("IsAlignedBuffer accepts an offset slice")
	}
}

func TestLifetimeNames(t *testing.T) {
	for l := LifetimeNotSet; l <= LifetimeExtreme; l++ {
		got, err := ParseLifetime(l.String())
		if err != nil || got != l {
			t.Errorf("ParseLifetime(%q) = %v, %v", l.String(), got, err)
		}
	}
	if Lifetime(9).String() != "lifetime(9)" {
		t.Errorf("Lifetime(9) = %q", Lifetime(9).String())
	}
	if _, err := ParseLifetime("forever"); err == nil {
		t.Error("ParseLifetime accepts an unknown name")
	}
}

// TestConformance runs the same checks on every Device implementation.
func TestConformance(t *testing.T) {
	devices := map[string]func(t *testing.T) Device{
		"mem":       func(*testing.T) Device { return NewMem(4<<20, 4096) },
		"fault":     func(*testing.T) Device { return NewFault(NewMem(4<<20, 4096)) },
		"crashable": func(*testing.T) Device { return NewCrashable(NewMem(4<<20, 4096)) },
		"file": func(t *testing.T) Device {
			f, err := OpenFile(filepath.Join(t.TempDir(), "dev"), FileOptions{Size: 4 << 20})
			if err != nil {
				t.Fatal(err)
			}
			return f
		},
	}
	for name, open := range devices {
		t.Run(name, func(t *testing.T) { conform(t, open(t)) })
	}
}

func conform(t *testing.T, d Device) {
	a := d.Alignment()
	if d.Size() != 4<<20 || a != 4096 {
		t.Fatalf("size %d align %d", d.Size(), a)
	}
	zero := AlignedBuffer(a, a)
	got := AlignedBuffer(a, a)
	if _, err := d.ReadAt(got, 0); err != nil || !bytes.Equal(got, zero) {
		t.Fatalf("fresh device: %v, zeros %v", err, bytes.Equal(got, zero))
	}
	roundTrip(t, d, 1<<20-int64(a), 2*a) // straddles a Mem chunk boundary
	if _, err := d.WriteAt(got[:a/2], 0); !errors.Is(err, ErrUnaligned) {
		t.Errorf("short write: %v", err)
	}
	if _, err := d.ReadAt(got, d.Size()); !errors.Is(err, ErrOutOfRange) {
		t.Errorf("read past end: %v", err)
	}
	if err := d.SetLifetime(LifetimeShort); err != nil && !errors.Is(err, ErrHintUnsupported) {
		t.Errorf("SetLifetime: %v", err)
	}
	mustClose(t, d)
	if _, err := d.ReadAt(got, 0); !errors.Is(err, ErrClosed) {
		t.Errorf("read after close: %v", err)
	}
	if err := d.Close(); !errors.Is(err, ErrClosed) {
		t.Errorf("second close: %v", err)
	}
}
