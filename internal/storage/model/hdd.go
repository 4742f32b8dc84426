package model

import (
	"fmt"
	"math"
	"time"
)

// HDDParams describes a hard disk: one actuator, zoned recording, a FIFO
// queue. Rates are bytes per second.
type HDDParams struct {
	Name     string
	Capacity int64   // bytes
	RPM      float64 // spindle speed
	Surfaces int     // recording surfaces (heads); data fills a cylinder before the next

	// Seek curve: TrackToTrack for a one-cylinder seek, AverageSeek as the
	// data sheet defines it (the mean over all pairs of cylinders, i.e. over
	// distances with density 2(1-x)), FullStroke for the longest seek. The
	// model fits a + b*sqrt(d) for short seeks, continued by its tangent line
	// up to the full stroke, to these three numbers.
	TrackToTrack, AverageSeek, FullStroke time.Duration

	// Media rate at the outer and inner diameter, linear in between (zoned
	// bit recording). Equal values give a single rate.
	OuterRate, InnerRate float64

	// Overhead is the controller time added to every command.
	Overhead time.Duration
	// ReadAhead is the drive's buffer for sequential streams, in bytes
	// (read-ahead for reads, write-back for writes): a request of the same
	// kind that starts where the previous one ended continues the media
	// transfer without seek or rotation, and a late one finds up to
	// ReadAhead bytes already transferred. 0 disables it.
	ReadAhead int64
	// Seed sets the platter's angle at time 0.
	Seed int64
}

func (p HDDParams) validate() error {
	switch {
	case p.Capacity <= 0, p.RPM <= 0, p.Surfaces <= 0:
		return fmt.Errorf("%w: hdd %q: capacity, rpm and surfaces must be positive", ErrInvalidParams, p.Name)
	case p.OuterRate <= 0 || p.InnerRate <= 0:
		return fmt.Errorf("%w: hdd %q: media rates must be positive", ErrInvalidParams, p.Name)
	case p.TrackToTrack <= 0 || p.AverageSeek < p.TrackToTrack || p.FullStroke < p.AverageSeek:
		return fmt.Errorf("%w: hdd %q: need 0 < track-to-track <= average <= full stroke", ErrInvalidParams, p.Name)
	}
	return nil
}

// An HDD is a hard disk Model: seek time from the cylinder distance,
// rotational latency from the platter's angle when the seek ends and the
// target sector's angle, zoned transfer rate, one head serving requests in
// arrival order.
type HDD struct {
	p         HDDParams
	rps       float64 // revolutions per second
	cylinders int
	seek      seekCurve
	phase     float64 // platter angle at time 0, in revolutions

	headCyl  int
	headFree time.Duration // when the head finishes its queue
	lastEnd  int64         // byte after the previous request, for streaming
	lastOp   Op
	lastNow  time.Duration
	busy     busyClock
}

var _ Model = (*HDD)(nil)

// NewHDD returns a disk model for p.
func NewHDD(p HDDParams) (*HDD, error) {
	if err := p.validate(); err != nil {
		return nil, err
	}
	rps := p.RPM / 60
	avgCyl := float64(p.Surfaces) * (p.OuterRate + p.InnerRate) / 2 / rps
	h := &HDD{p: p, rps: rps, cylinders: max(1, int(math.Ceil(float64(p.Capacity)/avgCyl))), lastEnd: -1}
	h.seek = fitSeek(p.TrackToTrack, p.AverageSeek, p.FullStroke, h.cylinders)
	h.phase = float64(uint64(p.Seed)*0x9E3779B97F4A7C15>>11) / (1 << 53)
	return h, nil
}

// Name returns the device name.
func (h *HDD) Name() string { return h.p.Name }

// Size returns the capacity in bytes.
func (h *HDD) Size() int64 { return h.p.Capacity }

// Busy returns the cumulative busy time up to now.
func (h *HDD) Busy(now time.Duration) time.Duration { return h.busy.at(now) }

// Params returns the parameters the model was built from.
func (h *HDD) Params() HDDParams { return h.p }

// Submit queues r behind the requests already submitted and returns its
// completion time. Trim costs nothing on a disk.
func (h *HDD) Submit(now time.Duration, r Request) time.Duration {
	now = max(now, h.lastNow)
	h.lastNow = now
	off, n, ok := clampRange(r.Offset, r.Length, h.p.Capacity)
	if !ok || r.Op == Trim {
		return now
	}
	var done time.Duration
	if h.streaming(off, r.Op) {
		done = h.continueStream(now, n)
	} else {
		done = h.position(max(now, h.headFree)+h.p.Overhead, off) + xferTime(n, h.rateAt(off))
	}
	h.headCyl, _ = h.locate(off + n - 1)
	h.headFree, h.lastEnd, h.lastOp = done, off+n, r.Op
	h.busy.add(now, done)
	return done
}

// streaming reports whether a request continues the previous one.
func (h *HDD) streaming(off int64, op Op) bool {
	return h.p.ReadAhead > 0 && off == h.lastEnd && op == h.lastOp
}

// continueStream times n more bytes of a sequential stream: the media kept
// transferring into the buffer since the previous request finished (up to
// ReadAhead bytes), so no seek or rotation is paid.
func (h *HDD) continueStream(now time.Duration, n int64) time.Duration {
	rate := h.rateAt(h.lastEnd)
	start := now + h.p.Overhead
	if now <= h.headFree {
		return max(start, h.headFree+xferTime(n, rate))
	}
	buffered := min(int64(float64(now-h.headFree)/float64(time.Second)*rate), h.p.ReadAhead, n)
	return start + xferTime(n-buffered, rate)
}

// position moves the head to off starting at t and waits for the sector to
// come around; it returns when the transfer can begin.
func (h *HDD) position(t time.Duration, off int64) time.Duration {
	cyl, angle := h.locate(off)
	t += h.seek.time(abs(cyl - h.headCyl))
	head := h.angleAt(t)
	wait := angle - head
	if wait < 0 {
		wait++
	}
	return t + time.Duration(wait/h.rps*float64(time.Second))
}

// angleAt is the platter's angle in revolutions [0, 1) at time t.
func (h *HDD) angleAt(t time.Duration) float64 {
	_, frac := math.Modf(h.phase + t.Seconds()*h.rps)
	return frac
}

// zoneFraction maps a byte offset to its radial position f in [0, 1]
// (0 = outer diameter): the cumulative capacity grows with the integral of
// the linear rate profile, so f solves a quadratic.
func (h *HDD) zoneFraction(off int64) float64 {
	ro, ri := h.p.OuterRate, h.p.InnerRate
	y := float64(off) / float64(h.p.Capacity)
	a, b := (ri-ro)/(ro+ri), 2*ro/(ro+ri)
	if math.Abs(a) < 1e-12 {
		return min(y/b, 1)
	}
	return min((-b+math.Sqrt(b*b+4*a*y))/(2*a), 1)
}

// capacityBefore is the number of bytes before radial position f.
func (h *HDD) capacityBefore(f float64) float64 {
	ro, ri := h.p.OuterRate, h.p.InnerRate
	return float64(h.p.Capacity) * (ro*f + (ri-ro)*f*f/2) / ((ro + ri) / 2)
}

// locate returns the cylinder holding off and the sector's angle.
func (h *HDD) locate(off int64) (cyl int, angle float64) {
	cyl = min(int(h.zoneFraction(off)*float64(h.cylinders)), h.cylinders-1)
	f := float64(cyl) / float64(h.cylinders)
	track := h.rateAtFraction(f) / h.rps
	_, angle = math.Modf((float64(off) - h.capacityBefore(f)) / track)
	return cyl, max(angle, 0)
}

// rateAt is the media rate at off.
func (h *HDD) rateAt(off int64) float64 { return h.rateAtFraction(h.zoneFraction(off)) }

func (h *HDD) rateAtFraction(f float64) float64 {
	return h.p.OuterRate + (h.p.InnerRate-h.p.OuterRate)*f
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}
