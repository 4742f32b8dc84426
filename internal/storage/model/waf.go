package model

import "math"

// LambertW0 is the principal branch of the Lambert W function: the w >= -1
// with w*e^w = x, for x >= -1/e (NaN below). Halley's iteration from a
// branch-point series (near -1/e) or log1p (elsewhere).
func LambertW0(x float64) float64 {
	const minX = -1 / math.E
	switch {
	case x < minX:
		return math.NaN()
	case x == minX:
		return -1
	case x == 0:
		return 0
	}
	w := math.Log1p(x)
	if x < -0.25 {
		p := math.Sqrt(2 * (math.E*x + 1))
		w = -1 + p - p*p/3 + 11.0/72*p*p*p
	} else if x > 3 {
		lx := math.Log(x)
		w = lx - math.Log(lx)
	}
	for range 50 {
		ew := math.Exp(w)
		f := w*ew - x
		step := f / (ew*(w+1) - (w+2)*f/(2*w+2))
		w -= step
		if math.Abs(step) <= 1e-15*(1+math.Abs(w)) {
			break
		}
	}
	return w
}

// DesnoyersWAF is the steady-state write amplification of uniformly random
// single-page writes with FIFO (LRU) cleaning, which greedy cleaning
// approaches for large blocks (Desnoyers, "Analytic modeling of SSD write
// performance", SYSTOR 2012):
//
//	WAF = a / (a + W0(-a e^-a)),  a = physical / user capacity = 1 + op
//
// where op is over-provisioning as a fraction of the user capacity. A
// block is cleaned once the host has written a(1-X) capacities since it
// was written, so its surviving fraction X solves X = e^(-a(1-X)), and each
// freed page costs 1/(1-X) writes. With op so defined the formula gives the
// often-quoted 7.8 at 7%, 3.2 at 20% and 2.5 at 28%; reading op as a
// fraction of the physical capacity (a = 1/(1-op)) would give 7.3, 2.7 and
// 2.0 instead.
func DesnoyersWAF(op float64) float64 {
	if op <= 0 {
		return math.Inf(1)
	}
	a := 1 + op
	return a / (a + LambertW0(-a*math.Exp(-a)))
}
