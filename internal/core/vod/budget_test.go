package vod

import (
	"math"
	"testing"
	"time"
)

// TestLifetimePaperExample is VoD §5's example: 128 GB of MLC written at
// 100 MB/s lasts 3641 hours (152 days).
func TestLifetimePaperExample(t *testing.T) {
	h := Lifetime(128*GB, 10000, float64(100*MB)).Hours()
	if math.Abs(h-3641) > 0.5 {
		t.Fatalf("lifetime %.1f h, paper 3641", h)
	}
	if r := LifetimeRate(128*GB, 10000, Lifetime(128*GB, 10000, 1e6)); math.Abs(r-1e6) > 1 {
		t.Fatalf("LifetimeRate does not invert Lifetime: %v", r)
	}
	if Lifetime(GB, 10000, 0) != time.Duration(math.MaxInt64) {
		t.Fatal("no writes should last forever")
	}
}

func TestWriteBudgetDebt(t *testing.T) {
	b := WriteBudget{Rate: 10, Burst: 50}
	if !b.Allow(0) {
		t.Fatal("a fresh budget refused")
	}
	b.Spend(0, 100) // balance 50 - 100 = -50
	if b.Allow(4 * time.Second) {
		t.Fatal("allowed while 10 bytes in debt")
	}
	if !b.Allow(5 * time.Second) {
		t.Fatal("refused once the debt is repaid")
	}
	if got := b.Balance(time.Hour); got != 50 {
		t.Fatalf("balance %v, want the burst cap 50", got)
	}
	var free WriteBudget
	free.Spend(0, 1<<40)
	if !free.Allow(0) {
		t.Fatal("the zero budget is unlimited")
	}
}

// TestDecayRenormalizes runs far past the renormalization point and checks
// that counts stay right and comparable.
func TestDecayRenormalizes(t *testing.T) {
	c, _ := NewLFU[int](LFUOptions{Capacity: 10, HalfLife: time.Minute})
	c.Request(0, 1, 1)
	for i := range 200 {
		c.Request(time.Duration(i)*time.Minute, 2, 1)
	}
	now := 200 * time.Minute
	if got := c.Count(now, 2); math.Abs(got-1) > 1e-9 { // sum of 2^-k for k = 1..200
		t.Fatalf("count %v, want 1", got)
	}
	if got := c.Count(now, 1); got > 1e-50 {
		t.Fatalf("200 half-lives old request still counts %v", got)
	}
	if c.d.origin == 0 {
		t.Fatal("origin never moved")
	}
}
