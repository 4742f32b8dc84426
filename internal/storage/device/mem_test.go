package device

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"
)

func TestNewMemNormalizes(t *testing.T) {
	cases := []struct {
		size      int64
		align     int
		wantSize  int64
		wantAlign int
	}{
		{1 << 20, 4096, 1 << 20, 4096},
		{10000, 3000, 8192, 4096},
		{100, 0, 100, 1},
		{-5, 512, 0, 512},
		{1 << 20, -1, 1 << 20, 1},
	}
	for _, c := range cases {
		m := NewMem(c.size, c.align)
		if m.Size() != c.wantSize || m.Alignment() != c.wantAlign {
			t.Errorf("NewMem(%d, %d): size %d align %d, want %d %d",
				c.size, c.align, m.Size(), m.Alignment(), c.wantSize, c.wantAlign)
		}
	}
}

func TestMemSparse(t *testing.T) {
	m := NewMem(2<<30, 4096)
	roundTrip(t, m, 1<<30, 4096)
	roundTrip(t, m, 2<<30-4096, 4096)
	if got := m.allocated(); got != 2*memChunk {
		t.Errorf("2 GiB device with two small writes holds %d bytes", got)
	}
	big := AlignedBuffer(16<<20, 4096)
	if _, err := m.ReadAt(big, 0); err != nil || !bytes.Equal(big, make([]byte, len(big))) {
		t.Fatalf("unwritten range: %v", err)
	}
	if got := m.allocated(); got != 2*memChunk {
		t.Errorf("reads allocated memory: %d bytes", got)
	}
}

func TestMemSmallerThanChunk(t *testing.T) {
	m := NewMem(64<<10, 512)
	roundTrip(t, m, 63<<10, 1024)
	if got := m.allocated(); got != 64<<10 {
		t.Errorf("64 KiB device allocated %d bytes", got)
	}
}

func TestMemTrim(t *testing.T) {
	m := NewMem(4*memChunk, 4096)
	data := pattern(3*memChunk, 9)
	if _, err := m.WriteAt(data, 0); err != nil {
		t.Fatal(err)
	}
	// Covers the end of chunk 0, all of chunk 1 and the start of chunk 2.
	if err := m.Trim(memChunk-4096, memChunk+8192); err != nil {
		t.Fatal(err)
	}
	if got := m.allocated(); got != 2*memChunk {
		t.Errorf("after trimming a whole chunk: %d bytes allocated", got)
	}
	want := bytes.Clone(data)
	clear(want[memChunk-4096 : 2*memChunk+4096])
	got := make([]byte, len(want))
	if _, err := m.ReadAt(got, 0); err != nil || !bytes.Equal(got, want) {
		t.Fatalf("trim: %v, contents right %v", err, bytes.Equal(got, want))
	}
	if err := m.Trim(1, 4096); !errors.Is(err, ErrUnaligned) {
		t.Errorf("unaligned trim: %v", err)
	}
}

func TestMemLifetimeCounters(t *testing.T) {
	m := NewMem(1<<20, 4096)
	buf := make([]byte, 8192)
	write := func(l Lifetime, n int) {
		if err := m.SetLifetime(l); err != nil {
			t.Fatal(err)
		}
		for range n {
			if _, err := m.WriteAt(buf, 0); err != nil {
				t.Fatal(err)
			}
		}
	}
	write(LifetimeShort, 3)
	write(LifetimeLong, 1)
	write(LifetimeShort, 1)
	if m.BytesWritten(LifetimeShort) != 4*8192 || m.BytesWritten(LifetimeLong) != 8192 ||
		m.BytesWritten(LifetimeNotSet) != 0 || m.Writes() != 5 {
		t.Errorf("short %d long %d not-set %d writes %d", m.BytesWritten(LifetimeShort),
			m.BytesWritten(LifetimeLong), m.BytesWritten(LifetimeNotSet), m.Writes())
	}
	if err := m.SetLifetime(Lifetime(6)); !errors.Is(err, ErrHintUnsupported) {
		t.Errorf("unknown class: %v", err)
	}
	if m.BytesWritten(Lifetime(99)) != 0 {
		t.Error("unknown class has bytes")
	}
}

// TestMemModel checks a Mem against a flat byte slice over random
// operations that straddle chunk boundaries.
func TestMemModel(t *testing.T) {
	r := testRand(t)
	const size, align = 3*memChunk + 512*7, 512
	m := NewMem(size, align)
	model := make([]byte, size)
	for i := range 600 {
		off := AlignDown(r.Int64N(size), align)
		n := AlignDown(r.Int64N(min(size-off, memChunk+8192)+1), align)
		switch r.IntN(3) {
		case 0:
			p := pattern(int(n), byte(i))
			copy(model[off:], p)
			if _, err := m.WriteAt(p, off); err != nil {
				t.Fatal(err)
			}
		case 1:
			clear(model[off : off+n])
			if err := m.Trim(off, n); err != nil {
				t.Fatal(err)
			}
		case 2:
			got := make([]byte, n)
			if _, err := m.ReadAt(got, off); err != nil || !bytes.Equal(got, model[off:off+n]) {
				t.Fatalf("op %d: read %d at %d differs from the model (err %v)", i, n, off, err)
			}
		}
	}
}

func TestMemConcurrent(t *testing.T) {
	m := NewMem(8<<20, 4096)
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			for j := range 50 {
				off := int64(i)<<20 + int64(j%8)*8192
				if err := checkRoundTrip(m, off, 8192); err != nil {
					t.Error(err)
				}
				_ = m.Trim(off, 4096)
				_ = m.SetLifetime(Lifetime(j % 6))
			}
		})
	}
	wg.Wait()
	if m.Writes() != 400 {
		t.Errorf("writes %d", m.Writes())
	}
}

func BenchmarkMemWrite(b *testing.B) {
	m := NewMem(64<<20, 4096)
	p := AlignedBuffer(256<<10, 4096)
	b.SetBytes(int64(len(p)))
	for i := 0; b.Loop(); i++ {
		if _, err := m.WriteAt(p, int64(i%256)*int64(len(p))); err != nil {
			b.Fatal(err)
		}
	}
}

// testRand returns a generator seeded from STRATA_TEST_SEED or the clock,
// and logs the seed so a failure can be replayed.
func testRand(t *testing.T) *rand.Rand {
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("STRATA_TEST_SEED"); s != "" {
		var err error
		if seed, err = strconv.ParseUint(s, 10, 64); err != nil {
			t.Fatalf("STRATA_TEST_SEED: %v", err)
		}
	}
	t.Logf("seed %d (rerun with STRATA_TEST_SEED=%d)", seed, seed)
	return rand.New(rand.NewPCG(seed, 0))
}
