// Package workload generates the papers' request workloads: Zipf-like title
// popularity, the DASH dataset of FlashStream Table 4, and the request
// streams that strata bench and strata-lab sim replay.
package workload

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
)

// Zipf draws ranks 0..n-1 with p(i) proportional to 1/(i+1)^s. The papers
// quote a "Zipf parameter" without saying which law; see docs/design.md's
// popularity convention: FlashStream's 0.2 is theta with s = 1 - theta, the
// VoD paper's 0.271 is the exponent s.
type Zipf struct {
	s   float64
	cdf []float64
}

// NewZipf returns the law over n ranks with exponent s >= 0.
func NewZipf(n int, s float64) (*Zipf, error) {
	if n <= 0 {
		return nil, fmt.Errorf("workload: zipf over %d ranks", n)
	}
	if s < 0 || math.IsNaN(s) || math.IsInf(s, 0) {
		return nil, fmt.Errorf("workload: zipf exponent %v must be >= 0", s)
	}
	z := &Zipf{s: s, cdf: make([]float64, n)}
	var sum float64
	for i := range z.cdf {
		sum += math.Pow(float64(i+1), -s)
		z.cdf[i] = sum
	}
	for i := range z.cdf {
		z.cdf[i] /= sum
	}
	z.cdf[n-1] = 1
	return z, nil
}

// NewZipfTheta returns the law with s = 1 - theta, the VoD literature's
// "Zipf-like with skew theta" (FlashStream §5.1 uses theta = 0.2).
func NewZipfTheta(n int, theta float64) (*Zipf, error) {
	if theta < 0 || theta > 1 {
		return nil, fmt.Errorf("workload: theta %v must be in [0, 1]", theta)
	}
	return NewZipf(n, 1-theta)
}

// S is the exponent.
func (z *Zipf) S() float64 { return z.s }

// N is the number of ranks.
func (z *Zipf) N() int { return len(z.cdf) }

// Draw returns a rank using r.
func (z *Zipf) Draw(r *rand.Rand) int {
	u := r.Float64()
	return sort.SearchFloat64s(z.cdf, u)
}

// P is the probability of rank i.
func (z *Zipf) P(i int) float64 {
	if i == 0 {
		return z.cdf[0]
	}
	return z.cdf[i] - z.cdf[i-1]
}

// TopMass is the probability that a draw falls in the k most popular ranks.
func (z *Zipf) TopMass(k int) float64 {
	if k <= 0 {
		return 0
	}
	return z.cdf[min(k, len(z.cdf))-1]
}
