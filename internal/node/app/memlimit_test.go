package app

import "testing"

// The limit is the configured RAM, the ring and the margin; the image
// store's decode budget and Badger's caches count only when it runs.
func TestMemoryLimit(t *testing.T) {
	cfg := DefaultConfig()
	cfg.RAM, cfg.Ring = 192<<20, 0
	cfg.Images.Disabled = true
	if got, want := MemoryLimit(&cfg), int64(192<<20+16<<20+MemoryMargin); got != want {
		t.Fatalf("limit %d, want %d", got, want)
	}
	cfg.Images.Disabled = false
	cfg.Images.MaxDecode = 100 << 20
	cfg.Ring = 32 << 20
	if got, want := MemoryLimit(&cfg), int64(192<<20+32<<20+100<<20+128<<20+MemoryMargin); got != want {
		t.Fatalf("limit with images %d, want %d", got, want)
	}
}
