package streamsim

import (
	"fmt"
	"time"
)

// Scale sizes the experiments. "paper" is the multi-streamed SSD's 256 GB
// drive of 32 dies; "small" is a 1/16 slice of it (2 dies, 16 GB) with
// every size and rate of the workloads scaled alike, so it ages the same
// way in the same virtual time at 1/16 of the simulation work.
type Scale struct {
	Name string
	Dies int
	// LSMDuration is the measured phase of the LSM workloads (MS Fig. 3
	// plots 40 minutes); Window the throughput window.
	LSMDuration time.Duration
	Window      time.Duration
	// CacheVolume, RandVolume and TraceVolume are the host writes, in
	// drive capacities, of the segment cache, the random-write cache and a
	// trace replay.
	CacheVolume, RandVolume, TraceVolume float64
}

// scales are the predefined sizes.
var scales = map[string]Scale{
	"paper": {Name: "paper", Dies: 32, LSMDuration: 40 * time.Minute, Window: 30 * time.Second,
		CacheVolume: 3, RandVolume: 3, TraceVolume: 3},
	"small": {Name: "small", Dies: 2, LSMDuration: 40 * time.Minute, Window: 30 * time.Second,
		CacheVolume: 3, RandVolume: 3, TraceVolume: 3},
}

// ParseScale returns the named scale.
func ParseScale(name string) (Scale, error) {
	s, ok := scales[name]
	if !ok {
		return Scale{}, fmt.Errorf("streamsim: unknown scale %q (want small or paper)", name)
	}
	return s, nil
}

// factor is the scale's share of the paper's drive.
func (s Scale) factor() float64 { return float64(s.Dies) / paperDies }
