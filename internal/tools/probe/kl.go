package probe

import (
	"maps"
	"math"
	"slices"
	"time"
)

// DefaultBinsPerOctave is the histogram resolution of KL: 4 bins per
// doubling of latency, each about 19% wide.
const DefaultBinsPerOctave = 4

// KL returns the Kullback-Leibler divergence D(p || q), in nats, between the
// latency distributions of samples p and q (FlashStream §3.1 compares
// random writes p against sequential writes q).
//
// Estimator: both samples are binned on one fixed logarithmic grid, bin k
// holding latencies in [2^(k/b), 2^((k+1)/b)) nanoseconds for b bins per
// octave; the support is the set of bins either sample occupies; each
// bin's count gets 1/2 added before normalizing (Krichevsky-Trofimov
// smoothing), so a bin one sample never hit costs a large but finite
// penalty instead of an infinity; and the plug-in sum over the support of
// p_i ln(p_i / q_i) is returned. A fixed grid (rather than one stretched
// over the samples' range) keeps two nearly constant distributions from
// being split by an arbitrarily fine grid, and smoothing only occupied
// bins keeps a wide gap between two small samples from drowning them in
// pseudo-counts. Identical samples give 0; empty input gives 0.
func KL(p, q []time.Duration, binsPerOctave int) float64 {
	if len(p) == 0 || len(q) == 0 {
		return 0
	}
	if binsPerOctave <= 0 {
		binsPerOctave = DefaultBinsPerOctave
	}
	cp, cq := map[int]float64{}, map[int]float64{}
	for _, b := range binsOf(p, binsPerOctave) {
		cp[b]++
	}
	for _, b := range binsOf(q, binsPerOctave) {
		cq[b]++
	}
	support := maps.Clone(cp)
	maps.Copy(support, cq)
	const alpha = 0.5
	np := float64(len(p)) + alpha*float64(len(support))
	nq := float64(len(q)) + alpha*float64(len(support))
	d := 0.0
	for _, b := range slices.Sorted(maps.Keys(support)) { // a fixed order: reproducible sums
		pi, qi := (cp[b]+alpha)/np, (cq[b]+alpha)/nq
		d += pi * math.Log(pi/qi)
	}
	return max(d, 0)
}

// binsOf maps each latency to its bin on the logarithmic grid.
func binsOf(xs []time.Duration, perOctave int) []int {
	b := make([]int, len(xs))
	for i, x := range xs {
		b[i] = int(math.Floor(math.Log2(float64(max(x, 1))) * float64(perOctave)))
	}
	return b
}
