package mrissim

import "math/rand/v2"

// insertOrder is the order in which groups 0..n-1 are inserted: by key
// (sequential) or shuffled (random), MRIS §4.3.
func insertOrder(n int, random bool, seed uint64) []int {
	order := make([]int, n)
	for i := range order {
		order[i] = i
	}
	if random {
		rng := rand.New(rand.NewPCG(seed, 0x4d524953))
		rng.Shuffle(n, func(i, j int) { order[i], order[j] = order[j], order[i] })
	}
	return order
}

// A read is one get of the read benchmark.
type read struct {
	group int
	large bool
}

// readSequence is MRIS §4.4's read workload: reads random small objects
// of a database of groups and, after every ratio of them, the large
// object of the group just read.
func readSequence(reads, groups, ratio int, seed uint64) []read {
	rng := rand.New(rand.NewPCG(seed, uint64(ratio)))
	out := make([]read, 0, reads+reads/ratio)
	for i := range reads {
		g := rng.IntN(groups)
		out = append(out, read{group: g})
		if (i+1)%ratio == 0 {
			out = append(out, read{group: g, large: true})
		}
	}
	return out
}

// A Result is the throughput of one run.
type Result struct {
	Ops     int     `json:"ops"`
	Bytes   int64   `json:"bytes"`
	Seconds float64 `json:"seconds"`
	OpsPerS float64 `json:"ops_per_s"`
	MBPerS  float64 `json:"mb_per_s"` // 10^6 bytes per second
}

func newResult(ops int, bytes int64, seconds float64) Result {
	r := Result{Ops: ops, Bytes: bytes, Seconds: seconds}
	if seconds > 0 {
		r.OpsPerS, r.MBPerS = float64(ops)/seconds, float64(bytes)/seconds/1e6
	}
	return r
}

// readBytes is the object bytes a read sequence returns.
func readBytes(seq []read, small, large int64) int64 {
	var n int64
	for _, r := range seq {
		if r.large {
			n += large
		} else {
			n += small
		}
	}
	return n
}
