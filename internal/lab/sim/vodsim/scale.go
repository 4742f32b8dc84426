package vodsim

import (
	"fmt"
	"time"
)

// scale sizes the experiments. "paper" runs VoD §6's configuration: 10
// hour runs, the figures' full sweeps, §4's drives at full size for 20
// minutes. "small" keeps every experiment but shortens the runs to 4 hours
// (the first hour still ramps up from empty, so averages are about 7%
// lower than over 10 hours) and coarsens the sweeps, for CI.
type scale struct {
	Name string
	// Duration of each §6 run.
	Duration time.Duration
	// Fig. 9: RAM sizes, GB. Fig. 10: flash sizes (GB) and bandwidths (MB/s).
	RAM, Flash, FlashBW []float64
	// Fig. 11: arrival rates (1/s), Zipf exponents, video lengths (min).
	Rates, Zipf, Lengths []float64
	// OnsetStep is the arrival-rate resolution of the search for the rate
	// where rejections begin.
	OnsetStep float64
	// MaxDRAM (GB) and MaxSSD bound §6.4's search of device mixes.
	MaxDRAM, MaxSSD int
	// DeviceCapacity scales §4's drives (0: full size) and DeviceRun is
	// how long the combined workload runs (§4.2: 20 minutes).
	DeviceCapacity int64
	DeviceRun      time.Duration
	// WAFCapacity is the drive size the write patterns are measured on.
	WAFCapacity int64
	// DynamicRates are the arrival rates of the popularity-shift runs.
	DynamicRates []float64
	// HalfLives are the dynamic LFU's half-lives compared.
	HalfLives []time.Duration
}

// scales are the predefined experiment sizes.
var scales = map[string]scale{
	"paper": {
		Name: "paper", Duration: 10 * time.Hour,
		RAM:   []float64{0.5, 1, 2, 3, 4, 5.23, 6, 8, 10},
		Flash: []float64{8, 16, 32, 48, 64, 96, 120, 160, 200, 256}, FlashBW: []float64{20, 40, 80, 120, 155, 160, 200, 240, 320},
		Rates:   []float64{0.02, 0.05, 0.08, 0.1, 0.12, 0.14, 0.16, 0.18, 0.2, 0.25, 0.3, 0.4, 0.5, 0.6, 0.8, 1},
		Zipf:    []float64{0, 0.1, 0.2, 0.271, 0.4, 0.6, 0.8, 1, 1.2},
		Lengths: []float64{15, 30, 45, 60, 75, 90, 120, 150}, OnsetStep: 0.005,
		MaxDRAM: 8, MaxSSD: 8, DeviceRun: 20 * time.Minute, WAFCapacity: 16 * GB,
		DynamicRates: []float64{0.16, 0.3},
		HalfLives:    []time.Duration{15 * time.Minute, time.Hour, 4 * time.Hour, 0},
	},
	"small": {
		Name: "small", Duration: 4 * time.Hour,
		RAM: []float64{1, 2, 4, 5.23, 8}, Flash: []float64{16, 32, 64, 120, 200}, FlashBW: []float64{40, 80, 155, 200, 320},
		Rates: []float64{0.05, 0.1, 0.16, 0.2, 0.3, 0.5, 1}, Zipf: []float64{0, 0.271, 0.6, 1}, Lengths: []float64{30, 60, 90, 120},
		OnsetStep: 0.01, MaxDRAM: 3, MaxSSD: 6, DeviceCapacity: 4 * GB, DeviceRun: 60 * time.Second, WAFCapacity: 4 * GB,
		DynamicRates: []float64{0.16},
		HalfLives:    []time.Duration{time.Hour, 0},
	},
}

// ParseScale returns the named scale.
func ParseScale(name string) (scale, error) {
	s, ok := scales[name]
	if !ok {
		return scale{}, fmt.Errorf("vodsim: unknown scale %q (want small or paper)", name)
	}
	return s, nil
}
