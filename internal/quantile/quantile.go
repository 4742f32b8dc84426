// Package quantile computes order statistics of samples by one rule, the nearest rank, for every report Strata prints.
package quantile

import (
	"cmp"
	"math"
	"slices"
)

// NearestRank returns the q-quantile (q in [0, 1]) of sorted by the
// nearest-rank rule: the smallest sample with at least a fraction q of the
// samples at or below it, sorted[ceil(q*n)-1]. q = 0.5 is the lower median,
// q = 1 the largest sample; q <= 0 gives the smallest. It returns the zero
// value for no samples. sorted must be in ascending order.
func NearestRank[T cmp.Ordered](sorted []T, q float64) T {
	var zero T
	if len(sorted) == 0 {
		return zero
	}
	return sorted[Rank(int64(len(sorted)), q)-1]
}

// Rank is the 1-based rank of the q-quantile of n > 0 samples by the
// nearest-rank rule, ceil(q*n) clamped to [1, n]: the index (plus one) for
// NearestRank, and the count to accumulate to in a histogram.
func Rank(n int64, q float64) int64 {
	// The epsilon keeps float error in q*n (99.9/100*1000 is
	// 999.0000000000001) from pushing an exact rank up by one.
	rank := int64(math.Ceil(q*float64(n) - 1e-9))
	return min(max(rank, 1), n)
}

// Of sorts a copy of samples and returns its q-quantile by NearestRank;
// samples is left as it was.
func Of[T cmp.Ordered](samples []T, q float64) T {
	s := slices.Clone(samples)
	slices.Sort(s)
	return NearestRank(s, q)
}
