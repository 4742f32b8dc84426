package tier

import (
	"fmt"
	"math"
)

// Objective is what the flash policy (BlockReinsert's and BlockTinyLFU's
// victim choice, BlockReinsert's admission) maximizes: the share of
// requests served from the cache or the share of bytes. A block holds
// bytes, so a policy ranks what it holds by value per byte; that value is
// a segment's request rate divided by its size for the hit ratio, and its
// request rate alone for the byte hit ratio (every hit on a segment saves
// its size in origin bytes). An edge whose origin link is the limit
// serves more viewers the fewer bytes it fetches: ObjectiveBytes.
type Objective int

// The objectives. The zero value, ObjectiveRequests, is the core's
// default.
const (
	// ObjectiveRequests maximizes the hit ratio: small segments that
	// are requested as often as large ones are worth more per byte.
	ObjectiveRequests Objective = iota
	// ObjectiveBytes maximizes the byte hit ratio: a segment is worth
	// its request rate per byte whatever its size.
	ObjectiveBytes
	// ObjectiveBalanced is ObjectiveBytes leaning toward the hit ratio:
	// a hit on a segment is worth its size to the power
	// BalancedExponent, so a segment's worth per byte falls slowly with
	// its size (ObjectiveRequests is the exponent 0, ObjectiveBytes 1).
	// It keeps the byte objective's defaults (group weight, window,
	// reinsertion share).
	ObjectiveBalanced
)

var objectiveNames = [...]string{ObjectiveRequests: "requests", ObjectiveBytes: "bytes", ObjectiveBalanced: "balanced"}

// String returns the objective's name as ParseObjective accepts it.
func (o Objective) String() string {
	if o >= 0 && int(o) < len(objectiveNames) {
		return objectiveNames[o]
	}
	return fmt.Sprintf("Objective(%d)", int(o))
}

// ParseObjective parses "requests", "bytes" or "balanced".
func ParseObjective(s string) (Objective, error) {
	for o, n := range objectiveNames {
		if n == s {
			return Objective(o), nil
		}
	}
	return 0, fmt.Errorf("tier: unknown objective %q (want requests, bytes or balanced)", s)
}

// weight is what one estimated request of a segment of size bytes is
// worth under o: one hit, size bytes saved, or size^BalancedExponent.
func (o Objective) weight(size int64) float64 {
	switch o {
	case ObjectiveBytes:
		return float64(max(size, 1))
	case ObjectiveBalanced:
		return math.Pow(float64(max(size, 1)), BalancedExponent)
	}
	return 1
}

// perByte reports whether o weighs hits by size and so takes the byte
// objective's defaults (BytesGroupShrink, BytesWindowFactor,
// BytesReinsertShare).
func (o Objective) perByte() bool { return o == ObjectiveBytes || o == ObjectiveBalanced }

// ObjectiveBytes' defaults. Under the byte objective a segment's worth per
// byte is its request rate, shared by its rendition directory (titles are
// drawn by popularity, segments uniformly), so the group's rate is the
// estimate and the window is longer, to tell apart groups of a few
// requests per segment. strata-lab sim peers, reinsert with the byte
// objective, byte hit ratio on the run's trace / a 100k-request steady
// trace: group weight 0.8 and window x1 0.256 / 0.267; weight 1 0.264 /
// 0.291; weight 1 and window x4 0.287 / 0.287
// (docs/decisions/0021-byte-objective-at-the-edge.md).
const (
	// BytesGroupShrink is GroupShrink's default with ObjectiveBytes.
	BytesGroupShrink = 1.0
	// BytesWindowFactor multiplies FreqWindow's default with
	// ObjectiveBytes.
	BytesWindowFactor = 4
	// BytesReinsertShare is ReinsertShare's default with ObjectiveBytes:
	// an edge's large segments fill a block's reinsertion share with few
	// rescues, each a rewrite of megabytes, for little gain. strata-lab sim
	// peers (reinsert as in decision 0022), the run's trace / a 100k steady
	// trace, byte hit ratio at flash GB/h: share 0.5 0.281 at 83.9 /
	// 0.305 at 4.4; 0.25 0.276 at 54.8 / 0.296 at 1.5; 0.125 0.279 at
	// 46.7 / 0.299 at 1.6; 0.0625 0.281 at 37.2 / 0.303 at 2.0. Live, the
	// side by side's Strata alone (docs/results/2026-11-24-peers/earlier/
	// reinsert-share): flash bytes written per
	// byte served 0.364, 0.245, 0.200 for 0.25, 0.125, 0.0625, byte hit
	// ratio 0.273, 0.266, 0.277.
	BytesReinsertShare = 0.0625
)

// BalancedExponent is ObjectiveBalanced's exponent of the size. strata
// sim peers (edge keys, reinsert), hit ratio / byte hit ratio on the
// 400 Mbit/s run's trace, the 1600 Mbit/s run's trace and a 100k steady
// trace: exponent 1 (bytes) 0.234/0.269, 0.239/0.308, 0.240/0.303;
// 0.9 0.249/0.266, 0.283/0.300, 0.287/0.297; 0.85 0.258/0.266,
// 0.311/0.302, 0.311/0.291; 0.8 0.270/0.263, 0.334/0.292, 0.328/0.284;
// 0 (requests) 0.295/0.229, 0.417/0.263, 0.450/0.255. Live at 1600
// Mbit/s, 0.85 gave 0.314/0.301 against bytes' 0.229/0.321: more hits,
// more origin bytes, so not the edge's default
// (docs/decisions/0025-balanced-objective.md).
const BalancedExponent = 0.85
