package vod

import (
	"math"
	"time"
)

// renormAt is how many half-lives the decay origin may fall behind before
// every score is rescaled (2^48 stays far inside float64's range and keeps
// 4 of its 15-16 digits for a request weighed against the largest score).
const renormAt = 48

// decay weighs requests by age with forward decay (Cormode et al., ICDE
// 2009): a request at time t adds 2^((t - origin) / halfLife) to its
// file's score, so scores never need updating as time passes; the count at
// now, in requests, is score x 2^-((now - origin) / halfLife). Scores of
// different files compare directly at any time. halfLife 0 means no decay
// (every request adds 1).
type decay struct {
	halfLife time.Duration
	origin   time.Duration
}

// weight is what a request at now adds to a score.
func (d *decay) weight(now time.Duration) float64 {
	if d.halfLife <= 0 {
		return 1
	}
	return math.Exp2(float64(now-d.origin) / float64(d.halfLife))
}

// count turns a score into requests at now.
func (d *decay) count(score float64, now time.Duration) float64 {
	if d.halfLife <= 0 {
		return score
	}
	return score / d.weight(now)
}

// shift returns the factor every score must be multiplied by, after moving
// the origin up to now, or 1 when the origin is recent enough.
func (d *decay) shift(now time.Duration) float64 {
	if d.halfLife <= 0 || now-d.origin < renormAt*d.halfLife {
		return 1
	}
	k := (now - d.origin) / d.halfLife
	d.origin += k * d.halfLife
	return math.Exp2(-float64(k))
}
