package mrissim

import (
	"fmt"
	"sort"

	"github.com/strata-media/strata/internal/storage/model"
)

// Default device models. MRIS §4 used an Intel SSDSA2CW300G3 (Intel 320,
// 300 GB) and a Maxtor 7L250S0 (7200 rpm, 250 GB, 16 MB cache). Neither
// is a preset; the closest are used:
//   - "intel-320": the Intel X25-M G1 preset (page-mapped MLC, 10
//     channels, background GC) with the Intel 320 300 GB data sheet's host
//     rates, 270 MB/s read and 205 MB/s write; the flash geometry and
//     timing stay the X25-M's (the 320's 25 nm NAND is not documented).
//   - "barracuda-7200.10": a 7200 rpm, 16 MB cache disk of the same years
//     and class as the Maxtor.
const (
	DefaultSSD = "intel-320"
	DefaultHDD = "barracuda-7200.10"
)

// ssdParams are the SSDs whose capacity the benchmark can scale (an SSD
// model's tables grow with its capacity).
var ssdParams = map[string]func() model.SSDParams{
	"intel-320":              intel320,
	"intel-x25m-g1":          model.IntelX25MG1,
	"ocz-core-v2":            model.OCZCoreV2,
	"samsung-mcbqe32":        model.SamsungMCBQE32,
	"mtron-msd-sata3025":     model.MtronMSDSATA3025,
	"samsung-840pro-streams": model.Samsung840ProStreams,
}

func intel320() model.SSDParams {
	p := model.IntelX25MG1()
	p.Name = "intel-320"
	p.HostReadRate, p.HostWriteRate = 270e6, 205e6 // Intel 320 300 GB data sheet
	return p
}

// SSDNames lists the SSD models the benchmark accepts.
func SSDNames() []string {
	var out []string
	for n := range ssdParams {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// newSSD builds SSD model name with capacity bytes, mapped over
// [0, filled) as a store that holds data there would be.
func newSSD(name string, capacity, filled int64) (model.Model, error) {
	pf, ok := ssdParams[name]
	if !ok {
		return nil, fmt.Errorf("mrissim: unknown SSD %q (have %v)", name, SSDNames())
	}
	m, err := model.NewSSD(pf().WithCapacity(capacity))
	if err != nil {
		return nil, fmt.Errorf("mrissim: SSD %s: %w", name, err)
	}
	m.Fill(0, filled)
	return m, nil
}

// newHDD builds the HDD preset name.
func newHDD(name string) (model.Model, error) {
	m, err := model.NewPreset(name)
	if err != nil {
		return nil, fmt.Errorf("mrissim: HDD: %w", err)
	}
	if _, ok := m.(*model.HDD); !ok {
		return nil, fmt.Errorf("mrissim: %q is not an HDD preset", name)
	}
	return m, nil
}

// A Setup places the LSM tree and the value log (MRIS Table 1).
type Setup struct {
	Name string
	// LSMOnSSD and VLogOnSSD say which device holds each; two parts on
	// the same kind of device share one device.
	LSMOnSSD, VLogOnSSD bool
}

// setups are MRIS Table 1's three placements.
var setups = []Setup{
	{Name: "SSD", LSMOnSSD: true, VLogOnSSD: true},
	{Name: "Hybrid", LSMOnSSD: true, VLogOnSSD: false},
	{Name: "HDD", LSMOnSSD: false, VLogOnSSD: false},
}
