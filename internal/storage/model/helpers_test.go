package model

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"
)

// driver issues queue-depth-1 requests to a model in virtual time.
type driver struct {
	m   Model
	now time.Duration
	rng *rand.Rand
}

func newDriver(m Model, seed uint64) *driver {
	return &driver{m: m, rng: rand.New(rand.NewPCG(seed, 1))}
}

// run issues n requests of size bytes (random aligned offsets within span,
// or sequential from 0) back to back and returns the throughput in MB/s
// (10^6 bytes) and the latencies.
func (d *driver) run(op Op, size int64, n int, random bool, span int64) (float64, []time.Duration) {
	start := d.now
	lat := make([]time.Duration, n)
	off := int64(0)
	for i := range n {
		o := off
		if random {
			o = d.rng.Int64N(span/size) * size
		} else if off += size; off+size > span {
			off = 0
		}
		done := d.m.Submit(d.now, Request{Op: op, Offset: o, Length: size})
		lat[i], d.now = done-d.now, done
	}
	return float64(size) * float64(n) / (d.now - start).Seconds() / 1e6, lat
}

// within fails unless got is within frac of want.
func within(t *testing.T, what string, got, want, frac float64) {
	t.Helper()
	if got < want*(1-frac) || got > want*(1+frac) {
		t.Errorf("%s = %.4g, want %.4g ± %.0f%%", what, got, want, frac*100)
	}
}

// newSSD builds p or fails the test.
func newSSD(t testing.TB, p SSDParams) *SSD {
	t.Helper()
	s, err := NewSSD(p)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// smallSSD is a page-mapped drive small enough for many overwrites.
func smallSSD(op float64, ppb, dies int) SSDParams {
	return SSDParams{
		Name: "small", Capacity: 256 << 20, PageSize: 4096, PagesPerBlock: ppb, Planes: 1,
		Channels: dies, WaysPerChannel: 1, OverProvision: op,
		ReadPage: 50 * time.Microsecond, ProgramPage: 500 * time.Microsecond, EraseBlock: 2 * time.Millisecond,
		ChannelRate: 100e6, HostReadRate: 300e6, HostWriteRate: 300e6, Copyback: true,
	}
}

func exp(x float64) float64 { return math.Exp(x) }

func abs64(x float64) float64 { return math.Abs(x) }
