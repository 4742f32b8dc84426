package streamsim

import (
	"math"
	"sort"
)

// distinct is the expected number of distinct keys, and of distinct cells
// (a key's fields), hit by n independent draws of YCSB's Zipfian request
// distribution over keys ranks (p(k) proportional to 1/k^s, s the exponent), each
// draw updating one of fields fields uniformly: D(n) = sum over items of
// 1 - exp(-n p). An LSM's memtable and SSTables hold one version per cell,
// so this is how much an update stream shrinks when it is flushed and
// compacted; it needs no per-key state, so it scales to the paper's
// hundred million keys. Ranks are summed exactly up to 1024, then in
// buckets 1% wide; D is tabulated on a grid 2% apart and interpolated.
type distinct struct {
	keys   float64
	fields float64
	grid   []float64 // n
	dKeys  []float64 // D over keys at grid[i]
	dCells []float64 // D over cells at grid[i]
}

// bucket is a run of ranks with about the same probability.
type bucket struct{ count, p float64 }

func newDistinct(keys int64, s float64, fields int) *distinct {
	bs := zipfBuckets(keys, s)
	d := &distinct{keys: float64(keys), fields: float64(fields)}
	top := 1e3 * float64(keys) * float64(fields)
	for n := 1.0; ; n *= 1.02 {
		d.grid = append(d.grid, n)
		d.dKeys = append(d.dKeys, sumDistinct(bs, n, 1))
		d.dCells = append(d.dCells, sumDistinct(bs, n, float64(fields)))
		if n > top {
			break
		}
	}
	return d
}

// zipfBuckets groups ranks 1..keys into buckets of near-equal probability.
func zipfBuckets(keys int64, s float64) []bucket {
	var bs []bucket
	var total float64
	add := func(lo, hi float64, w float64) {
		bs = append(bs, bucket{count: hi - lo, p: w})
		total += w
	}
	k := int64(1)
	for ; k <= min(keys, 1024); k++ {
		add(float64(k), float64(k+1), math.Pow(float64(k), -s))
	}
	for lo := float64(k); lo <= float64(keys); {
		hi := min(math.Ceil(lo*1.01), float64(keys)+1)
		add(lo, hi, powIntegral(lo-0.5, hi-0.5, s))
		lo = hi
	}
	for i := range bs {
		bs[i].p /= total * bs[i].count // per-key probability
	}
	return bs
}

// powIntegral is the integral of x^-s from a to b.
func powIntegral(a, b, s float64) float64 {
	if math.Abs(s-1) < 1e-12 {
		return math.Log(b / a)
	}
	return (math.Pow(b, 1-s) - math.Pow(a, 1-s)) / (1 - s)
}

// sumDistinct is the expected distinct items among n draws when every key
// is split into split equally likely items.
func sumDistinct(bs []bucket, n, split float64) float64 {
	var s float64
	for _, b := range bs {
		s += b.count * split * -math.Expm1(-n*b.p/split)
	}
	return s
}

// Keys is the expected number of distinct keys among n draws.
func (d *distinct) Keys(n float64) float64 { return d.interp(n, d.dKeys, 1) }

// Cells is the expected number of distinct cells among n draws.
func (d *distinct) Cells(n float64) float64 { return d.interp(n, d.dCells, d.fields) }

func (d *distinct) interp(n float64, ys []float64, split float64) float64 {
	if n <= 1 {
		return max(n, 0)
	}
	i := sort.SearchFloat64s(d.grid, n)
	if i >= len(d.grid) {
		return d.keys * split
	}
	x0, x1 := d.grid[i-1], d.grid[i]
	return ys[i-1] + (ys[i]-ys[i-1])*(n-x0)/(x1-x0)
}
