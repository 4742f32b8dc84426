package device

import (
	"bytes"
	"math/rand/v2"
	"sync"
	"testing"
)

// block returns the blk bytes at block i of d.
func block(t *testing.T, d Device, i int) []byte {
	t.Helper()
	p := make([]byte, blk)
	if _, err := d.ReadAt(p, int64(i)*blk); err != nil {
		t.Fatal(err)
	}
	return p
}

func fill(b byte, n int) []byte { return bytes.Repeat([]byte{b}, n) }

func write(t *testing.T, d Device, i int, b byte, blocks int) {
	t.Helper()
	if _, err := d.WriteAt(fill(b, blocks*blk), int64(i)*blk); err != nil {
		t.Fatal(err)
	}
}

func expectBlocks(t *testing.T, d Device, want string) {
	t.Helper()
	got := make([]byte, len(want))
	for i := range want {
		got[i] = block(t, d, i)[0]
		if !bytes.Equal(block(t, d, i), fill(got[i], blk)) {
			got[i] = '?' // mixed contents within one block
		}
		if got[i] == 0 {
			got[i] = '.'
		}
	}
	if string(got) != want {
		t.Errorf("blocks %q, want %q", got, want)
	}
}

func TestCrashCloneModes(t *testing.T) {
	c := NewCrashable(NewMem(16*blk, blk))
	write(t, c, 0, 'a', 2)
	if err := c.Sync(); err != nil {
		t.Fatal(err)
	}
	write(t, c, 1, 'b', 2)
	if err := c.Trim(0, blk); err != nil {
		t.Fatal(err)
	}
	expectBlocks(t, c.CrashClone(CrashOptions{Unsynced: CrashDropUnsynced}), "aa..")
	expectBlocks(t, c.CrashClone(CrashOptions{Unsynced: CrashKeepUnsynced}), ".bb.")
	// The original keeps working after clones.
	write(t, c, 3, 'c', 1)
	expectBlocks(t, c, ".bbc")
	if err := c.Sync(); err != nil {
		t.Fatal(err)
	}
	expectBlocks(t, c.CrashClone(CrashOptions{}), ".bbc")
}

func TestCrashCloneIsIndependent(t *testing.T) {
	c := NewCrashable(NewMem(4*blk, blk))
	write(t, c, 0, 'a', 1)
	clone := c.CrashClone(CrashOptions{Unsynced: CrashKeepUnsynced})
	write(t, clone, 1, 'x', 1)
	write(t, c, 2, 'b', 1)
	expectBlocks(t, clone, "ax..")
	expectBlocks(t, c, "a.b.")
}

func TestCrashCloneRandom(t *testing.T) {
	c := NewCrashable(NewMem(64*blk, blk))
	for i := range 64 {
		write(t, c, i, 'n', 1)
	}
	clone := func(seed uint64) string {
		m := c.CrashClone(CrashOptions{Unsynced: CrashKeepRandom, Rand: rand.New(rand.NewPCG(seed, 1))})
		var s []byte
		for i := range 64 {
			s = append(s, block(t, m, i)[0])
		}
		return string(s)
	}
	a, b := clone(1), clone(1)
	if a != b {
		t.Fatal("same seed, different clones")
	}
	kept := bytes.Count([]byte(a), []byte("n"))
	if kept < 10 || kept > 54 {
		t.Errorf("kept %d of 64 writes: %q", kept, a)
	}
	if clone(2) == a {
		t.Error("different seeds, same clone")
	}
}

func TestCrashCloneTear(t *testing.T) {
	prefixes := map[int]bool{}
	for seed := range uint64(40) {
		c := NewCrashable(NewMem(8*blk, blk))
		write(t, c, 0, 'o', 8)
		if err := c.Sync(); err != nil {
			t.Fatal(err)
		}
		write(t, c, 0, 'n', 8)
		r := rand.New(rand.NewPCG(seed, 2))
		m := c.CrashClone(CrashOptions{Unsynced: CrashKeepUnsynced, Tear: true, Rand: r})
		k := 0
		for k < 8 && block(t, m, k)[0] == 'n' {
			k++
		}
		expectBlocks(t, m, string(fill('n', k))+string(fill('o', 8-k)))
		prefixes[k] = true
	}
	if prefixes[8] || len(prefixes) < 4 {
		t.Errorf("torn prefixes seen: %v; want several, never the whole write", prefixes)
	}
}

// TestCrashCloneInProgress checks that a write that has begun but not
// returned is absent from a clone, or torn if Tear picks it, never whole.
func TestCrashCloneInProgress(t *testing.T) {
	c := NewCrashable(NewMem(4*blk, blk))
	op := c.begin(&pendingOp{off: 0, n: 4 * blk, data: fill('p', 4*blk)})
	if _, err := c.inner.WriteAt(op.data, 0); err != nil {
		t.Fatal(err)
	}
	expectBlocks(t, c.CrashClone(CrashOptions{Unsynced: CrashKeepUnsynced}), "....")
	if err := c.Sync(); err != nil { // does not make it durable either
		t.Fatal(err)
	}
	expectBlocks(t, c.CrashClone(CrashOptions{Unsynced: CrashKeepUnsynced}), "....")
	m := c.CrashClone(CrashOptions{Tear: true, Rand: rand.New(rand.NewPCG(3, 3))})
	if block(t, m, 3)[0] == 'p' {
		t.Error("torn in-progress write survived whole")
	}
	c.finish(op, nil)
	expectBlocks(t, c.CrashClone(CrashOptions{Unsynced: CrashKeepUnsynced}), "pppp")
}

func TestCrashFailedWriteForgotten(t *testing.T) {
	c := NewCrashable(NewMem(4*blk, blk))
	write(t, c, 0, 'a', 1)
	mustClose(t, c)
	if _, err := c.WriteAt(fill('b', blk), blk); err == nil {
		t.Fatal("write after close succeeded")
	}
	expectBlocks(t, c.CrashClone(CrashOptions{Unsynced: CrashKeepUnsynced}), "a...")
}

// TestCrashConcurrent clones while writers run: with no tearing, every
// two-block write in a clone is whole or absent.
func TestCrashConcurrent(t *testing.T) {
	const writers, rounds = 4, 40
	c := NewCrashable(NewMem(writers*2*blk, blk))
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for i := range rounds {
				if _, err := c.WriteAt(fill(byte('A'+i), 2*blk), int64(w)*2*blk); err != nil {
					t.Error(err)
				}
				if i%7 == 0 {
					_ = c.Sync()
				}
			}
		})
	}
	for range 50 {
		m := c.CrashClone(CrashOptions{Unsynced: CrashKeepUnsynced})
		for w := range writers {
			b0, b1 := block(t, m, 2*w), block(t, m, 2*w+1)
			if !bytes.Equal(b0, fill(b0[0], blk)) || !bytes.Equal(b0, b1) {
				t.Fatalf("writer %d: half-applied write in a clone (%q, %q)", w, b0[0], b1[0])
			}
		}
	}
	wg.Wait()
}

// TestCrashModel runs random writes, trims, syncs and crashes against a
// model of synced and unsynced contents.
func TestCrashModel(t *testing.T) {
	r := testRand(t)
	const n = 32
	c := NewCrashable(NewMem(n*blk, blk))
	durable, current := make([]byte, n), make([]byte, n)
	for step := range 2000 {
		i, k := r.IntN(n), 1+r.IntN(3)
		k = min(k, n-i)
		switch r.IntN(10) {
		case 0, 1, 2, 3, 4:
			b := byte('a' + step%26)
			write(t, c, i, b, k)
			copy(current[i:i+k], fill(b, k))
		case 5:
			if err := c.Trim(int64(i)*blk, int64(k)*blk); err != nil {
				t.Fatal(err)
			}
			clear(current[i : i+k])
		case 6, 7:
			if err := c.Sync(); err != nil {
				t.Fatal(err)
			}
			copy(durable, current)
		case 8, 9:
			mode := CrashMode(r.IntN(2)) // drop or keep everything
			if mode == CrashKeepUnsynced {
				copy(durable, current)
			}
			c = NewCrashable(c.CrashClone(CrashOptions{Unsynced: mode}))
			copy(current, durable)
			expectBlocks(t, c, modelString(durable))
		}
	}
}

func modelString(m []byte) string {
	s := bytes.Clone(m)
	for i, b := range s {
		if b == 0 {
			s[i] = '.'
		}
	}
	return string(s)
}
