package app

import "testing"

// The default configuration's cache budget: a 256 MiB RAM pool, a ring of
// two 4 MiB blocks, the image LSM's 64 MiB memtable and 64 MiB block cache,
// and 4 KiB for each of the 512 blocks of the 2 GiB flash cache.
func TestCacheBudget(t *testing.T) {
	cfg := DefaultConfig()
	if err := cfg.Resolve(); err != nil {
		t.Fatal(err)
	}
	want := int64(256<<20 + 8<<20 + 128<<20 + 512*4<<10)
	if got := cfg.CacheBudget(); got != want {
		t.Fatalf("budget %d, want %d", got, want)
	}
	cfg.NoFlash, cfg.Ring = true, 1<<20
	if got := cfg.CacheBudget(); got != want-7<<20-512*4<<10 {
		t.Fatalf("without flash, a 1 MiB ring: budget %d", got)
	}
}
