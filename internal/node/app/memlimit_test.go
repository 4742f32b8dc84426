package app

import (
	"testing"

	"github.com/strata-media/strata/internal/bytesize"
)

// The default configuration's cache budget: a 256 MiB RAM pool, a ring of
// two 4 MiB blocks, the image LSM's 64 MiB memtable and 64 MiB block cache,
// 4 KiB for each of the 512 blocks of the 2 GiB flash cache, and 64 MiB
// of flash hit buffers (a quarter of the pool).
func TestCacheBudget(t *testing.T) {
	cfg := DefaultConfig()
	if err := cfg.Resolve(); err != nil {
		t.Fatal(err)
	}
	want := int64(256<<20 + 8<<20 + 128<<20 + 512*4<<10 + 64<<20)
	if got := cfg.CacheBudget(); got != want {
		t.Fatalf("budget %d, want %d", got, want)
	}
	cfg.NoFlash, cfg.Ring = true, 1<<20
	if got := cfg.CacheBudget(); got != want-7<<20-512*4<<10-64<<20 {
		t.Fatalf("without flash, a 1 MiB ring: budget %d", got)
	}
	cfg.NoFlash = false
	for _, c := range []struct{ ram, set, want int64 }{
		{256 << 20, 0, 64 << 20}, {16 << 20, 0, 16 << 20}, {4 << 30, 0, 256 << 20}, {256 << 20, 8 << 20, 8 << 20},
	} {
		cfg.RAM, cfg.FlashHitMemory = bytesize.Value(c.ram), bytesize.Value(c.set)
		if got := cfg.HitMemory(); got != c.want {
			t.Errorf("ram %d, flash_hit_memory %d: hit memory %d, want %d", c.ram, c.set, got, c.want)
		}
	}
}
