package vodsim

import (
	"fmt"
	"time"

	"github.com/strata-media/strata/internal/core/vod"
)

// Settings of the dynamic LFU and of the popularity shift. None comes from
// the paper, which staged a fixed top N and never moved it; they were
// chosen from the sweeps this experiment reports (half-life, confidence)
// or from the hardware (copy rate, endurance).
var (
	// mlcCycles is MLC NAND's endurance (VoD §5: 10,000).
	mlcCycles = 10000
	// targetLife is the flash lifetime the write budget is set for.
	targetLife = 5 * 365 * 24 * time.Hour
	// budgetRate is the write rate at which 64 GB of MLC lasts targetLife
	// by the paper's formula: about 4.2 MB/s.
	budgetRate = vod.LifetimeRate(paperFlash, mlcCycles, targetLife)
	// copyRate is the fastest a copy runs (the RiData writes sequentially
	// at about 93 MB/s); it gets only bandwidth streams leave free.
	copyRate = 40 * mb
	// defaultShift: every hour eight titles from the less popular half
	// become the most popular (new releases).
	defaultShift = Shift{Every: time.Hour, Count: 8}
	// defaultHalfLife and defaultConfidence are the dynamic LFU's
	// settings where they are not swept.
	defaultHalfLife   = time.Hour
	defaultConfidence = 1.0
	// dynWindow is the hit-ratio window of the time series.
	dynWindow = 30 * time.Minute
	// dynSkews are the popularity exponents compared: the paper's, and
	// FlashStream's s = 0.8 (docs/design.md).
	dynSkews = []float64{0.271, 0.8}
	// copyFloors are the bandwidths held back for copies compared, MB/s.
	copyFloors = []float64{0, 5, 20}
	// floorRate is the overloaded arrival rate of the copy-floor sweep.
	floorRate = 0.3
)

// dynamicLFU is the dynamic LFU over the paper's 64 GB, 155 MB/s flash.
func dynamicLFU(halfLife time.Duration, confidence float64) lfuConfig {
	return lfuConfig{Mode: Dynamic, Flash: paperFlash, FlashBW: paperFlashBW, HalfLife: halfLife, Confidence: confidence,
		Budget: vod.WriteBudget{Rate: budgetRate}, CopyRate: copyRate, Window: dynWindow}
}

// dyn compares the dynamic LFU with static top-N staging (and an oracle)
// under fixed and shifting popularity.
type dyn struct {
	Shift      Shift         `json:"shift"`
	HalfLife   time.Duration `json:"half_life"`
	Confidence float64       `json:"confidence"`
	BudgetMBps float64       `json:"budget_mbps"`
	CopyMBps   float64       `json:"copy_mbps"`
	Rows       []dynRow      `json:"rows"`
	// Tuning is the dynamic LFU at the first rate under shifting and fixed
	// popularity with each half-life and confidence.
	Tuning []dynTuning `json:"tuning"`
	// Floors is the dynamic LFU at floorRate, shifting, with bandwidth
	// held back for copies.
	Floors []dynFloor `json:"floors"`
}

// dynRow is one skew, arrival rate and popularity: three ways to fill flash.
type dynRow struct {
	ZipfS    float64 `json:"zipf_s"`
	Rate     float64 `json:"rate"`
	Shifting bool    `json:"shifting"`
	Static   Result  `json:"static"`
	Dynamic  Result  `json:"dynamic"`
	Oracle   Result  `json:"oracle"`
}

// dynTuning is one half-life and confidence of the dynamic LFU.
type dynTuning struct {
	ZipfS      float64       `json:"zipf_s"`
	HalfLife   time.Duration `json:"half_life"`
	Confidence float64       `json:"confidence"`
	Shifting   Result        `json:"shifting"`
	Fixed      Result        `json:"fixed"`
}

// dynFloor is the dynamic LFU with a copy floor.
type dynFloor struct {
	ZipfS  float64 `json:"zipf_s"`
	MBps   float64 `json:"floor_mbps"`
	Result Result  `json:"result"`
}

func (r *Report) addDynamic(b *batch, sc scale) {
	r.Dynamic = dyn{Shift: defaultShift, HalfLife: defaultHalfLife, Confidence: defaultConfidence,
		BudgetMBps: mbps(budgetRate), CopyMBps: mbps(float64(copyRate))}
	for _, s := range dynSkews {
		for _, rate := range sc.DynamicRates {
			for _, shifting := range []bool{true, false} {
				r.Dynamic.Rows = append(r.Dynamic.Rows, dynRow{ZipfS: s, Rate: rate, Shifting: shifting})
			}
		}
	}
	for i := range r.Dynamic.Rows {
		row := &r.Dynamic.Rows[i]
		p := r.dynParams(row.ZipfS, row.Rate, row.Shifting)
		b.add(fmt.Sprintf("dynamic s=%v rate %v shifting %v", row.ZipfS, row.Rate, row.Shifting), func() error { return row.run(p) })
	}
	r.addTuning(b, sc)
	r.addFloors(b)
}

func (r *Report) addTuning(b *batch, sc scale) {
	for _, s := range dynSkews {
		for _, h := range sc.HalfLives {
			for _, z := range []float64{0, 1, 2} {
				r.Dynamic.Tuning = append(r.Dynamic.Tuning, dynTuning{ZipfS: s, HalfLife: h, Confidence: z})
			}
		}
	}
	for i := range r.Dynamic.Tuning {
		t := &r.Dynamic.Tuning[i]
		rate := sc.DynamicRates[0]
		b.add(fmt.Sprintf("dynamic tuning s=%v h=%v z=%v", t.ZipfS, t.HalfLife, t.Confidence), func() (err error) {
			c := dynamicLFU(t.HalfLife, t.Confidence)
			if t.Shifting, err = runLFU(r.dynParams(t.ZipfS, rate, true), c); err != nil {
				return err
			}
			t.Fixed, err = runLFU(r.dynParams(t.ZipfS, rate, false), c)
			return err
		})
	}
}

func (r *Report) addFloors(b *batch) {
	for _, s := range dynSkews {
		for _, f := range copyFloors {
			r.Dynamic.Floors = append(r.Dynamic.Floors, dynFloor{ZipfS: s, MBps: f})
		}
	}
	for i := range r.Dynamic.Floors {
		fl := &r.Dynamic.Floors[i]
		b.add(fmt.Sprintf("dynamic floor s=%v %v MB/s", fl.ZipfS, fl.MBps), func() (err error) {
			c := dynamicLFU(defaultHalfLife, defaultConfidence)
			c.CopyFloor = int64(fl.MBps * float64(mb))
			fl.Result, err = runLFU(r.dynParams(fl.ZipfS, floorRate, true), c)
			return err
		})
	}
}

func (r *Report) dynParams(s, rate float64, shifting bool) params {
	return at(r.Base, func(p *params) {
		p.ZipfS, p.Rate = s, rate
		if shifting {
			p.Shift = defaultShift
		}
	})
}

func (row *dynRow) run(p params) (err error) {
	static := lfuConfig{Mode: Static, Flash: paperFlash, FlashBW: paperFlashBW, Window: dynWindow}
	if row.Static, err = runLFU(p, static); err != nil {
		return err
	}
	if row.Dynamic, err = runLFU(p, dynamicLFU(defaultHalfLife, defaultConfidence)); err != nil {
		return err
	}
	oracle := static
	oracle.Mode = Oracle
	row.Oracle, err = runLFU(p, oracle)
	return err
}
