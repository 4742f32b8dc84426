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
	n := len(sorted)
	if n == 0 {
		return zero
	}
	// The epsilon keeps float error in q*n (99.9/100*1000 is 999.0000000000001)
	// from pushing an exact rank up by one.
	rank := int(math.Ceil(q*float64(n) - 1e-9))
	return sorted[min(max(rank, 1), n)-1]
}

// Of sorts a copy of samples and returns its q-quantile by NearestRank;
// samples is left as it was.
func Of[T cmp.Ordered](samples []T, q float64) T {
	s := slices.Clone(samples)
	slices.Sort(s)
	return NearestRank(s, q)
}
