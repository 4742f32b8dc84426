package app

import (
	"log/slog"
	"math"
	"os"
	"runtime/debug"
)

// FlashIndexPerBlock bounds the RAM the flash index holds per flash block,
// bytes: the block's header and the index entries of the segments it
// holds.
const FlashIndexPerBlock = 4 << 10

// MemoryHeadroom is the memory a node may hold beyond its caches' budgets
// before the Go collector works harder (runtime, request buffers, decoder
// state), bytes: 64 MiB.
const MemoryHeadroom = 64 << 20

// HitMemory is the bound on the bytes of flash hits' buffers in flight
// (FlashHitMemory): as set, or a quarter of the RAM pool's budget within
// 16 and 256 MiB (64 MiB for the default 256 MiB pool), 0 without flash.
func (c *Config) HitMemory() int64 {
	switch {
	case c.NoFlash:
		return 0
	case c.FlashHitMemory > 0:
		return int64(c.FlashHitMemory)
	}
	return min(max(int64(c.RAM)/4, 16<<20), 256<<20)
}

// CacheBudget is the RAM the configuration gives the node's caches: the
// segment tier's pool (--ram) and ring, the image store's memtable and
// block cache, the flash index, the flash hits' buffers in flight
// (HitMemory), and with a bucket origin the whole-file
// tier's pool of pieces ([files] ram).
func (c *Config) CacheBudget() int64 {
	ring := int64(c.Ring)
	if ring == 0 {
		ring = 2 * int64(c.BlockSize)
	}
	o := c.Images.ImagesOptions(slog.New(slog.DiscardHandler))
	o.EnsureDefaults()
	var index int64
	if !c.NoFlash && c.BlockSize > 0 {
		index = int64(c.FlashSize) / int64(c.BlockSize) * FlashIndexPerBlock
	}
	var files int64
	if c.Origin != "" { // the pool of pieces exists only for files in a bucket
		files = int64(c.Files.RAM)
	}
	return int64(c.RAM) + ring + o.MemTableSize + o.BlockCacheSize + index + files + c.HitMemory()
}

// SetMemoryLimit makes the Go collector keep the process's memory within
// the caches' budgets plus MemoryHeadroom (debug.SetMemoryLimit, a soft
// limit), unless GOMEMLIMIT already set one: without it the heap of a full
// RAM pool grows to twice the pool between collections (a 256 MiB pool
// held 700 MiB resident under the soak). It returns the limit.
func SetMemoryLimit(c *Config) int64 {
	if os.Getenv("GOMEMLIMIT") != "" {
		return debug.SetMemoryLimit(-1)
	}
	limit := c.CacheBudget() + MemoryHeadroom
	if limit <= 0 {
		limit = math.MaxInt64
	}
	debug.SetMemoryLimit(limit)
	return limit
}
