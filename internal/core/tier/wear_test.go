package tier

import (
	"math"
	"testing"
)

// The VoD paper's §4 example: a 64 GB MLC device (3000 cycles) written at
// 10 MB/s lasts 64 x 1024 x 3000 / (10 x 3600) hours, about 7.6 months.
func TestProjectedLifetimeHours(t *testing.T) {
	got := ProjectedLifetimeHours(64<<30, DefaultEnduranceCycles, 10<<20)
	if want := 64 * 1024 * 3000 / (10 * 3600.0); math.Abs(got-want) > 1e-9 {
		t.Fatalf("lifetime %.3f h, want %.3f h", got, want)
	}
	if got := ProjectedLifetimeHours(64<<30, 3000, 0); got != 0 {
		t.Fatalf("lifetime without writes %.3f h, want 0", got)
	}
}
