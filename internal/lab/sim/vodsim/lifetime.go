package vodsim

import (
	"fmt"

	"github.com/strata-media/strata/internal/core/vod"
)

// life applies VoD §5's lifetime formula to each policy's flash writes.
type life struct {
	Rate   float64   `json:"rate"`
	Cycles int       `json:"cycles"`
	Rows   []lifeRow `json:"rows"`
	// WAF is the FTL models' write amplification for the two write
	// patterns: 1 MB blocks anywhere (interval caching's buffer) and whole
	// aligned files (LFU's copies).
	WAF []wafResult `json:"waf"`
}

// lifeRow is one policy's flash write rate and the lifetime it implies.
type lifeRow struct {
	Policy    string  `json:"policy"`
	FlashGB   float64 `json:"flash_gb"`
	WriteMBps float64 `json:"write_mbps"`
	ReadMBps  float64 `json:"read_mbps"`
	// Hours is T = C x 1024 x N / (W x 3600) with perfect wear leveling
	// and no write amplification; HoursWAF divides it by the low-end
	// model's WAF for the policy's write pattern.
	Hours    float64 `json:"hours"`
	WAF      float64 `json:"waf"`
	HoursWAF float64 `json:"hours_waf"`
	pattern  string
	flash    int64
}

const (
	patternBlocks = "1 MB blocks anywhere (interval caching)"
	patternFiles  = "whole aligned files (LFU)"
)

func (r *Report) addLifetime(b *batch, sc scale) {
	p := at(r.Base, func(p *params) { p.Rate = 0.5 })
	shift := at(p, func(p *params) { p.Shift = defaultShift })
	r.Lifetime = life{Rate: p.Rate, Cycles: mlcCycles}
	rows := []struct {
		name, pattern string
		flash         int64
		run           func() (Result, error)
	}{
		{"interval caching, 64 GB of flash as the buffer", patternBlocks, paperFlash, func() (Result, error) { return runInterval(p, icConfig{RAM: paperFlash}) }},
		{"interval caching, 5.23 GB buffer", patternBlocks, paperRAM, func() (Result, error) { return runInterval(p, icConfig{RAM: paperRAM}) }},
		{"file-level LFU, static top-N (paper)", patternFiles, paperFlash, func() (Result, error) {
			return runLFU(p, lfuConfig{Flash: paperFlash, FlashBW: paperFlashBW})
		}},
		{"dynamic LFU, fixed popularity", patternFiles, paperFlash, func() (Result, error) { return runLFU(p, dynamicLFU(defaultHalfLife, defaultConfidence)) }},
		{"dynamic LFU, shifting popularity", patternFiles, paperFlash, func() (Result, error) { return runLFU(shift, dynamicLFU(defaultHalfLife, defaultConfidence)) }},
	}
	r.Lifetime.Rows = make([]lifeRow, len(rows))
	for i, x := range rows {
		b.add("lifetime "+x.name, func() error {
			res, err := x.run()
			r.Lifetime.Rows[i] = lifeRow{Policy: x.name, FlashGB: gbOf(x.flash), WriteMBps: res.CacheWriteMBps,
				ReadMBps: res.CacheReadMBps, pattern: x.pattern, flash: x.flash}
			return err
		})
	}
	r.addWAF(b, sc)
}

// addWAF measures both write patterns on both drive models, scaled to
// sc.WAFCapacity, writing twice the capacity.
func (r *Report) addWAF(b *batch, sc scale) {
	titles := paperFlash / r.Base.FileSize() // files the 64 GB flash holds
	unit := 16 * mb                          // the low-end drive's mapping unit: Strata writes whole aligned blocks
	file := max(sc.WAFCapacity/titles/unit, 1) * unit
	for _, preset := range []string{"vod-low-end", "vod-high-end"} {
		for _, pat := range []struct {
			name   string
			extent int64
		}{{patternBlocks, mb}, {patternFiles, file}} {
			i := len(r.Lifetime.WAF)
			r.Lifetime.WAF = append(r.Lifetime.WAF, wafResult{})
			b.add(fmt.Sprintf("waf %s %s", preset, pat.name), func() error {
				w, err := measureWAF(preset, sc.WAFCapacity, pat.extent, 2*sc.WAFCapacity, r.Seed)
				w.Pattern = pat.name
				r.Lifetime.WAF[i] = w
				return err
			})
		}
	}
}

// derive fills in the lifetimes once the runs and WAFs are in.
func (l *life) derive() {
	for i := range l.Rows {
		row := &l.Rows[i]
		row.WAF = l.waf("vod-low-end", row.pattern)
		row.Hours = hours(row.flash, l.Cycles, row.WriteMBps)
		row.HoursWAF = hours(row.flash, l.Cycles, row.WriteMBps*row.WAF)
	}
}

func (l *life) waf(device, pattern string) float64 {
	for _, w := range l.WAF {
		if w.Device == device && w.Pattern == pattern {
			return w.WAF
		}
	}
	return 1
}

// hours is the lifetime formula in hours, at most the largest Duration
// (292 years), which is also what no writes at all give.
func hours(capacity int64, cycles int, writeMBps float64) float64 {
	return vod.Lifetime(capacity, cycles, writeMBps*float64(mb)).Hours()
}
