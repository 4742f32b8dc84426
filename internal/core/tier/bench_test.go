package tier

import (
	"fmt"
	"testing"
)

// benchCache returns a cache with n segments of size bytes in RAM and m on
// flash (no payload bytes), 16 MiB blocks.
func benchCache(b *testing.B, n, m int, size int64, p BlockPolicy) (*Cache, []string) {
	c, _, err := New(Options{
		RAMBytes: int64(n+1) * size, BlockSize: 16 << 20, DeviceSize: 64 << 30,
		MonitorRoom: 1, RingBytes: 64 << 20, BlockPolicy: p,
	}, 1)
	if err != nil {
		b.Fatal(err)
	}
	keys := make([]string, n+m)
	for i := range keys {
		keys[i] = fmt.Sprintf("v/title%04d/1500k/%d.m4s", i/100, i%100)
	}
	for _, k := range keys[:m] {
		c.Insert(k, size, nil, 0, 0)
		c.Monitor(0)
		for w := c.Feed(0, Signals{}); w != nil; w = c.Feed(0, Signals{}) {
			c.WriteDone(w, nil, 0)
		}
	}
	if w := c.Flush(0); w != nil {
		c.WriteDone(w, nil, 0)
	}
	for _, k := range keys[m:] {
		c.Insert(k, size, nil, 0, 0)
	}
	return c, keys
}

func BenchmarkLookupRAMHit(b *testing.B) {
	c, keys := benchCache(b, 4096, 0, 1<<20, BlockLRU)
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		if c.Lookup(keys[i%len(keys)], 0).Tier != RAM {
			b.Fatal("not a RAM hit")
		}
	}
}

func BenchmarkLookupSSDHit(b *testing.B) {
	for _, p := range []BlockPolicy{BlockLRU, BlockLFUMean, BlockLFUMedian, BlockFIFO} {
		b.Run(p.String(), func(b *testing.B) {
			c, keys := benchCache(b, 0, 4096, 1<<20, p)
			b.ResetTimer()
			for i := 0; b.Loop(); i++ {
				if c.Lookup(keys[i%len(keys)], 0).Tier != SSD {
					b.Fatal("not an SSD hit")
				}
			}
		})
	}
}

func BenchmarkLookupMiss(b *testing.B) {
	c, _ := benchCache(b, 1024, 1024, 1<<20, BlockLRU)
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		c.Lookup("v/none/1/1.m4s", 0)
	}
}

// BenchmarkPackBlock measures the feed's packing of 1 MiB segments into
// 16 MiB blocks, block eviction included once flash is full; bytes are the
// segment bytes packed.
func BenchmarkPackBlock(b *testing.B) {
	for _, p := range []BlockPolicy{BlockLRU, BlockLFUMedian} {
		b.Run(p.String(), func(b *testing.B) {
			c, _, _ := New(Options{RAMBytes: 1 << 30, BlockSize: 16 << 20, DeviceSize: 1 << 30,
				MonitorRoom: 1, RingBytes: 1 << 30, BlockPolicy: p}, 1)
			b.SetBytes(1 << 20)
			for i := 0; b.Loop(); i++ {
				c.ring.Push(RingItem{Key: fmt.Sprintf("v/t/%d", i), Size: 1 << 20})
				if w := c.Feed(0, Signals{}); w != nil {
					c.WriteDone(w, nil, 0)
				}
			}
		})
	}
}

// BenchmarkEncodeBlock measures laying out a 16 MiB block of 1 MiB segments
// with checksums.
func BenchmarkEncodeBlock(b *testing.B) {
	data := make([]byte, 1<<20)
	p := newPacker(16 << 20)
	for i := 0; !p.full(); i++ {
		if !p.start(RingItem{Key: fmt.Sprintf("v/t/%d", i), Size: int64(len(data)), Data: data}) {
			break
		}
	}
	w := p.seal(2, 1)
	buf := make([]byte, 16<<20)
	b.SetBytes(w.Used)
	for b.Loop() {
		if err := EncodeBlock(buf, w, 1); err != nil {
			b.Fatal(err)
		}
	}
}
