package model

import "time"

// SSD presets. Every number names its source: a table or figure of the
// papers beside the design guide (FlashStream = flashstream-*.txt, VoD =
// flash-ssd-for-vod-*, FG = the frame-grouping paper ssd-interactive-*,
// MS = multi-streamed-ssd), a vendor data sheet, or "assumed" with the
// reasoning. Nothing is tuned to
// reproduce a result a later experiment measures: in particular the
// log-block unit (channels x ways x planes x erase block), which decides
// what FlashStream's block-size probe finds, comes from the hardware, and
// the per-command overheads come only from the papers' device tables.
//
// Shared NAND data:
//   - Samsung 51 nm MLC (K9GAG08U0M family, as in the OCZ Core's
//     K9LBG08U1M packages): 4 KiB pages, 128 pages (512 KiB) per block,
//     2 planes, tR 60 us (max), tPROG 800 us, tBERS 1.5 ms (typ.), 25 ns
//     read cycle (40 MB/s bus).
//   - Intel/Micron 50 nm MLC (MT29F16G08MAA, "L52A", the X25-M's 29F32G08
//     is two of these dies): 4 KiB pages, 128 pages per block, 2 planes,
//     tR 50 us, tPROG 900 us, tBERS 3.5 ms (typ.), ONFI 1.0 25 ns cycle.
//   - Samsung SLC of 2007-08 (K9K8G08U0M class): 2 KiB pages, 64 pages
//     (128 KiB) per block, tR 25 us, tPROG 200 us, tBERS 1.5 ms (typ.).

// mlcSamsung51 fills in the Samsung 51 nm MLC NAND data.
func mlcSamsung51(p SSDParams) SSDParams {
	p.PageSize, p.PagesPerBlock, p.Planes = 4096, 128, 2
	p.ReadPage, p.ProgramPage, p.EraseBlock = 60*time.Microsecond, 800*time.Microsecond, 1500*time.Microsecond
	p.ChannelRate = 40e6
	return p
}

// slcSamsung fills in the Samsung SLC NAND data.
func slcSamsung(p SSDParams) SSDParams {
	p.PageSize, p.PagesPerBlock, p.Planes = 2048, 64, 1
	p.ReadPage, p.ProgramPage, p.EraseBlock = 25*time.Microsecond, 200*time.Microsecond, 1500*time.Microsecond
	p.ChannelRate = 40e6
	return p
}

// opRaw is the over-provisioning of a drive with raw bytes of flash and a
// user capacity of user bytes.
func opRaw(raw, user int64) float64 { return float64(raw)/float64(user) - 1 }

const gib = int64(1) << 30

// OCZCoreV2 is FlashStream's SSD B, the low-end OCZ Core V2 120 GB
// (FlashStream Table 2), a JMicron JMF602 drive with coarse mapping.
//
// Its log-block unit is 8 channels x 2 ways x 2 planes x 512 KiB = 16 MiB:
// the JMF602 has 8 flash channels; the flash is 2-plane; and 2 ways is the
// least interleave that reaches OCZ's 98 MB/s write spec with 800 us
// programs (1 way: 8 x 2 x 4 KiB / 800 us = 82 MB/s; 2 ways: 164 MB/s,
// then limited by the controller). The 16 MiB that FlashStream's probe
// finds (Fig. 3) is not set anywhere; it follows from this geometry.
func OCZCoreV2() SSDParams {
	p := mlcSamsung51(SSDParams{Name: "ocz-core-v2"})
	p.Capacity = 120e9                      // FlashStream Table 2
	p.OverProvision = opRaw(128*gib, 120e9) // 16 x 8 GiB packages (assumed from the OCZ Core's 4 GiB K9LBG08U1M parts)
	p.Channels, p.WaysPerChannel = 8, 2     // JMF602: 8 channels; ways: see above
	p.HostReadRate = 170e6                  // OCZ spec: up to 170 MB/s read
	p.HostWriteRate = 98e6                  // OCZ spec: up to 98 MB/s write
	// FlashStream Table 2: 4 KB random reads at 14.8 MB/s = 277 us each at
	// queue depth 1; the model's path is tR 60 + 4 KiB over the flash bus
	// 102 + over the host link 24 = 186 us, so the controller adds 91 us.
	p.ReadOverhead, p.WriteOverhead = 91*time.Microsecond, 91*time.Microsecond
	p.Copyback = false // merges move data through the controller (no DRAM, ECC on the path)
	p.Mapping = LogBlock
	p.LogBlocks = 8 // assumed; any few-log BAST merges on every random small write
	return p
}

// VoDLowEnd is the VoD paper's SSD A, the RiData NSSD-S25-64-C06MPN 64 GB
// MLC, classed LOW by its 4 KB random writes (VoD Table 2, Fig. 5). Assumed
// to be of the OCZ Core's class (JMF602-era, coarse mapping, Samsung MLC),
// so its unit is also 16 MiB; VoD §4 reports its random writes reach
// sequential throughput from 16 MB, consistent with that.
func VoDLowEnd() SSDParams {
	p := OCZCoreV2()
	p.Name = "vod-low-end"
	p.Capacity = 64e9                     // VoD Table 2 / Table 4
	p.OverProvision = opRaw(64*gib, 64e9) // assumed: 64 GiB raw
	p.HostReadRate = 160e6                // VoD Table 1/4: 155 MB/s random reads of 1 MB (with the command overhead)
	p.HostWriteRate = 93e6                // assumed: OCZ Core 64 GB spec, up to 93 MB/s
	return p
}

// IntelX25MG1 is the Intel X25-M G1 80 GB: FlashStream's SSD A (Table 2)
// and the VoD paper's high-end SSD C (Table 2), page-mapped with background
// garbage collection.
//
// Its write frontier spans 10 channels x 4 dies x 2 planes x 512 KiB =
// 40 MiB; FlashStream's probe found 64 MB (Fig. 3), the next power of two.
func IntelX25MG1() SSDParams {
	p := SSDParams{Name: "intel-x25m-g1"}
	p.Capacity = 80e9                                    // FlashStream/VoD Table 2
	p.OverProvision = opRaw(80*gib, 80e9)                // 20 x 4 GiB 29F32G08 packages (reviews of the drive)
	p.Channels, p.WaysPerChannel = 10, 4                 // 10 channels, 2 packages x 2 dies each
	p.PageSize, p.PagesPerBlock, p.Planes = 4096, 128, 2 // MT29F16G08MAA
	p.ReadPage, p.ProgramPage, p.EraseBlock = 50*time.Microsecond, 900*time.Microsecond, 3500*time.Microsecond
	p.ChannelRate = 40e6
	p.Copyback = true      // MT29F16G08: internal data move within a plane
	p.HostReadRate = 250e6 // Intel spec: up to 250 MB/s read
	p.HostWriteRate = 70e6 // Intel spec: up to 70 MB/s write
	// FlashStream Table 2: 4 KB random reads at 15.5 MB/s = 264 us; the
	// model's path is tR 50 + 102 us of flash bus + 16 us of host link, so
	// the controller adds 96 us.
	p.ReadOverhead, p.WriteOverhead = 96*time.Microsecond, 96*time.Microsecond
	p.Mapping, p.GC = PageMapped, Greedy
	// VoD §4: a fine-grained FTL with background GC and wear leveling whose
	// timing the host cannot predict. The trigger and target are assumed:
	// start after 10 ms idle, refill to 32 free blocks per die (a quarter of
	// the spare).
	p.BackgroundGC, p.IdleDelay, p.HighWater = true, 10*time.Millisecond, 32
	return p
}

// VoDHighEnd is the VoD paper's SSD C, the Intel X25-M G1 (VoD Table 2).
func VoDHighEnd() SSDParams {
	p := IntelX25MG1()
	p.Name = "vod-high-end"
	return p
}

// SamsungSLC64 is the Samsung SLC MCCOE64G5MPP 64 GB of FlashStream Fig. 3.
// Its 32 GB sibling (SSD2 below) is 4 channels x 4 ways (FG Table 1);
// twice the capacity from the same packages is assumed to double the ways,
// giving a 4 x 8 x 128 KiB = 4 MiB unit.
func SamsungSLC64() SSDParams {
	p := SamsungMCBQE32()
	p.Name = "samsung-slc-64"
	p.Capacity = 64e9
	p.OverProvision = opRaw(64*gib, 64e9)
	p.WaysPerChannel = 8
	return p
}

// MtronMSDSATA3025 is the frame-grouping paper's SSD1, an Mtron MSD-SATA
// 3025 32 GB SLC drive: 4 channels x 4 ways, 80 MB/s sustained write, 100
// MB/s read (FG Table 1).
//
// Command overheads from FG Fig. 6, taking "saturated" as 90% of the
// sustained rate at queue depth 1: random reads saturate at 256 KB, so
// 256 KiB / (ovh + 256 KiB / 100 MB/s) = 90 MB/s gives 291 us; sequential
// writes at 32 KB give 45 us.
func MtronMSDSATA3025() SSDParams {
	p := slcSamsung(SSDParams{Name: "mtron-msd-sata3025"})
	p.Capacity = 32e9                     // FG Table 1
	p.OverProvision = opRaw(32*gib, 32e9) // assumed: 32 GiB raw
	p.Channels, p.WaysPerChannel = 4, 4   // FG Table 1
	p.HostReadRate, p.HostWriteRate = 100e6, 80e6
	p.ReadOverhead, p.WriteOverhead = 291*time.Microsecond, 45*time.Microsecond
	p.Copyback = false
	p.Mapping = LogBlock // assumed: block-mapped with log blocks, as SLC drives of its time
	return p
}

// SamsungMCBQE32 is the frame-grouping paper's SSD2, a Samsung
// MCBQE32G5MPP 32 GB SLC drive: 4 channels x 4 ways, 80 MB/s write, 100
// MB/s read (FG Table 1). Overheads from FG Fig. 6 as for SSD1: reads
// saturate at 512 KB (583 us), sequential writes at 128 KB (182 us).
func SamsungMCBQE32() SSDParams {
	p := MtronMSDSATA3025()
	p.Name = "samsung-mcbqe32"
	p.ReadOverhead, p.WriteOverhead = 583*time.Microsecond, 182*time.Microsecond
	return p
}

// Samsung840ProStreams is a multi-streamed, page-mapped drive like the
// Samsung 840 Pro 256 GB that MS §3.2 turned into its prototype: four
// streams on top of the default one.
//
// The 840 Pro's flash geometry is not published; 2x-nm MLC values are
// assumed (Micron L74A-like: 8 KiB pages, 256 pages per block, 2 planes,
// tR 75 us, tPROG 1.3 ms, tBERS 3.8 ms) on 8 channels x 4 dies of 64 Gb
// (256 GiB) with a 400 MB/s Toggle DDR 2.0 bus.
func Samsung840ProStreams() SSDParams {
	p := SSDParams{Name: "samsung-840pro-streams"}
	p.Capacity = 256e9
	p.OverProvision = opRaw(256*gib, 256e9)
	p.Channels, p.WaysPerChannel = 8, 4
	p.PageSize, p.PagesPerBlock, p.Planes = 8192, 256, 2
	p.ReadPage, p.ProgramPage, p.EraseBlock = 75*time.Microsecond, 1300*time.Microsecond, 3800*time.Microsecond
	p.ChannelRate = 400e6
	p.Copyback = true
	p.HostReadRate, p.HostWriteRate = 540e6, 520e6 // Samsung spec: 540 / 520 MB/s
	// Samsung spec: 9,900 4 KB random reads/s at queue depth 1 = 101 us;
	// the assumed flash path alone (tR 75 + 20 us of bus + 8 us of host
	// link) is 103 us, so no controller overhead is added.
	p.ReadOverhead, p.WriteOverhead = 0, 0
	p.Mapping, p.GC = PageMapped, Greedy
	p.Streams = 5                                                           // MS §3.2: streams 1-4 plus the default stream 0
	p.BackgroundGC, p.IdleDelay, p.HighWater = true, 10*time.Millisecond, 8 // assumed
	return p
}
