package model

import (
	"fmt"
	"math"
	"time"
)

// Mapping is an SSD's flash translation layer scheme.
type Mapping uint8

// The mapping schemes.
const (
	// PageMapped maps every logical page anywhere (high-end drives): small
	// random writes are cheap until garbage collection has to copy.
	PageMapped Mapping = iota
	// LogBlock maps whole units (one erase block on every parallel unit)
	// and absorbs updates in a few log units, BAST-style: a unit rewritten
	// in order is switched in for the cost of an erase, anything else is
	// merged by copying the whole unit (low-end drives of 2008).
	LogBlock
)

// GCPolicy picks the victim block of page-mapped garbage collection.
type GCPolicy uint8

// The victim policies.
const (
	Greedy      GCPolicy = iota // fewest valid pages
	CostBenefit                 // LFS cost-benefit: max (1-u)/(2u) * age
)

// SSDParams describes a flash SSD. Rates are bytes per second; a "die" is
// a parallel unit (a chip enable on a channel), which programs Planes pages
// at once.
type SSDParams struct {
	Name     string
	Capacity int64 // user-visible bytes

	// Geometry.
	PageSize       int64 // flash page, also the mapping granularity
	PagesPerBlock  int   // pages in an erase block
	Planes         int   // planes per die, programmed and erased together
	Channels       int
	WaysPerChannel int // dies per channel
	// OverProvision is (physical - user) / user capacity.
	OverProvision float64

	// Flash timing.
	ReadPage, ProgramPage, EraseBlock time.Duration
	ChannelRate                       float64 // flash bus bytes/s per channel
	// Copyback moves garbage-collected pages inside a die; without it they
	// cross the channel twice.
	Copyback bool

	// Host interface and controller.
	HostReadRate, HostWriteRate float64
	ReadOverhead, WriteOverhead time.Duration // per command

	// FTL.
	Mapping   Mapping
	GC        GCPolicy // page-mapped only
	LowWater  int      // free blocks per die below which writes collect garbage first; default 2
	LogBlocks int      // LogBlock only: log units; default 8
	Streams   int      // write streams including the default; default 1
	// UnpacedGC turns pacing off (page-mapped only): a die collects only
	// when a write finds it at LowWater free blocks, and that write waits
	// for whole victims, as firmware that does not spread collection over
	// host writes behaves (the latency spikes of steady-state consistency
	// tests). The default paces collection, which keeps latency even.
	UnpacedGC bool

	// Background GC (page-mapped only): once the whole device has been idle
	// for IdleDelay, every die collects victims until it has HighWater free
	// blocks. Work started before a request arrives delays it.
	BackgroundGC bool
	IdleDelay    time.Duration
	HighWater    int
}

// Derived geometry.
func (p SSDParams) dies() int              { return p.Channels * p.WaysPerChannel }
func (p SSDParams) pagesPerDieBlock() int  { return p.PagesPerBlock * p.Planes }
func (p SSDParams) dieBlockBytes() int64   { return int64(p.pagesPerDieBlock()) * p.PageSize }
func (p SSDParams) logicalPages() int64    { return p.Capacity / p.PageSize }
func (p SSDParams) physicalBytes() float64 { return float64(p.Capacity) * (1 + p.OverProvision) }

// blocksPerDie is the number of (multi-plane) erase blocks on each die.
func (p SSDParams) blocksPerDie() int {
	return int(p.physicalBytes() / float64(p.dieBlockBytes()*int64(p.dies())))
}

// ProgramRate is the ceiling of sustained writes on a fresh drive, bytes/s:
// the slowest of every plane of every die programming, the channels' buses
// and the host interface.
func (p SSDParams) ProgramRate() float64 {
	flash := float64(p.dies()*p.Planes) * float64(p.PageSize) / p.ProgramPage.Seconds()
	return min(flash, float64(p.Channels)*p.ChannelRate, p.HostWriteRate)
}

// UnitSize is the bytes of one erase block on every die: the stripe a
// LogBlock drive maps as a unit and the span after which a page-mapped
// drive's write frontier has filled one block everywhere.
func (p SSDParams) UnitSize() int64 { return p.dieBlockBytes() * int64(p.dies()) }

// WithCapacity returns p scaled to capacity bytes: same geometry, timing and
// over-provisioning, fewer or more blocks per die. It is the one way a
// drive is resized (every simulator and test calls it), so a scaled-down
// run keeps a drive's behaviour at a fraction of its memory.
//
// A shrunk drive's background collector refills to a proportionally lower
// HighWater (at least one block): the target is a block count per die
// chosen as a share of the full drive's spare blocks (IntelX25MG1's 32 is
// "a quarter of the spare"); kept as is, a drive a tenth the size would
// have less spare than the target and collect whenever idle, forever.
// Growing a drive keeps the preset's target.
func (p SSDParams) WithCapacity(capacity int64) SSDParams {
	if p.BackgroundGC && p.HighWater > 0 && capacity < p.Capacity {
		p.HighWater = max(int(math.Round(float64(p.HighWater)*float64(capacity)/float64(p.Capacity))), 1)
	}
	p.Capacity = capacity
	return p
}

func (p *SSDParams) ensureDefaults() {
	if p.LowWater <= 0 {
		p.LowWater = 2
	}
	if p.LogBlocks <= 0 {
		p.LogBlocks = 8
	}
	if p.Streams <= 0 {
		p.Streams = 1
	}
	if p.HighWater < p.LowWater {
		p.HighWater = p.LowWater
	}
}

func (p SSDParams) validate() error {
	bad := func(what string) error { return fmt.Errorf("%w: ssd %q: %s", ErrInvalidParams, p.Name, what) }
	switch {
	case p.PageSize <= 0 || p.PagesPerBlock <= 0 || p.Planes <= 0 || p.Channels <= 0 || p.WaysPerChannel <= 0:
		return bad("geometry must be positive")
	case p.Capacity < p.PageSize:
		return bad("capacity below one page")
	case p.OverProvision < 0:
		return bad("negative over-provisioning")
	case p.ChannelRate <= 0 || p.HostReadRate <= 0 || p.HostWriteRate <= 0:
		return bad("rates must be positive")
	case p.ReadPage <= 0 || p.ProgramPage <= 0 || p.EraseBlock <= 0:
		return bad("flash timings must be positive")
	case p.UnpacedGC && p.Mapping == LogBlock:
		return bad("UnpacedGC applies to the page-mapped FTL only")
	case p.Streams > 255:
		return bad("at most 255 streams")
	}
	if p.Mapping == LogBlock {
		return p.validateLogBlock()
	}
	return p.validatePageMapped()
}

// validatePageMapped checks that every die can hold its share of the user
// data plus its reserve and open blocks.
func (p SSDParams) validatePageMapped() error {
	share := float64(p.logicalPages()) / float64(p.dies()) / float64(p.pagesPerDieBlock())
	need := share + float64(p.LowWater+2*p.Streams+1)
	if float64(p.blocksPerDie()) < need {
		return fmt.Errorf("%w: ssd %q: %d blocks per die cannot hold %.1f blocks of data plus reserve; raise over-provisioning",
			ErrInvalidParams, p.Name, p.blocksPerDie(), share)
	}
	return nil
}

func (p SSDParams) validateLogBlock() error {
	units := (p.Capacity + p.UnitSize() - 1) / p.UnitSize()
	if int64(p.blocksPerDie()) < units+int64(p.LogBlocks)+1 {
		return fmt.Errorf("%w: ssd %q: %d physical units cannot hold %d data units, %d log units and a spare",
			ErrInvalidParams, p.Name, p.blocksPerDie(), units, p.LogBlocks)
	}
	return nil
}
