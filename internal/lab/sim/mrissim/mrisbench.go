// Package mrissim reproduces the MRIS evaluation (§4.3 writes, §4.4
// reads, Tables 1-4, equations 1-5) for Strata's image store: a
// Badger-like key/value store whose LSM tree and value log are placed on
// flash or disk per MRIS Table 1, driven in virtual time over the device
// models (internal/lab/sim, internal/storage/model), and the same workload through
// the real store's Badger configuration on real directories (wall clock).
package mrissim

import (
	"fmt"
	"time"
)

// Config sizes and parameterizes a benchmark run. Zero fields take the
// defaults of the scale (see Scales).
type Config struct {
	// Scale names the size: "paper" (MRIS §4.3-4.4) or "small" (CI).
	Scale string
	// Groups is the number of groups inserted by the write benchmark
	// (MRIS §4.3: 10,000 groups of one small and one large object).
	Groups int
	// DBGroups is the database the read benchmark reads in the simulator
	// (MRIS §4.4: 100,000 groups).
	DBGroups int
	// RealDBGroups is the database of the real-directory read benchmark:
	// the groups its write benchmark inserted.
	RealDBGroups int
	// Reads is the number of small objects read per ratio (§4.4: 10,000).
	Reads int
	// Ratios are the small reads per large read (§4.4: 1 to 64).
	Ratios []int
	// SmallSize and LargeSize are the objects' sizes in bytes (§4.3: 8 KB
	// and 128 KB).
	SmallSize, LargeSize int64
	// SizeThreshold is the value log threshold (§4.3: 128 KB, so the large
	// objects go to the LargeSpace).
	SizeThreshold int64
	// MemTableSize and BlockCacheSize are the simulated store's LSM write
	// buffer and block cache, Strata's image store defaults.
	MemTableSize, BlockCacheSize int64
	// CPUPerOp is the simulated software time of one get or put.
	CPUPerOp time.Duration
	// SSD and HDD name the device models (see Devices).
	SSD, HDD string
	// Real runs the workload on real directories through Badger too.
	Real bool
	// RealDir is where the real run makes its two directories (default
	// the system's temporary directory).
	RealDir string
	// RealSync fsyncs each real insert (Strata's store does; LevelDB's
	// default, which MRIS's benchmark used, does not).
	RealSync bool
	// Seed seeds the key orders and the reads.
	Seed uint64
}

// scales are the predefined sizes.
var scales = map[string]Config{
	"paper": {Groups: 10_000, DBGroups: 100_000, RealDBGroups: 10_000, Reads: 10_000},
	"small": {Groups: 2_000, DBGroups: 10_000, RealDBGroups: 2_000, Reads: 2_000},
}

// withDefaults fills zero fields from the scale and the paper.
func (c Config) withDefaults() (Config, error) {
	if c.Scale == "" {
		c.Scale = "paper"
	}
	sc, ok := scales[c.Scale]
	if !ok {
		return c, fmt.Errorf("mrissim: unknown scale %q (want small or paper)", c.Scale)
	}
	def(&c.Groups, sc.Groups)
	def(&c.DBGroups, sc.DBGroups)
	def(&c.RealDBGroups, sc.RealDBGroups)
	def(&c.Reads, sc.Reads)
	if c.Ratios == nil {
		c.Ratios = []int{1, 2, 4, 8, 16, 32, 64}
	}
	def(&c.SmallSize, 8<<10)
	def(&c.LargeSize, 128<<10)
	def(&c.SizeThreshold, 128<<10)
	def(&c.MemTableSize, 64<<20)
	def(&c.BlockCacheSize, 64<<20)
	def(&c.CPUPerOp, 20*time.Microsecond)
	def(&c.SSD, DefaultSSD)
	def(&c.HDD, DefaultHDD)
	def(&c.Seed, 1)
	return c, nil
}

func def[T comparable](p *T, v T) {
	var zero T
	if *p == zero {
		*p = v
	}
}
