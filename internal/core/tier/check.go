package tier

import (
	"errors"
	"fmt"
	"slices"
)

// Check verifies the cache's internal invariants: the RAM pool's
// accounting, the segment and block tables' agreement, and that every data
// block is free, in use or being written exactly once. Tests call it after
// every step; it is O(size of the cache).
func (c *Cache) Check() error {
	return errors.Join(c.checkRAM(), c.checkIndex(), c.checkBlocks())
}

func (c *Cache) checkRAM() error {
	var used int64
	n := 0
	c.ram.policy.WalkTail(func(e *Entry) bool {
		used += e.Size
		n++
		return true
	})
	if used != c.ram.used || n != len(c.ram.m) || used > c.ram.budget {
		return fmt.Errorf("tier: RAM pool holds %d bytes in %d entries, accounts %d in %d, budget %d",
			used, n, c.ram.used, len(c.ram.m), c.ram.budget)
	}
	return nil
}

func (c *Cache) checkIndex() error {
	for k, s := range c.ix.segs {
		if s.Key != k || len(s.Chunks) == 0 {
			return fmt.Errorf("tier: segment table entry %q holds %q with %d chunks", k, s.Key, len(s.Chunks))
		}
		var sum int64
		for _, ch := range s.Chunks {
			b := c.ix.blocks[ch.Block]
			if b == nil || b.gen != ch.Gen || !slices.Contains(b.segs, s) {
				return fmt.Errorf("tier: %q chunk in block %d gen %d not in the block table", k, ch.Block, ch.Gen)
			}
			sum += int64(ch.Len)
		}
		if sum != s.Size {
			return fmt.Errorf("tier: %q chunks hold %d bytes, size %d", k, sum, s.Size)
		}
	}
	for n, b := range c.ix.blocks {
		for _, s := range b.segs {
			if c.ix.segs[s.Key] != s {
				return fmt.Errorf("tier: block %d lists %q, which is not in the segment table", n, s.Key)
			}
		}
	}
	return nil
}

func (c *Cache) checkBlocks() error {
	if c.nblocks <= MetaBlocks {
		return nil
	}
	seen := make(map[uint32]string)
	mark := func(b uint32, what string) error {
		if b < MetaBlocks || b >= c.nblocks {
			return fmt.Errorf("tier: %s block %d out of range", what, b)
		}
		if prev, dup := seen[b]; dup {
			return fmt.Errorf("tier: block %d is %s and %s", b, prev, what)
		}
		seen[b] = what
		return nil
	}
	for b := range c.ix.blocks {
		if err := mark(b, "in use"); err != nil {
			return err
		}
	}
	if c.inflight != nil {
		if err := mark(c.inflight.Block, "being written"); err != nil {
			return err
		}
	}
	f := c.ix.free
	for _, b := range f.freed {
		if err := mark(b, "free"); err != nil {
			return err
		}
	}
	for j := f.lo; j < f.n; j++ {
		if err := mark(f.at(j), "free"); err != nil {
			return err
		}
	}
	if want := int(c.nblocks - MetaBlocks); len(seen) != want {
		return fmt.Errorf("tier: %d data blocks accounted for, want %d", len(seen), want)
	}
	return nil
}
