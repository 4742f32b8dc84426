package des

import (
	"time"

	"github.com/strata-media/strata/internal/storage/model"
)

// Disk is a device model in the loop. It counts what it serves, measures
// its utilization per epoch the way /proc/diskstats' io_ticks does, and can
// hold writes back while reads are outstanding (a host I/O scheduler with
// strict read priority).
type Disk struct {
	loop *Loop
	m    model.Model
	// PrioritizeReads holds writes until no read is outstanding.
	PrioritizeReads bool

	readsOut, writesOut int
	held                []heldWrite

	epochStart time.Duration
	epochBusy  time.Duration
	util       float64
	// read latency of the current and the last completed epoch
	latSum  time.Duration
	latN    int64
	lastLat time.Duration

	Reads, Writes           int64
	BytesRead, BytesWritten int64
}

type heldWrite struct {
	off, n int64
	stream int
	done   func()
}

// NewDisk puts m in the loop.
func NewDisk(l *Loop, m model.Model) *Disk { return &Disk{loop: l, m: m} }

// Model is the device model.
func (d *Disk) Model() model.Model { return d.m }

// ReadsOutstanding is the number of reads submitted and not completed.
func (d *Disk) ReadsOutstanding() int { return d.readsOut }

// Read reads n bytes at off and calls done at completion.
func (d *Disk) Read(off, n int64, done func()) {
	d.readsOut++
	d.Reads++
	d.BytesRead += n
	start := d.loop.Now()
	t := d.m.Submit(start, model.Request{Op: model.Read, Offset: off, Length: n})
	d.loop.At(t, func() {
		d.latSum += t - start
		d.latN++
		d.readsOut--
		if d.readsOut == 0 {
			d.release()
		}
		done()
	})
}

// Write writes n bytes at off on a write stream and calls done at
// completion.
func (d *Disk) Write(off, n int64, stream int, done func()) {
	if d.PrioritizeReads && d.readsOut > 0 {
		d.held = append(d.held, heldWrite{off, n, stream, done})
		return
	}
	d.writesOut++
	d.Writes++
	d.BytesWritten += n
	t := d.m.Submit(d.loop.Now(), model.Request{Op: model.Write, Offset: off, Length: n, Stream: stream})
	d.loop.At(t, func() {
		d.writesOut--
		done()
	})
}

// release submits the writes held back while reads were outstanding.
func (d *Disk) release() {
	held := d.held
	d.held = nil
	for _, w := range held {
		d.Write(w.off, w.n, w.stream, w.done)
	}
}

// Outstanding reports whether any request is queued or in service.
func (d *Disk) Outstanding() bool { return d.readsOut+d.writesOut+len(d.held) > 0 }

// TickEpoch ends the current utilization epoch.
func (d *Disk) TickEpoch() {
	now := d.loop.Now()
	busy := d.m.Busy(now)
	if span := now - d.epochStart; span > 0 {
		d.util = min(1, float64(busy-d.epochBusy)/float64(span))
	}
	d.epochStart, d.epochBusy = now, busy
	d.lastLat = 0
	if d.latN > 0 {
		d.lastLat = d.latSum / time.Duration(d.latN)
	}
	d.latSum, d.latN = 0, 0
}

// ReadLatency is the mean read latency of the last completed epoch.
func (d *Disk) ReadLatency() time.Duration { return d.lastLat }

// Utilization is the busy fraction of the last completed epoch.
func (d *Disk) Utilization() float64 { return d.util }

// BusyFraction is the busy fraction over [from, now].
func (d *Disk) BusyFraction(from time.Duration, busyAtFrom time.Duration) float64 {
	now := d.loop.Now()
	if now <= from {
		return 0
	}
	return float64(d.m.Busy(now)-busyAtFrom) / float64(now-from)
}

// ReadRanges reads several ranges at once and calls done when all are in.
func (d *Disk) ReadRanges(ranges [][2]int64, done func()) {
	left := len(ranges)
	if left == 0 {
		d.loop.After(0, done)
		return
	}
	for _, r := range ranges {
		d.Read(r[0], r[1], func() {
			if left--; left == 0 {
				done()
			}
		})
	}
}
