// Package flashstream reproduces FlashStream §5 (MM'13): the tier core against ZFS-like and flashcache-like baselines in virtual time, with its report.
package flashstream

import (
	"fmt"
	"time"

	"github.com/strata-media/strata/internal/core/tier"
	"github.com/strata-media/strata/internal/lab/sim/des"
	"github.com/strata-media/strata/internal/progress"
	"github.com/strata-media/strata/internal/storage/model"
)

// Report holds the results of strata-lab sim flashstream.
type Report struct {
	Scale     string        `json:"scale"`
	Seed      uint64        `json:"seed"`
	Titles    int           `json:"titles"`
	LibraryGB float64       `json:"library_gb"`
	Fig7      []maxResult   `json:"fig7"`
	Fill      []fillCurve   `json:"fill"`
	BlockSize []blockResult `json:"block_size"`
	Energy    []energyRow   `json:"energy"`
	Bound     Bound         `json:"bound"`
	Beyond    []maxResult   `json:"beyond"`
	Seconds   float64       `json:"wall_seconds"`
}

// Options control which experiments run and how.
type Options struct {
	// Parallel is how many systems are simulated at once. Default 2.
	Parallel int
	// Progress receives progress lines; nil discards them.
	Progress Progress
}

// RunExperiments runs FlashStream §5's experiments at a scale.
func RunExperiments(s *Setup, o Options) (*Report, error) {
	if o.Parallel <= 0 {
		o.Parallel = 2
	}
	if o.Progress == nil {
		o.Progress = progress.Discard
	}
	start := time.Now()
	rep := &Report{Scale: s.Scale.Name, Seed: s.Seed, Titles: s.Scale.Titles}
	cat := des.NewCatalog(s.Dataset, 550e9)
	rep.LibraryGB = float64(cat.TotalBytes()) / 1e9
	jobs := s.jobs(rep, o.Progress)
	if err := des.RunJobs(jobs, o.Parallel); err != nil {
		return nil, err
	}
	rep.Bound = s.bound(rep)
	rep.Seconds = time.Since(start).Seconds()
	return rep, nil
}

// job is one independent simulation; jobs write their own slots of the
// report, so they run concurrently without sharing state.
type job = func() error

func (s *Setup) jobs(rep *Report, p Progress) []job {
	cfgs := s.Fig7Configs()
	rep.Fig7 = make([]maxResult, len(cfgs))
	rep.Fill = make([]fillCurve, len(cfgs))
	var jobs []job
	for i, cfg := range cfgs {
		jobs = append(jobs, func() error {
			m, fc, err := s.warmAndFindMax(cfg, p)
			rep.Fig7[i], rep.Fill[i] = m, fc
			return err
		})
	}
	jobs = append(jobs, s.blockJobs(rep, p)...)
	jobs = append(jobs, s.energyJobs(rep, p)...)
	jobs = append(jobs, s.beyondJobs(rep, p)...)
	return jobs
}

// warmAndFindMax fills a system's flash cache, then searches its maximum
// rate (Fig. 7, with the fill curve of §5.2).
func (s *Setup) warmAndFindMax(cfg config, p Progress) (maxResult, fillCurve, error) {
	b, err := s.Build(cfg)
	if err != nil {
		return maxResult{}, fillCurve{}, err
	}
	fc := s.Fill(b, s.Scale.WarmRate, s.Scale.FillLimit, p)
	p("%s: warm-up done (flash full after %.0f min)", cfg.Name, fc.FillMinutes)
	m := s.FindMax(b, 8, p)
	m.System = cfg.Name
	return m, fc, nil
}

// blockResult is §5.3's measurement: a cold FlashStream run with flash
// blocks handed out at random, at the optimal block size and at 4 KiB.
type blockResult struct {
	BlockSize int64  `json:"block_size"`
	Result    Result `json:"result"`
	// FilledPercent is the share of the SSD's capacity written.
	FilledPercent float64 `json:"filled_percent"`
}

func (s *Setup) blockJobs(rep *Report, p Progress) []job {
	sizes := []int64{16 << 20, 4 << 10}
	rep.BlockSize = make([]blockResult, len(sizes))
	var jobs []job
	for i, bs := range sizes {
		jobs = append(jobs, func() error {
			b, err := s.Build(config{Name: fmt.Sprintf("block %d", bs), Build: s.flashStream(tier.BlockLRU, bs, true)})
			if err != nil {
				return err
			}
			d := s.blockRunLength()
			r := Run(b.Loop, b.Sys, b.Cat, s.workload(s.Scale.WarmRate, d))
			written := float64(b.Sys.SSD().BytesWritten)
			rep.BlockSize[i] = blockResult{BlockSize: bs, Result: r, FilledPercent: 100 * written / float64(s.Scale.SSD)}
			p("block size %d: %.2f%% of the SSD written in %v, ssd hit %.4f", bs, rep.BlockSize[i].FilledPercent, d, r.SSDHitRatio)
			return nil
		})
	}
	return jobs
}

// blockRunLength is §5.3's hour, scaled with the SSD.
func (s *Setup) blockRunLength() time.Duration {
	return time.Duration(float64(time.Hour) * float64(s.Scale.SSD) / 75e9)
}

// energyRow is one configuration of Tables 5 and 6.
type energyRow struct {
	System           string  `json:"system"`
	DRAMGB           float64 `json:"dram_gb"`
	SSDGB            float64 `json:"ssd_gb"`
	HDDs             int     `json:"hdds"`
	MaxRPS           float64 `json:"max_rps"`
	Watts            float64 `json:"watts"`
	RequestsPerJoule float64 `json:"requests_per_joule"`
	CapitalDollars   float64 `json:"capital_dollars"`
}

// Table 6: active power and capital cost of the devices.
const (
	dimmGB      = 2    // each DIMM of the test machine holds 2 GB (§5.4)
	dimmWatts   = 8    // W per DIMM
	ssdWatts    = 2    // W per low-end SSD
	hddWatts    = 12   // W per 7200 RPM 1 TB HDD
	dramDollars = 8    // $ per GB
	ssdDollars  = 0.8  // $ per GB
	hddDollars  = 90.0 // $ per drive
)

func (s *Setup) energyConfigs() []struct {
	row   energyRow
	build func(*des.Loop, *des.Catalog) (system, error)
} {
	sc := s.Scale
	paperRAM := func(b int64) float64 { return float64(b) / float64(sc.RAM) * 2 } // GB at paper scale
	return []struct {
		row   energyRow
		build func(*des.Loop, *des.Catalog) (system, error)
	}{
		{energyRow{System: "FlashStream", DRAMGB: paperRAM(sc.RAM), SSDGB: 100, HDDs: 1}, s.energyFlashStream(sc.RAM, sc.EnergySSD)},
		{energyRow{System: "Traditional A", DRAMGB: paperRAM(sc.TradARAM), HDDs: 1}, s.traditional(sc.TradARAM, 1)},
		{energyRow{System: "Traditional B", DRAMGB: paperRAM(sc.RAM), HDDs: 2}, s.traditional(sc.RAM, 2)},
	}
}

func (s *Setup) energyJobs(rep *Report, p Progress) []job {
	cfgs := s.energyConfigs()
	rep.Energy = make([]energyRow, len(cfgs))
	var jobs []job
	for i, c := range cfgs {
		jobs = append(jobs, func() error {
			m, _, err := s.warmAndFindMax(config{Name: c.row.System, Build: c.build}, p)
			row := c.row
			row.MaxRPS = m.MaxRPS
			row.Watts = row.DRAMGB/dimmGB*dimmWatts + float64(row.HDDs)*hddWatts
			row.CapitalDollars = row.DRAMGB*dramDollars + row.SSDGB*ssdDollars + float64(row.HDDs)*hddDollars
			if row.SSDGB > 0 {
				row.Watts += ssdWatts
			}
			row.RequestsPerJoule = row.MaxRPS / row.Watts
			rep.Energy[i] = row
			return err
		})
	}
	return jobs
}

// hdd1TB is Table 5's 7200 RPM 1 TB disk.
func hdd1TB() (model.Model, error) { return model.NewHDD(model.Generic7200(1e12)) }

func (s *Setup) energyFlashStream(ram, ssd int64) func(*des.Loop, *des.Catalog) (system, error) {
	return func(l *des.Loop, cat *des.Catalog) (system, error) {
		ssdM, err := ssdModel(model.OCZCoreV2(), ssd, 100e9)
		if err != nil {
			return nil, err
		}
		hddM, err := hdd1TB()
		if err != nil {
			return nil, err
		}
		return newFlashStream(l, cat, des.NewDisk(l, ssdM), des.NewDisk(l, hddM), flashStreamOptions{
			Name: "FlashStream", Tier: tier.Options{RAMBytes: ram, BlockSize: 16 << 20, DeviceSize: ssd},
		})
	}
}

// traditional is Apache over the page cache (LRU over files in RAM) on one
// disk or a Linux md RAID-0 of two (512 KiB chunks, md's default). The page
// cache reads a file in 128 KiB read-ahead windows, but the CFQ scheduler
// of the paper's kernel (2.6.32) idles on a sequential reader (slice_idle,
// 8 ms) so its windows are served back to back: a file is one sequential
// run on the disk, modelled as one request.
func (s *Setup) traditional(ram int64, disks int) func(*des.Loop, *des.Catalog) (system, error) {
	return func(l *des.Loop, cat *des.Catalog) (system, error) {
		var ms []model.Model
		for range disks {
			m, err := hdd1TB()
			if err != nil {
				return nil, err
			}
			ms = append(ms, m)
		}
		hdd := ms[0]
		if disks > 1 {
			st, err := model.NewStriped("raid0", 512<<10, ms...)
			if err != nil {
				return nil, err
			}
			hdd = st
		}
		return newFlashStream(l, cat, nil, des.NewDisk(l, hdd), flashStreamOptions{
			Name: fmt.Sprintf("Traditional (%d disk)", disks), Tier: tier.Options{RAMBytes: ram},
		})
	}
}
