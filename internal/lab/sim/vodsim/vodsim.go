// Package vodsim reproduces the VoD paper's evaluation (flash-ssd-for-vod-*:
// §4's SSD measurements, §6's simulation of interval caching in RAM against
// file-level LFU on flash, §6.4's cost model) and goes beyond it with a
// dynamic LFU under shifting popularity. The policies are internal/core/vod's,
// the same ones the live server runs; time is internal/lab/sim's event loop;
// devices are internal/storage/model's.
package vodsim

import (
	"time"

	"github.com/strata-media/strata/internal/core/vod"
)

// Units: the paper's KB, MB and GB are binary (245 KB/s x 3600 s = 862 MB;
// 155 MB/s / 245 KB/s = 647 streams).
const (
	kb = vod.KB
	mb = vod.MB
	GB = vod.GB
)

// params is one simulated system and workload (VoD §6.1).
type params struct {
	// Titles is the library size (§6.1: 300).
	Titles int
	// Length is every title's duration (§6.1: 60 min).
	Length time.Duration
	// Bitrate is every title's constant rate, bytes/s (§6.1: 245 KB/s).
	Bitrate int64
	// ZipfS is the popularity exponent s of p(i) ~ 1/i^s (§6.1's 0.271 is
	// s: see docs/design.md's popularity convention).
	ZipfS float64
	// Rate is the Poisson arrival rate, requests per second.
	Rate float64
	// Duration is the simulated time (§6.1: 10 hours), from an empty
	// system; averages are over all of it, as the paper defines them.
	Duration time.Duration
	// Disk is the disk tier's stream bandwidth, bytes/s (§6.1: 100 MB/s,
	// 1 MB random reads of 4 Cheetah 15K.6 in RAID-0); vod.Unlimited for
	// no limit.
	Disk int64
	// Shift, when set, changes popularity during the run.
	Shift Shift
	// Seed selects the arrivals; runs with equal seeds and workloads see
	// the same requests, whatever the policy.
	Seed uint64
}

// paperParams are §6.1's defaults at arrival rate 0.5 (§6.2).
func paperParams() params {
	return params{
		Titles: 300, Length: time.Hour, Bitrate: 245 * kb, ZipfS: 0.271,
		Rate: 0.5, Duration: 10 * time.Hour, Disk: 100 * mb, Seed: 1,
	}
}

// FileSize is a title's size in bytes (862 MB at the defaults).
func (p params) FileSize() int64 { return int64(p.Length.Seconds() * float64(p.Bitrate)) }

// Result is what one run measured.
type Result struct {
	Policy   string  `json:"policy"`
	Rate     float64 `json:"rate"`
	ZipfS    float64 `json:"zipf_s"`
	LengthM  float64 `json:"length_min"`
	CacheGB  float64 `json:"cache_gb"`
	CacheBW  float64 `json:"cache_mbps"` // flash bandwidth budget, MB/s (0 for RAM)
	DiskBW   float64 `json:"disk_mbps"`  // disk bandwidth budget, MB/s (0: unlimited)
	Arrivals int64   `json:"arrivals"`
	Rejected int64   `json:"rejected"`
	// RejectProb is rejected / arrivals (§6.1).
	RejectProb float64 `json:"reject_prob"`
	// Buffered is the number of streams served from the cache, averaged
	// over the run (§6.1's "average number of buffered streams").
	Buffered float64 `json:"buffered"`
	// PeakBuffered is the most streams the cache served at once.
	PeakBuffered int `json:"peak_buffered"`
	// Streams is the number of admitted streams playing, averaged over the
	// run; PeakStreams the most at once.
	Streams     float64 `json:"streams"`
	PeakStreams int     `json:"peak_streams"`
	// HitRatio is the share of all bytes streamed that the cache served
	// (§6.1: reads served from the cache over all reads).
	HitRatio float64 `json:"hit_ratio"`
	// CacheReadMBps is the cache's mean read bandwidth, MB/s (Fig. 9(b)).
	CacheReadMBps float64 `json:"cache_read_mbps"`
	// CacheWriteMBps is the cache's mean write rate, MB/s: interval
	// caching's buffer writes, or LFU's copies (staging excluded).
	CacheWriteMBps float64 `json:"cache_write_mbps"`
	// Copies is the number of files LFU copied to flash during the run.
	Copies int64 `json:"copies,omitempty"`
	// Windows is the hit ratio per window of the run (when asked for).
	Windows []float64 `json:"windows,omitempty"`
}

// unlimited is a disk without a bandwidth limit.
const unlimited = vod.Unlimited

func mbps(bytesPerSec float64) float64 { return bytesPerSec / float64(mb) }

func gbOf(bytes int64) float64 { return float64(bytes) / float64(GB) }

// gbBytes is x GB in bytes.
func gbBytes(x float64) int64 { return int64(x * float64(GB)) }
