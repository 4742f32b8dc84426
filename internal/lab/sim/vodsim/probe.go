package vodsim

import (
	"math/rand/v2"
	"time"

	"github.com/strata-media/strata/internal/lab/sim/des"
	"github.com/strata-media/strata/internal/storage/model"
)

// probeResult is a device model's 1 MB random-read throughput: what the
// paper measured with xdd to set each device's stream bandwidth.
type probeResult struct {
	Device string  `json:"device"`
	Depth  int     `json:"depth"`
	MBps   float64 `json:"mbps"`
	// Paper is the paper's measured value for the device, MB/s.
	Paper float64 `json:"paper_mbps"`
}

// probeReads runs depth closed-loop 1 MB random reads on a preset for dur
// and returns the throughput. SSDs are filled first (reads of unwritten
// pages would not touch flash).
func probeReads(preset string, capacity int64, depth int, dur time.Duration, seed uint64) (probeResult, error) {
	var m model.Model
	var err error
	if capacity > 0 {
		m, err = newSSD(preset, capacity)
	} else {
		m, err = model.NewPreset(preset)
	}
	if err != nil {
		return probeResult{}, err
	}
	if f, ok := m.(model.Filler); ok {
		f.Fill(0, m.Size())
	}
	l := &des.Loop{}
	w := &deviceLoad{l: l, d: des.NewDisk(l, m), size: mb, rng: rand.New(rand.NewPCG(seed, 0x9e0b)), end: dur,
		read: make([]float64, max(int(dur/time.Second), 1)), write: make([]float64, 1)}
	w.closed(depth, 0)
	l.RunUntil(dur)
	var total float64
	for _, b := range w.read {
		total += b
	}
	return probeResult{Device: preset, Depth: depth, MBps: mbps(total / dur.Seconds())}, nil
}

// wafResult is the write amplification a cache's write pattern causes on
// an SSD model.
type wafResult struct {
	Device  string  `json:"device"`
	Pattern string  `json:"pattern"`
	Extent  int64   `json:"extent"`
	WAF     float64 `json:"waf"`
}

// measureWAF writes volume bytes in aligned extents at random extent slots
// of a filled drive, each extent sequentially in 1 MB requests, and
// returns the FTL's write amplification: interval caching's buffer writes
// are 1 MB blocks wherever the free list has one (extent 1 MB); LFU's
// copies are whole files (extent = a file).
func measureWAF(preset string, capacity, extent, volume int64, seed uint64) (wafResult, error) {
	ssd, err := newSSD(preset, capacity)
	if err != nil {
		return wafResult{}, err
	}
	ssd.Age(model.Aging{Fill: 1})
	rng := rand.New(rand.NewPCG(seed, 0x3af))
	slots := ssd.Size() / extent
	var now time.Duration
	for written := int64(0); written < volume; written += extent {
		base := rng.Int64N(slots) * extent
		for off := int64(0); off < extent; off += mb {
			now = ssd.Submit(now, model.Request{Op: model.Write, Offset: base + off, Length: min(mb, extent-off)})
		}
	}
	return wafResult{Device: preset, Extent: extent, WAF: ssd.Stats().WAF()}, nil
}
