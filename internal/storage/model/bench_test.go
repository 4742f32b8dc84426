package model

import (
	"math/rand/v2"
	"testing"
	"time"
)

// benchSubmit times Submit of size-byte writes (or reads) at random
// size-aligned offsets on m.
func benchSubmit(b *testing.B, m Model, op Op, size int64) {
	rng := rand.New(rand.NewPCG(1, 2))
	slots := m.Size() / size
	var now time.Duration
	b.SetBytes(size)
	b.ResetTimer()
	for b.Loop() {
		now = m.Submit(now, Request{Op: op, Offset: rng.Int64N(slots) * size, Length: size})
	}
}

func BenchmarkHDDRandomRead4K(b *testing.B) {
	h, _ := NewHDD(Barracuda7200dot10())
	benchSubmit(b, h, Read, 4096)
}

func BenchmarkLogBlockWrite16MiB(b *testing.B) {
	s := newSSD(b, OCZCoreV2())
	s.Fill(0, s.Size())
	benchSubmit(b, s, Write, 16<<20)
}

func BenchmarkLogBlockWrite4K(b *testing.B) {
	s := newSSD(b, OCZCoreV2())
	s.Fill(0, s.Size())
	benchSubmit(b, s, Write, 4096)
}

// BenchmarkPageMappedWrite16MiB uses the full 80 GB Intel model (about
// 170 MB of maps): ns/op x 4800 is the time to fill 75 GB.
func BenchmarkPageMappedWrite16MiB(b *testing.B) {
	s := newSSD(b, IntelX25MG1())
	s.Fill(0, s.Size())
	benchSubmit(b, s, Write, 16<<20)
}

// BenchmarkPageMappedWrite4K measures steady-state random page writes,
// garbage collection included.
func BenchmarkPageMappedWrite4K(b *testing.B) {
	s := newSSD(b, IntelX25MG1().WithCapacity(8<<30))
	s.Age(Aging{Fill: 1, Overwrite: 1})
	benchSubmit(b, s, Write, 4096)
}

func BenchmarkPageMappedRead1MiB(b *testing.B) {
	s := newSSD(b, IntelX25MG1().WithCapacity(8<<30))
	s.Fill(0, s.Size())
	benchSubmit(b, s, Read, 1<<20)
}

// BenchmarkFillIntel75GB is one instant fill of 75 GB of the 80 GB model.
func BenchmarkFillIntel75GB(b *testing.B) {
	for b.Loop() {
		s := newSSD(b, IntelX25MG1())
		s.Fill(0, 75e9)
	}
}
