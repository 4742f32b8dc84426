package vod

import (
	"math"
	"time"
)

// A WriteBudget bounds how fast a cache writes flash: a token bucket of
// bytes that fills at Rate up to Burst. A copy may start while the balance
// is not negative and takes its whole size at once, so the balance can go
// into debt by up to one file; over any long window the bytes written are
// at most Rate x window + Burst. The zero WriteBudget is unlimited.
type WriteBudget struct {
	// Rate is the long-run flash write rate allowed, bytes per second;
	// 0 means no limit. LifetimeRate turns a lifetime target into one.
	Rate float64
	// Burst is the most the balance saves up, bytes (default: none, so a
	// copy waits until the debt of the previous one is repaid).
	Burst int64

	balance float64
	last    time.Duration
	started bool
}

// Allow reports whether a copy may start at now (time never goes back).
func (b *WriteBudget) Allow(now time.Duration) bool {
	if b.Rate <= 0 {
		return true
	}
	b.refill(now)
	return b.balance >= 0
}

// Spend takes n bytes from the balance at now.
func (b *WriteBudget) Spend(now time.Duration, n int64) {
	if b.Rate <= 0 {
		return
	}
	b.refill(now)
	b.balance -= float64(n)
}

// Balance is the bytes that may be written at now before the budget is in
// debt (negative while in debt).
func (b *WriteBudget) Balance(now time.Duration) float64 {
	if b.Rate <= 0 {
		return math.Inf(1)
	}
	b.refill(now)
	return b.balance
}

func (b *WriteBudget) refill(now time.Duration) {
	if !b.started {
		b.started, b.last, b.balance = true, now, float64(b.Burst)
		return
	}
	if now > b.last {
		b.balance = min(b.balance+b.Rate*(now-b.last).Seconds(), float64(b.Burst))
		b.last = now
	}
}

// Lifetime is VoD §5's SSD lifetime: a drive of capacity bytes whose cells
// endure cycles program/erase cycles (10,000 for MLC, 100,000 for SLC),
// written at rate bytes per second with perfect wear leveling, lasts
// T = C x 1024 x N / (W x 3600) hours (C in GB, W in MB/s; the paper's
// example: 128 GB written at 100 MB/s, 3641 hours). Write amplification
// multiplies rate; pass rate x WAF to include it. A rate of 0 lasts
// forever (the largest Duration).
func Lifetime(capacity int64, cycles int, rate float64) time.Duration {
	if rate <= 0 {
		return time.Duration(math.MaxInt64)
	}
	secs := float64(capacity) * float64(cycles) / rate
	if secs >= float64(math.MaxInt64)/float64(time.Second) {
		return time.Duration(math.MaxInt64)
	}
	return time.Duration(secs * float64(time.Second))
}

// LifetimeRate inverts Lifetime: the write rate, bytes per second, at which
// a drive of capacity bytes and cycles endurance lasts life.
func LifetimeRate(capacity int64, cycles int, life time.Duration) float64 {
	if life <= 0 {
		return math.Inf(1)
	}
	return float64(capacity) * float64(cycles) / life.Seconds()
}
