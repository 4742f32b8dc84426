package model

import (
	"math"
	"time"
)

// seekCurve is a disk's seek time as a function of the normalized distance
// x = cylinders / total: a + b*sqrt(x) up to xc (the actuator accelerates
// and decelerates), then the tangent line (it coasts) up to the full stroke.
// Times are in seconds.
type seekCurve struct {
	a, b, xc  float64
	cylinders int
}

// time returns the seek time over d cylinders.
func (s seekCurve) time(d int) time.Duration {
	if d <= 0 {
		return 0
	}
	return time.Duration(s.at(float64(d)/float64(s.cylinders)) * float64(time.Second))
}

func (s seekCurve) at(x float64) float64 {
	if x <= s.xc {
		return s.a + s.b*math.Sqrt(x)
	}
	rc := math.Sqrt(s.xc)
	return s.a + s.b*rc + s.b/(2*rc)*(x-s.xc)
}

// fitSeek finds the curve through the track-to-track and full-stroke times
// whose mean over uniformly random pairs of cylinders equals the average
// seek time. The mean grows with xc (from a straight line, mean t2t +
// (full-t2t)/3, to a pure square root), so xc is found by bisection; an
// average outside that range is clamped to the nearest end.
func fitSeek(t2t, avg, full time.Duration, cylinders int) seekCurve {
	x1 := 1 / float64(cylinders)
	lo, hi := x1, 1.0
	target := avg.Seconds()
	var s seekCurve
	for range 60 {
		s = seekThrough(t2t.Seconds(), full.Seconds(), x1, (lo+hi)/2, cylinders)
		if seekMean(s) < target {
			lo = s.xc
		} else {
			hi = s.xc
		}
	}
	return s
}

// seekThrough is the curve with knee xc through (x1, t2t) and (1, full).
func seekThrough(t2t, full, x1, xc float64, cylinders int) seekCurve {
	g := math.Sqrt(xc) + (1-xc)/(2*math.Sqrt(xc))
	b := (full - t2t) / (g - math.Sqrt(x1))
	return seekCurve{a: t2t - b*math.Sqrt(x1), b: b, xc: xc, cylinders: cylinders}
}

// seekMean integrates s(x) * 2(1-x) over [0, 1] (Simpson's rule on sqrt-
// spaced nodes, which are dense where the curve is steep).
func seekMean(s seekCurve) float64 {
	const n = 512 // even
	sum := 0.0
	for i := 0; i <= n; i++ {
		u := float64(i) / n
		x := u * u // dx = 2u du
		w := 2.0
		if i == 0 || i == n {
			w = 1
		} else if i%2 == 1 {
			w = 4
		}
		sum += w * s.at(x) * 2 * (1 - x) * 2 * u
	}
	return sum / (3 * n)
}
