package model

import (
	"fmt"
	"slices"
)

// A Preset is a named device model of the papers.
type Preset struct {
	Name    string
	Summary string
	New     func() (Model, error)
}

func ssdPreset(p SSDParams, summary string) Preset {
	return Preset{Name: p.Name, Summary: summary, New: func() (Model, error) { return NewSSD(p) }}
}

func hddPreset(p HDDParams, summary string) Preset {
	return Preset{Name: p.Name, Summary: summary, New: func() (Model, error) { return NewHDD(p) }}
}

// Presets lists every preset, SSDs first.
func Presets() []Preset {
	return []Preset{
		ssdPreset(OCZCoreV2(), "FlashStream SSD B: OCZ Core V2 120 GB, low-end MLC, log-block mapping (16 MiB units)"),
		ssdPreset(IntelX25MG1(), "FlashStream SSD A: Intel X25-M G1 80 GB, page-mapped MLC with background GC"),
		ssdPreset(SamsungSLC64(), "FlashStream Fig. 3: Samsung SLC MCCOE64G5MPP 64 GB, log-block mapping (4 MiB units)"),
		ssdPreset(MtronMSDSATA3025(), "frame-grouping SSD1: Mtron MSD-SATA3025 32 GB SLC, 4 ch x 4 ways"),
		ssdPreset(SamsungMCBQE32(), "frame-grouping SSD2: Samsung MCBQE32G5MPP 32 GB SLC, 4 ch x 4 ways"),
		ssdPreset(VoDLowEnd(), "VoD SSD A: RiData 64 GB MLC, low-end, log-block mapping"),
		ssdPreset(VoDHighEnd(), "VoD SSD C: Intel X25-M G1, high-end, page-mapped with background GC"),
		ssdPreset(Samsung840ProStreams(), "multi-streamed SSD: Samsung 840 Pro-like 256 GB, page-mapped, 5 streams"),
		hddPreset(Barracuda7200dot10(), "frame-grouping HDD: Seagate Barracuda 7200.10 320 GB"),
		hddPreset(Generic7200(550e9), "FlashStream §5 disk: 7200 RPM 550 GB"),
		hddPreset(Generic7200(1e12), "FlashStream Tables 5-6 disk: 7200 RPM 1 TB"),
		hddPreset(Cheetah15K6(), "VoD HDD15K: Seagate Cheetah 15K.6 146 GB"),
		{Name: "vod-raid0", Summary: "VoD disk tier: 4 x Cheetah 15K.6, RAID-0, 64 KiB stripes, 584 GB",
			New: func() (Model, error) { return VoDDiskArray() }},
	}
}

// NewPreset builds the preset called name.
func NewPreset(name string) (Model, error) {
	ps := Presets()
	i := slices.IndexFunc(ps, func(p Preset) bool { return p.Name == name })
	if i < 0 {
		return nil, fmt.Errorf("%w: no preset %q", ErrInvalidParams, name)
	}
	return ps[i].New()
}
