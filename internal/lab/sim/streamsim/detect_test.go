package streamsim

import "testing"

func write(off, n int64) *Op { return &Op{Kind: opWrite, Off: off, Len: n} }

func TestDetectorFollowsPatterns(t *testing.T) {
	d := newDetector(4, 16)
	// A random write, then its continuation: the pattern is detected on
	// the second write and followed after.
	if s := d.Stream(write(0, 10)); s != 0 {
		t.Fatalf("first write: stream %d, want 0", s)
	}
	s1 := d.Stream(write(10, 10))
	if s1 == 0 {
		t.Fatal("continuation not detected")
	}
	if s := d.Stream(write(20, 10)); s != s1 {
		t.Fatalf("pattern moved from %d to %d", s1, s)
	}
	if s := d.Stream(write(1000, 10)); s != 0 {
		t.Fatalf("unrelated write: stream %d, want 0", s)
	}
	if got := d.SequentialShare(); got != 0.5 {
		t.Fatalf("sequential share %v, want 0.5", got)
	}
}

// TestDetectorLRU: a fifth pattern takes the least recently used stream.
func TestDetectorLRU(t *testing.T) {
	d := newDetector(4, 16)
	streams := map[int64]int{}
	for p := int64(0); p < 5; p++ {
		base := p * 1 << 20
		d.Stream(write(base, 10))
		streams[p] = d.Stream(write(base+10, 10))
	}
	if streams[4] != streams[0] {
		t.Fatalf("fifth pattern got stream %d, want the oldest pattern's %d (all: %v)", streams[4], streams[0], streams)
	}
	seen := map[int]bool{}
	for p := int64(0); p < 4; p++ {
		seen[streams[p]] = true
	}
	if len(seen) != 4 || seen[0] {
		t.Fatalf("four patterns should get streams 1-4: %v", streams)
	}
	// The first pattern lost its stream: its next write is random.
	if s := d.Stream(write(20, 10)); s != 0 {
		t.Fatalf("evicted pattern kept stream %d", s)
	}
}
