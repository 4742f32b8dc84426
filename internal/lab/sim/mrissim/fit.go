package mrissim

// The paper's numbers (MRIS §4.4), for comparison.
var (
	paperRatios = []int{1, 2, 4, 8, 16, 32, 64}
	// Table 2: speedup over HDD in ops/s.
	paperOpsSpeedup = map[string][]float64{
		"SSD":    {3.89, 4.68, 5.79, 7.52, 8.04, 7.60, 7.64},
		"Hybrid": {0.44, 0.86, 1.39, 2.69, 3.56, 4.46, 5.78},
	}
	// Table 4: speedup over HDD in MB/s.
	paperMBSpeedup = map[string][]float64{
		"SSD":    {3.88, 4.68, 5.67, 7.33, 8.35, 7.87, 7.76},
		"Hybrid": {0.45, 0.88, 1.33, 2.61, 3.73, 4.62, 5.86},
	}
	// Table 3: costs of a small and a large read in microseconds.
	paperCosts = costs{SmallFlash: 1482, SmallHDD: 13238, LargeFlash: 6542, LargeHDD: 37599}
)

// A line is a read cost model fitted to one setup: a round of ratio small
// reads and one large read takes Small*ratio + Large microseconds (the
// denominators of MRIS equations 1-3).
type line struct {
	Small float64 `json:"small_us"`
	Large float64 `json:"large_us"`
	R2    float64 `json:"r2"`
}

// costs are MRIS Table 3's variables, in microseconds: t_SF, t_SH, t_LF,
// t_LH.
type costs struct {
	SmallFlash float64 `json:"t_sf_us"`
	SmallHDD   float64 `json:"t_sh_us"`
	LargeFlash float64 `json:"t_lf_us"`
	LargeHDD   float64 `json:"t_lh_us"`
}

// ops is equations 1-3: operations per second at ratio.
func (c costs) ops(small, large float64, ratio int) float64 {
	return 1e6 * float64(ratio+1) / (small*float64(ratio) + large)
}

// mb is equation 5 (and its SSD and HDD analogues): MB/s at ratio for
// objects of smallB and largeB bytes.
func (c costs) mb(small, large float64, ratio int, smallB, largeB int64) float64 {
	return float64(int64(ratio)*smallB+largeB) / (small*float64(ratio) + large)
}

// fitLine fits T(ratio) = Small*ratio + Large, in microseconds per round,
// to one setup's read results by least squares.
func fitLine(ratios []int, res []Result, reads int) line {
	var xs, ys []float64
	for i, r := range ratios {
		rounds := float64(reads) / float64(r)
		xs = append(xs, float64(r))
		ys = append(ys, res[i].Seconds*1e6/rounds)
	}
	slope, icept, r2 := leastSquares(xs, ys)
	return line{Small: slope, Large: icept, R2: r2}
}

// leastSquares fits y = a*x + b and returns a, b and R².
func leastSquares(xs, ys []float64) (a, b, r2 float64) {
	n := float64(len(xs))
	var sx, sy, sxx, sxy float64
	for i := range xs {
		sx, sy, sxx, sxy = sx+xs[i], sy+ys[i], sxx+xs[i]*xs[i], sxy+xs[i]*ys[i]
	}
	den := n*sxx - sx*sx
	if den == 0 {
		return 0, sy / n, 0
	}
	a = (n*sxy - sx*sy) / den
	b = (sy - a*sx) / n
	var ssRes, ssTot float64
	for i := range xs {
		e, d := ys[i]-(a*xs[i]+b), ys[i]-sy/n
		ssRes, ssTot = ssRes+e*e, ssTot+d*d
	}
	if ssTot > 0 {
		r2 = 1 - ssRes/ssTot
	}
	return a, b, r2
}
