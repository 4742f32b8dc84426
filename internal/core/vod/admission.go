package vod

import (
	"fmt"
	"math"
)

// Unlimited is the capacity of a Ledger that never refuses (the paper's
// DRAM, whose bandwidth it takes as infinite, VoD §6.3).
const Unlimited int64 = math.MaxInt64

// A Ledger is one device's streaming bandwidth: what it sustains for
// streams and how much of it admitted streams have reserved (VoD §5: a
// stream reserves its bitrate on the device that serves it for as long as
// it plays, so an admitted stream never starves).
type Ledger struct {
	// Capacity is the bandwidth the device sustains for the read pattern
	// of many concurrent streams, in bytes per second: the paper measured
	// 1 MB random reads (100 MB/s for its disk array, 155 MB/s for SSD A).
	Capacity int64
	reserved int64
}

// Reserved is the bandwidth held by admitted streams, bytes per second.
func (l *Ledger) Reserved() int64 { return l.reserved }

// Free is the bandwidth not reserved, bytes per second (never negative).
func (l *Ledger) Free() int64 { return max(l.Capacity-l.reserved, 0) }

// Fits reports whether a stream of rate bytes per second fits now.
func (l *Ledger) Fits(rate int64) bool { return rate <= l.Capacity-l.reserved }

// Reserve takes rate bytes per second if they fit and reports whether it did.
func (l *Ledger) Reserve(rate int64) bool {
	if rate < 0 || !l.Fits(rate) {
		return false
	}
	l.reserved += rate
	return true
}

// Release returns rate bytes per second reserved earlier. Releasing more
// than is reserved is a broken invariant of the caller and panics.
func (l *Ledger) Release(rate int64) {
	if rate < 0 || rate > l.reserved {
		panic(fmt.Sprintf("vod: release %d of %d reserved", rate, l.reserved))
	}
	l.reserved -= rate
}

// MaxStreams is how many streams of rate bytes per second the whole
// capacity holds (the paper's S = T / B: 155 MB/s / 245 KB/s = 647).
func (l *Ledger) MaxStreams(rate int64) int64 {
	if rate <= 0 {
		return 0
	}
	return l.Capacity / rate
}

// Source is where an admitted stream reads from.
type Source uint8

// The sources of a stream.
const (
	Rejected  Source = iota // not admitted: no device has room
	FromFlash               // reads the whole file from the flash cache
	FromDisk                // reads from the capacity tier (HDD)
)

var sourceNames = [...]string{"rejected", "flash", "disk"}

// String returns "rejected", "flash" or "disk".
func (s Source) String() string {
	if int(s) < len(sourceNames) {
		return sourceNames[s]
	}
	return fmt.Sprintf("source(%d)", uint8(s))
}

// Admission is stream admission control over a flash cache and a disk tier
// (VoD §5, Algorithms 1 and 2). The zero Flash ledger means no flash.
type Admission struct {
	Flash, Disk Ledger
	// Admitted counts admitted streams by source; Refused counts rejected ones.
	Admitted [3]int64
	Refused  int64
}

// Admit is Algorithm 2, for file-level LFU: a request for a file readable
// on flash is served from flash while flash has room for its rate;
// anything else is served from disk while the disk has room; otherwise it
// is rejected. The bandwidth stays reserved until Release.
func (a *Admission) Admit(onFlash bool, rate int64) Source {
	switch {
	case onFlash && a.Flash.Reserve(rate):
		return a.count(FromFlash)
	case a.Disk.Reserve(rate):
		return a.count(FromDisk)
	}
	return a.count(Rejected)
}

// AdmitDisk is Algorithm 1, for interval caching: every new stream starts
// on disk (its first interval is not in the buffer yet, VoD §5), so disk
// bandwidth is the only criterion.
func (a *Admission) AdmitDisk(rate int64) Source {
	if a.Disk.Reserve(rate) {
		return a.count(FromDisk)
	}
	return a.count(Rejected)
}

func (a *Admission) count(s Source) Source {
	if s == Rejected {
		a.Refused++
	} else {
		a.Admitted[s]++
	}
	return s
}

// Release returns an admitted stream's bandwidth to the device it read from.
func (a *Admission) Release(s Source, rate int64) {
	switch s {
	case FromFlash:
		a.Flash.Release(rate)
	case FromDisk:
		a.Disk.Release(rate)
	}
}

// Spare is the bandwidth a background flash copy may use without taking
// any from streams, up to limit bytes per second: it reads the disk and
// writes flash, so it gets what both leave free. Reads first: a copy is
// never admitted as a reservation, it runs at whatever is spare and slows
// down when streams arrive.
func (a *Admission) Spare(limit int64) int64 {
	return max(min(limit, a.Disk.Free(), a.Flash.Free()), 0)
}
