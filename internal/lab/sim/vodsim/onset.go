package vodsim

import "fmt"

// Onset is §6.3's capacity comparison: the arrival rate at which
// rejections begin, with no cache, with 5.23 GB of RAM (interval
// caching) and with 64 GB of flash (LFU).
type Onset struct {
	// HDD, IC and LFU are the last rate of the scan with no rejection, and
	// the run at it.
	HDD onsetPoint `json:"hdd"`
	IC  onsetPoint `json:"ic"`
	LFU onsetPoint `json:"lfu"`
	// Gain is the capacity added over HDD only, measured: onset / HDD - 1.
	ICGain  float64 `json:"ic_gain"`
	LFUGain float64 `json:"lfu_gain"`
	// FormulaGain is 1/(1 - hit ratio) - 1 at the onset, which is how the
	// paper's 23% and 59% follow from its hit ratios 0.19 and 0.37.
	ICFormulaGain  float64 `json:"ic_formula_gain"`
	LFUFormulaGain float64 `json:"lfu_formula_gain"`
}

// onsetPoint is the last rate without rejection and the run there.
type onsetPoint struct {
	Rate   float64 `json:"rate"`
	Result Result  `json:"result"`
	// FirstReject is the next rate of the scan and its rejection.
	FirstReject     float64 `json:"first_reject_rate"`
	FirstRejectProb float64 `json:"first_reject_prob"`
}

func (r *Report) addOnset(b *batch, sc scale) {
	runs := []struct {
		name string
		dst  *onsetPoint
		run  func(params) (Result, error)
	}{
		{"hdd", &r.Onset.HDD, func(p params) (Result, error) { return runInterval(p, icConfig{}) }},
		{"ic", &r.Onset.IC, func(p params) (Result, error) { return runInterval(p, icConfig{RAM: paperRAM}) }},
		{"lfu", &r.Onset.LFU, func(p params) (Result, error) {
			return runLFU(p, lfuConfig{Flash: paperFlash, FlashBW: paperFlashBW})
		}},
	}
	for _, x := range runs {
		b.add("onset "+x.name, func() error {
			pt, err := scanOnset(r.Base, sc.OnsetStep, x.run)
			*x.dst = pt
			return err
		})
	}
}

// scanOnset raises the arrival rate by step from step until a run rejects
// a request, and returns the last rate that did not.
func scanOnset(base params, step float64, run func(params) (Result, error)) (onsetPoint, error) {
	var pt onsetPoint
	for i := 1; i <= int(2/step); i++ {
		rate := float64(i) * step
		res, err := run(at(base, func(p *params) { p.Rate = rate }))
		if err != nil {
			return pt, err
		}
		if res.Rejected > 0 {
			pt.FirstReject, pt.FirstRejectProb = rate, res.RejectProb
			return pt, nil
		}
		pt.Rate, pt.Result = rate, res
	}
	return pt, fmt.Errorf("vodsim: no rejection up to rate 2")
}

func (o *Onset) derive() {
	if o.HDD.Rate > 0 {
		o.ICGain, o.LFUGain = o.IC.Rate/o.HDD.Rate-1, o.LFU.Rate/o.HDD.Rate-1
	}
	o.ICFormulaGain = 1/(1-o.IC.Result.HitRatio) - 1
	o.LFUFormulaGain = 1/(1-o.LFU.Result.HitRatio) - 1
}
