package vodsim

import (
	"fmt"
	"math"

	"github.com/strata-media/strata/internal/workload"
)

// A part is a device of VoD Table 4: capacity, 1 MB random-read
// throughput (0: unlimited, the paper's DRAM) and price.
type part struct {
	Name    string  `json:"name"`
	GB      float64 `json:"gb"`
	MBps    float64 `json:"mbps"`
	Dollars float64 `json:"dollars"`
}

// Table 4's devices.
var (
	dramPart = part{Name: "DRAM (DDR3, 1 GB)", GB: 1, Dollars: 23}
	hddPart  = part{Name: "HDD15K (Cheetah 15K.6)", GB: 146, MBps: 70, Dollars: 180}
	ssdPart  = part{Name: "MLC SSD (RiData, SSD A)", GB: 64, MBps: 155, Dollars: 120}
)

// Table 3's workload: 1 request/s of 60-minute videos, a peak of 3600
// concurrent streams to serve with no rejection.
const (
	costRate     = 1.0
	costRequired = 3600
)

// A Mix is a storage configuration of §6.4 and how it did.
type Mix struct {
	Config        string  `json:"config"`
	DRAM          int     `json:"dram"`
	SSD           int     `json:"ssd"`
	HDD           int     `json:"hdd"`
	Dollars       float64 `json:"dollars"`
	FormulaStream int     `json:"formula_streams"` // S = T/B per device (+ the DRAM's interval-caching streams)
	Result        Result  `json:"result"`          // its 10 h run at 1 request/s
	PerDollar     float64 `json:"per_dollar"`      // 3600 / dollars
	MeanPerDollar float64 `json:"mean_per_dollar"` // mean streams of the run / dollars
}

// Cost is §6.4's analysis: per configuration, the cheapest mix by the
// paper's capacity formula and the cheapest whose simulation rejects
// nothing, with every candidate tried.
type Cost struct {
	Formula    []Mix `json:"formula"`
	Strict     []Mix `json:"strict"`
	Candidates []Mix `json:"candidates"`
	// DRAMStreams is interval caching's streams at 1 request/s with each
	// DRAM size and no disk limit: peak (used by the formula) and mean.
	DRAMPeak []int     `json:"dram_peak"`
	DRAMMean []float64 `json:"dram_mean"`
}

// Paper's §6.4 results: streams per dollar.
var paperPerDollar = map[string]float64{"HDD only": 1.46, "DRAM+HDD": 1.54, "SSD+HDD": 3.55}

// costUnit is one configuration family member: a fixed number of DRAM or
// SSD modules, searched over the number of disks.
type costUnit struct {
	config    string
	dram, ssd int
	capStream int // streams the cache part serves by the formula
	run       func(params) (Result, error)
	formula   Mix
	strict    Mix
}

func (r *Report) addCost(b *batch, sc scale) {
	p := at(r.Base, func(p *params) { p.Rate = costRate })
	units := []*costUnit{{config: "HDD only", run: func(q params) (Result, error) { return runInterval(q, icConfig{}) }}}
	r.Cost.DRAMPeak, r.Cost.DRAMMean = make([]int, sc.MaxDRAM+1), make([]float64, sc.MaxDRAM+1)
	for d := 1; d <= sc.MaxDRAM; d++ {
		u := &costUnit{config: "DRAM+HDD", dram: d}
		u.run = func(q params) (Result, error) { return runInterval(q, icConfig{RAM: int64(d) * GB}) }
		units = append(units, u)
	}
	for n := 1; n <= sc.MaxSSD; n++ {
		flash := int64(float64(n) * ssdPart.GB * float64(GB))
		bw := int64(float64(n) * ssdPart.MBps * float64(mb))
		u := &costUnit{config: "SSD+HDD", ssd: n, capStream: flashStreams(p, flash, bw)}
		u.run = func(q params) (Result, error) { return runLFU(q, lfuConfig{Flash: flash, FlashBW: bw}) }
		units = append(units, u)
	}
	for _, u := range units {
		b.add(fmt.Sprintf("cost %s dram=%d ssd=%d", u.config, u.dram, u.ssd), func() error { return r.costSearch(p, u) })
	}
	r.costUnits = units
}

// flashStreams is the formula's streams of flash: its bandwidth over the
// bitrate, but no more than the expected demand for the titles it holds.
func flashStreams(p params, flash, bw int64) int {
	z, err := workload.NewZipf(p.Titles, p.ZipfS)
	if err != nil {
		return 0
	}
	held := int(flash / p.FileSize())
	demand := p.Rate * p.Length.Seconds() * z.TopMass(held)
	return int(min(float64(bw/p.Bitrate), math.Floor(demand)))
}

// diskStreams is the formula's streams of n disks (S = R N / B).
func diskStreams(p params, n int) int {
	return int(int64(float64(n)*hddPart.MBps*float64(mb)) / p.Bitrate)
}

// minDisks is the fewest disks that hold the library.
func minDisks(p params) int {
	lib := float64(p.Titles) * float64(p.FileSize()) / float64(GB)
	return int(math.Ceil(lib / hddPart.GB))
}

// costSearch finds the unit's formula mix and its cheapest mix with no
// rejection in simulation.
func (r *Report) costSearch(p params, u *costUnit) error {
	runs := map[int]Result{}
	run := func(n int) (Result, error) {
		if res, ok := runs[n]; ok {
			return res, nil
		}
		q := at(p, func(q *params) { q.Disk = int64(float64(n) * hddPart.MBps * float64(mb)) })
		res, err := u.run(q)
		runs[n] = res
		return res, err
	}
	if u.dram > 0 {
		if err := r.dramStreams(p, u); err != nil {
			return err
		}
	}
	nf := minDisks(p)
	for diskStreams(p, nf)+u.capStream < costRequired {
		nf++
	}
	res, err := run(nf)
	if err != nil {
		return err
	}
	u.formula = u.mix(p, nf, res)
	for n := max(minDisks(p), nf-2); n <= nf+20; n++ {
		res, err := run(n)
		if err != nil {
			return err
		}
		if res.Rejected == 0 {
			u.strict = u.mix(p, n, res)
			return nil
		}
	}
	return fmt.Errorf("vodsim: no disk count up to %d serves the load", nf+20)
}

// dramStreams runs interval caching with the unit's DRAM and no disk
// limit: its peak RAM streams are the formula's DRAM streams ("the peak
// number of concurrent streams that interval caching can serve for a
// given DRAM capacity for the duration of simulation", §6.4).
func (r *Report) dramStreams(p params, u *costUnit) error {
	res, err := runInterval(at(p, func(q *params) { q.Disk = unlimited }), icConfig{RAM: int64(u.dram) * GB})
	if err != nil {
		return err
	}
	u.capStream = res.PeakBuffered
	r.Cost.DRAMPeak[u.dram], r.Cost.DRAMMean[u.dram] = res.PeakBuffered, res.Buffered
	return nil
}

func (u *costUnit) mix(p params, disks int, res Result) Mix {
	m := Mix{Config: u.config, DRAM: u.dram, SSD: u.ssd, HDD: disks, Result: res}
	m.Dollars = float64(u.dram)*dramPart.Dollars + float64(u.ssd)*ssdPart.Dollars + float64(disks)*hddPart.Dollars
	m.FormulaStream = diskStreams(p, disks) + u.capStream
	m.PerDollar = costRequired / m.Dollars
	m.MeanPerDollar = res.Streams / m.Dollars
	return m
}

// cheapest picks, per configuration, the least expensive mix.
func (r *Report) cheapest() {
	best := func(pick func(*costUnit) Mix) []Mix {
		var out []Mix
		for _, cfg := range []string{"HDD only", "DRAM+HDD", "SSD+HDD"} {
			var b *Mix
			for _, u := range r.costUnits {
				if m := pick(u); u.config == cfg && (b == nil || m.Dollars < b.Dollars) {
					b = &m
				}
			}
			if b != nil {
				out = append(out, *b)
			}
		}
		return out
	}
	r.Cost.Formula = best(func(u *costUnit) Mix { return u.formula })
	r.Cost.Strict = best(func(u *costUnit) Mix { return u.strict })
	for _, u := range r.costUnits {
		r.Cost.Candidates = append(r.Cost.Candidates, u.strict)
	}
}
