package engine

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/strata-media/strata/internal/core/health"
	"github.com/strata-media/strata/internal/core/tier"
	"github.com/strata-media/strata/internal/storage/store"
)

// fileHit is find's flash hit for a caller that sends from the device
// (decision 0035). The device's health is asked first, as readFlash asks
// it: only while its reads are healthy and fewer than MaxLateReads are
// late is seg pinned for a send from the device (the hit, with data and
// buf nil), its reads from the file then timed (fileSend). Otherwise the
// hit goes the buffered way: the probe of a degraded device, when one is
// due, is a buffered read within the deadline (readProbe); while reads
// are degraded or late it is a skip (errSkipped: the capacity tier
// answers and the copy stays); and a hit whose records are not all
// verified is read as any (readFlash).
func (e *Engine) fileHit(ctx context.Context, seg tier.Segment) (*store.FileHit, []byte, *store.Buf, error) {
	ok, probe := e.health.Admit(health.Read)
	switch {
	case !ok:
		e.counters.fileHitsDeclined.Add(1)
		return nil, nil, nil, errSkipped
	case probe:
		e.counters.fileHitsDeclined.Add(1)
		data, buf, err := e.readProbe(ctx, seg)
		return nil, data, buf, err
	}
	if !e.admitRead(false) {
		e.counters.fileHitsDeclined.Add(1)
		return nil, nil, nil, errShed
	}
	if h := e.flash.PinHit(ctx, seg, e.hits); h != nil {
		h.SetReads(&fileSend{e: e, seg: seg})
		e.counters.fileHits.Add(1)
		return h, nil, nil, nil
	}
	data, buf, err := e.readFlash(ctx, seg)
	return nil, data, buf, err
}

// A fileSend times the reads from the device's file of one send from the
// device (store.FileReads), which its sender makes one at a time: each
// is listed with the engine's read deadline watch while it runs, so that
// one past FlashReadDeadline counts as the device's timeout as it passes
// it (abandon; not if the process was starved of CPU) and among the late
// reads until it returns, which bounds the senders a stalled device holds
// in splice(2) as it bounds the buffered reads (MaxLateReads). The hit
// is one read for the device's health, as a buffered hit is: when it is
// released, the reads' outcome is reported once, a failure if any read
// failed, a timeout if one passed its deadline or all of them together
// did, a success otherwise. A hit none of whose bytes were read from the
// file (sent from memory) reports nothing.
type fileSend struct {
	e     *Engine
	seg   tier.Segment
	r     *flashRead // the read in progress, listed with the watch
	began time.Time
	spent time.Duration // the reads' time
	reads int
	err   error       // the first read's error
	told  atomic.Bool // a read passed its deadline: the watch told the device's health (abandon)
}

// FileReadBegan lists the read that begins with the watch.
func (s *fileSend) FileReadBegan() {
	s.r = &flashRead{send: s} // one per read: the watch may still hold the last one as it abandons it
	s.began = time.Now()
	s.e.hitsReading.Add(1) // the read limit counts the send while it reads the device
	s.e.reads.list(s.r)
}

// FileReadEnded takes the read off the watch's list, or off the late
// reads if the watch found it past its deadline.
func (s *fileSend) FileReadEnded(err error) {
	if s.r == nil {
		return
	}
	took := time.Since(s.began)
	s.spent += took
	s.reads++
	s.e.hitsReading.Add(-1)
	s.e.readTook(took)
	s.e.reads.unlist(s.r)
	if !s.r.state.CompareAndSwap(readRunning, readDone) {
		s.e.health.Late(-1) // the watch counted it late (abandon)
	}
	s.r = nil
	s.e.counters.fileReads.Add(1)
	if err != nil {
		s.e.counters.fileReadErrors.Add(1)
		if s.err == nil {
			s.err = err
		}
	}
}

// FileHitReleased reports the hit's reads to the device's health. A
// read the device failed drops the copy, as a buffered read that fails
// does: the client's answer was cut short (its header was out), and the
// next client's would be too; the capacity tier answers the next one.
func (s *fileSend) FileHitReleased() {
	if s.r != nil { // a read began and never ended (the sender panicked)
		s.FileReadEnded(nil)
	}
	if s.reads == 0 {
		return
	}
	e := s.e
	switch {
	case s.told.Load(): // told as a read passed its deadline (abandon)
	case s.err != nil:
		e.health.Done(health.Read, false, s.err)
	case s.spent > e.opts.FlashReadDeadline:
		e.counters.fileReadsLate.Add(1)
		e.health.Timeout(health.Read, false, e.schedLag(), e.opts.FlashReadDeadline)
	default:
		e.health.Done(health.Read, false, nil)
	}
	if s.err != nil {
		e.dropFlash(s.seg, s.err)
	}
}
