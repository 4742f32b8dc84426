package flashstream

import (
	"fmt"
	"time"

	"github.com/strata-media/strata/internal/core/tier"
	"github.com/strata-media/strata/internal/lab/sim/des"
	"github.com/strata-media/strata/internal/storage/model"
	"github.com/strata-media/strata/internal/workload"
)

// scale sizes an experiment. "paper" is FlashStream §5's configuration;
// "small" divides the library, RAM and flash by ten and shortens the runs,
// for CI. The disks keep their full size and speed: a smaller library is
// spread over the whole disk (see NewCatalog), so seeks stay realistic.
type scale struct {
	Name   string
	Titles int   // FlashStream §5.1: 2000 titles, about 545 GB
	RAM    int64 // §5.4 Table 5: 2 GB of DRAM for FlashStream
	SSD    int64 // §5: 75 GB of each SSD used
	// Trial is how long each rate is measured (§5.2: an hour).
	Trial time.Duration
	// FillLimit bounds the warm-up that measures the time to fill the SSD.
	FillLimit time.Duration
	// EnergySSD and TradARAM are Table 5's 100 GB SSD and 12 GB DRAM.
	EnergySSD, TradARAM int64
	// WarmRate is the request rate of warm-ups and of the §5.3 run; the
	// paper does not give one (see WarmRate's use in the report).
	WarmRate float64
	// MaxOutstanding bounds the requests a client keeps in flight: a
	// collapsed system is not offered an unbounded queue. Requests beyond
	// it are misses.
	MaxOutstanding int
}

// scales are the predefined experiment sizes.
var scales = map[string]scale{
	"paper": {Name: "paper", Titles: 2000, RAM: 2 << 30, SSD: 75e9, Trial: time.Hour, FillLimit: 30 * time.Hour,
		EnergySSD: 100e9, TradARAM: 12 << 30, WarmRate: 20, MaxOutstanding: 4096},
	"small": {Name: "small", Titles: 200, RAM: 200 << 20, SSD: 7.5e9, Trial: 10 * time.Minute, FillLimit: 4 * time.Hour,
		EnergySSD: 10e9, TradARAM: 1200 << 20, WarmRate: 20, MaxOutstanding: 4096},
}

// ParseScale returns the named scale.
func ParseScale(name string) (scale, error) {
	s, ok := scales[name]
	if !ok {
		return scale{}, fmt.Errorf("sim: unknown scale %q (want small or paper)", name)
	}
	return s, nil
}

// Setup is the shared input of FlashStream's experiments.
type Setup struct {
	Scale   scale
	Dataset *workload.Dataset
	Zipf    *workload.Zipf
	Seed    uint64
}

// NewSetup builds the §5.1 workload: the DASH dataset (each title one
// source at one bitrate) and Zipf-like popularity with theta 0.2 read as
// s = 1 - theta = 0.8 (docs/design.md's popularity convention).
func NewSetup(sc scale, seed uint64) (*Setup, error) {
	ds := workload.NewDataset(workload.DatasetOptions{Titles: sc.Titles, Seed: seed})
	z, err := workload.NewZipfTheta(sc.Titles, 0.2)
	if err != nil {
		return nil, err
	}
	return &Setup{Scale: sc, Dataset: ds, Zipf: z, Seed: seed}, nil
}

// config names one system configuration of the experiments.
type config struct {
	Name  string
	Build func(l *des.Loop, cat *des.Catalog) (system, error)
}

// ssdModel builds an SSD model sized so that the cache uses the same share
// of it as in the paper (paperUsed of the drive's capacity), and preconditions
// it with a full sequential fill: a drive in service, not a fresh one whose
// unwritten space would hide garbage collection.
func ssdModel(p model.SSDParams, used, paperUsed int64) (*model.SSD, error) {
	c := int64(float64(p.Capacity) * float64(used) / float64(paperUsed))
	if u := p.UnitSize(); u > 0 {
		c = max(c/u, 1) * u
	}
	m, err := model.NewSSD(p.WithCapacity(max(c, used)))
	if err != nil {
		return nil, err
	}
	m.Age(model.Aging{Fill: 1})
	return m, nil
}

// hdd550 is FlashStream's disk: 7200 RPM, 550 GB.
func hdd550() (model.Model, error) { return model.NewHDD(model.Generic7200(550e9)) }

// Fig7Configs are Table 3's five configurations. FlashStream and ZFS run
// on SSD B (OCZ Core V2), flashcache on SSD A (Intel X25-M), as §5 reports
// each worked best.
func (s *Setup) Fig7Configs() []config {
	var out []config
	for _, p := range []tier.BlockPolicy{tier.BlockLRU, tier.BlockLFUMean, tier.BlockLFUMedian} {
		out = append(out, config{Name: "FlashStream(" + policyTitle(p) + ")", Build: s.flashStream(p, 16<<20, false)})
	}
	out = append(out, config{Name: "ZFS", Build: s.zfs()}, config{Name: "Flashcache", Build: s.flashcache()})
	return out
}

func policyTitle(p tier.BlockPolicy) string {
	return map[tier.BlockPolicy]string{tier.BlockLRU: "LRU", tier.BlockLFUMean: "LFU-Mean", tier.BlockLFUMedian: "LFU-Median", tier.BlockFIFO: "FIFO"}[p]
}

func (s *Setup) flashStream(p tier.BlockPolicy, block int64, randomFree bool) func(*des.Loop, *des.Catalog) (system, error) {
	return func(l *des.Loop, cat *des.Catalog) (system, error) {
		ssdM, err := ssdModel(model.OCZCoreV2(), s.Scale.SSD, 75e9)
		if err != nil {
			return nil, err
		}
		hddM, err := hdd550()
		if err != nil {
			return nil, err
		}
		return newFlashStream(l, cat, des.NewDisk(l, ssdM), des.NewDisk(l, hddM), flashStreamOptions{
			Name: "FlashStream(" + policyTitle(p) + ")",
			Tier: tier.Options{RAMBytes: s.Scale.RAM, BlockSize: block, DeviceSize: s.Scale.SSD,
				BlockPolicy: p, RandomFree: randomFree, Seed: s.Seed},
		})
	}
}

func (s *Setup) zfs() func(*des.Loop, *des.Catalog) (system, error) {
	return func(l *des.Loop, cat *des.Catalog) (system, error) {
		ssdM, err := ssdModel(model.OCZCoreV2(), s.Scale.SSD, 75e9)
		if err != nil {
			return nil, err
		}
		hddM, err := hdd550()
		if err != nil {
			return nil, err
		}
		return newZFS(l, cat, des.NewDisk(l, ssdM), des.NewDisk(l, hddM), s.Scale.RAM, s.Scale.SSD)
	}
}

func (s *Setup) flashcache() func(*des.Loop, *des.Catalog) (system, error) {
	return func(l *des.Loop, cat *des.Catalog) (system, error) {
		ssdM, err := ssdModel(model.IntelX25MG1(), s.Scale.SSD, 75e9)
		if err != nil {
			return nil, err
		}
		hddM, err := hdd550()
		if err != nil {
			return nil, err
		}
		return newFlashcache(l, cat, des.NewDisk(l, ssdM), des.NewDisk(l, hddM), s.Scale.RAM, s.Scale.SSD)
	}
}
