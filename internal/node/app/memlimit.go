package app

import (
	"log/slog"
	"os"
	"runtime/debug"

	"github.com/strata-media/strata/internal/media/images"
)

// MemoryMargin is the part of the node's memory limit beyond its
// configured tiers: the Go runtime, requests in flight (the engine's
// capacity-tier loads, bodies being streamed), flash I/O buffers.
const MemoryMargin = 128 << 20

// MemoryLimit returns the soft memory limit of a node with cfg: the RAM
// pool, the ring between RAM and flash, the image store's decode budget,
// memtable and block cache when it runs, and MemoryMargin. Without a limit the Go runtime lets the
// heap grow to about twice the live RAM pool before collecting (GOGC=100),
// past what the configuration says the node uses.
func MemoryLimit(cfg *Config) int64 {
	ring := int64(cfg.Ring)
	if ring == 0 {
		block := int64(cfg.BlockSize)
		if block == 0 {
			block = 4 << 20
		}
		ring = max(2*block, 16<<20) // the tier's default ring
	}
	limit := int64(cfg.RAM) + ring + MemoryMargin
	if !cfg.Images.Disabled {
		// An upload's decode, and Badger's memtable and block cache.
		limit += int64(cfg.Images.MaxDecode) + images.DefaultMemTableSize + images.DefaultBlockCacheSize
	}
	return limit
}

// ApplyMemoryLimit sets the Go runtime's soft memory limit
// (debug.SetMemoryLimit) to MemoryLimit(cfg), unless the operator set
// GOMEMLIMIT, which wins. It returns the limit in force.
func ApplyMemoryLimit(cfg *Config, log *slog.Logger) int64 {
	if v := os.Getenv("GOMEMLIMIT"); v != "" {
		limit := debug.SetMemoryLimit(-1)
		log.Info("memory limit from GOMEMLIMIT", "bytes", limit)
		return limit
	}
	limit := MemoryLimit(cfg)
	debug.SetMemoryLimit(limit)
	log.Info("memory limit from the configuration", "bytes", limit, "ram", int64(cfg.RAM))
	return limit
}
