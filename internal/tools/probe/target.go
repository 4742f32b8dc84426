package probe

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/strata-media/strata/internal/storage/device"
	"github.com/strata-media/strata/internal/storage/model"
)

// A Target is what the probe writes to: it issues one write at a time
// (queue depth 1) and reports how long it took.
type Target interface {
	// Size is the usable size in bytes.
	Size() int64
	// Alignment is the granularity writes must respect, in bytes.
	Alignment() int64
	// Write writes n bytes at off and returns the write's latency.
	Write(ctx context.Context, off, n int64) (time.Duration, error)
}

// A Filler is a Target that can precondition [off, off+n) faster than by
// writing it through Write, such as a model that maps the range instantly.
type Filler interface {
	Fill(ctx context.Context, off, n int64) error
}

// ModelTarget probes a device model in virtual time: writes are issued
// back to back at queue depth 1, and a write's latency is its completion
// minus its submission. An SSD model is filled instantly.
func ModelTarget(m model.Model) Target { return &modelTarget{m: m} }

type modelTarget struct {
	m   model.Model
	now time.Duration
}

// Size returns the model's size.
func (t *modelTarget) Size() int64 { return t.m.Size() }

// Alignment is a sector: models take any size, the probe's are whole pages.
func (t *modelTarget) Alignment() int64 { return 512 }

// Write submits a write when the previous one completed.
func (t *modelTarget) Write(_ context.Context, off, n int64) (time.Duration, error) {
	done := t.m.Submit(t.now, model.Request{Op: model.Write, Offset: off, Length: n})
	lat := done - t.now
	t.now = done
	return lat, nil
}

// Fill maps the range instantly when the model can (an SSD), and otherwise
// writes it sequentially in virtual time.
func (t *modelTarget) Fill(ctx context.Context, off, n int64) error {
	if f, ok := t.m.(model.Filler); ok {
		f.Fill(off, n)
		return nil
	}
	return fillByWrites(ctx, t, off, n)
}

// DeviceTarget probes a real device by wall-clock latency of its writes
// (O_DIRECT when the device is a File opened that way). It OVERWRITES
// everything in the probed region with pseudo-random bytes: point it only
// at a scratch file or a device whose contents may be destroyed.
func DeviceTarget(d device.Device) Target { return &deviceTarget{d: d} }

type deviceTarget struct {
	d   device.Device
	buf []byte
}

// Size returns the device's size.
func (t *deviceTarget) Size() int64 { return t.d.Size() }

// Alignment returns the device's alignment.
func (t *deviceTarget) Alignment() int64 { return int64(t.d.Alignment()) }

// Write times one write of n bytes at off.
func (t *deviceTarget) Write(ctx context.Context, off, n int64) (time.Duration, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	t.grow(n)
	start := time.Now()
	if _, err := t.d.WriteAt(t.buf[:n], off); err != nil {
		return 0, fmt.Errorf("probe: write %d bytes at %d: %w", n, off, err)
	}
	return time.Since(start), nil
}

// grow makes the aligned write buffer at least n bytes, filled with
// incompressible bytes so that compressing controllers see real work.
func (t *deviceTarget) grow(n int64) {
	if int64(len(t.buf)) >= n {
		return
	}
	t.buf = device.AlignedBuffer(int(n), t.d.Alignment())
	rng := rand.New(rand.NewPCG(uint64(n), 0x9b0be))
	for i := 0; i+8 <= len(t.buf); i += 8 {
		v := rng.Uint64()
		for j := range 8 {
			t.buf[i+j] = byte(v >> (8 * j))
		}
	}
}

// fillByWrites preconditions [off, off+n) with sequential writes of up to
// 16 MiB.
func fillByWrites(ctx context.Context, t Target, off, n int64) error {
	const chunk = 16 << 20
	for end := off + n; off < end; {
		l := min(chunk, end-off)
		if _, err := t.Write(ctx, off, l); err != nil {
			return err
		}
		off += l
	}
	return nil
}
