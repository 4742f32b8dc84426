package model

import "time"

// dieOps counts the flash operations one request (or one background
// collection) causes on each die; flashTimeline turns them into time.
type dieOps struct {
	prog, read, copy, erase []int32
}

func newDieOps(dies int) dieOps {
	return dieOps{make([]int32, dies), make([]int32, dies), make([]int32, dies), make([]int32, dies)}
}

func (o *dieOps) reset() {
	clear(o.prog)
	clear(o.read)
	clear(o.copy)
	clear(o.erase)
}

func (o *dieOps) active(d int) bool {
	return o.prog[d]|o.read[d]|o.copy[d]|o.erase[d] != 0
}

// spread adds n operations to the dies holding positions start ..
// start+n-1 of a stripe that places position i on die i mod len(arr).
func spread(arr []int32, start, n int64) {
	if n <= 0 {
		return
	}
	d := int64(len(arr))
	each, rest := int32(n/d), n%d
	first := start % d
	for i := range arr {
		arr[i] += each
		if (int64(i)-first+d)%d < rest {
			arr[i]++
		}
	}
}

// flashTimeline is the time side of an SSD: a timeline per die, the host
// link, and the cost of each flash operation.
type flashTimeline struct {
	p        *SSDParams
	dieFree  []time.Duration // when each die finishes its queued work
	hostFree time.Duration   // when the host link is free
	pageXfer time.Duration   // one page over a channel
	active   []int           // scratch: active dies per channel
}

func newFlashTimeline(p *SSDParams) *flashTimeline {
	return &flashTimeline{
		p:        p,
		dieFree:  make([]time.Duration, p.dies()),
		pageXfer: xferTime(p.PageSize, p.ChannelRate),
		active:   make([]int, p.Channels),
	}
}

// channel of die d: dies are numbered so that consecutive dies sit on
// different channels, and a stripe over dies covers every channel first.
func (f *flashTimeline) channel(d int) int { return d % f.p.Channels }

// schedule runs a host request's flash work and returns its completion.
// The host link moves the data at the interface rate; each die runs its
// operations after its queued work and the command overhead; the request
// ends when both are done.
func (f *flashTimeline) schedule(now time.Duration, op Op, n int64, ops *dieOps) time.Duration {
	rate, ovh := f.p.HostReadRate, f.p.ReadOverhead
	if op != Read {
		rate, ovh = f.p.HostWriteRate, f.p.WriteOverhead
	}
	if op == Trim {
		n = 0
	}
	hStart := max(now, f.hostFree)
	f.hostFree = hStart + xferTime(n, rate)
	done := f.hostFree + ovh
	end := f.runDies(hStart+ovh, ops)
	if op == Read && end > hStart+ovh {
		end += xferTime(min(n, f.p.PageSize), rate) // the last page still crosses the host link
	}
	return max(done, end)
}

// runDies queues each die's operations at or after start and returns when
// the last die finishes.
func (f *flashTimeline) runDies(start time.Duration, ops *dieOps) time.Duration {
	clear(f.active)
	for d := range f.dieFree {
		if ops.prog[d]+ops.read[d] > 0 {
			f.active[f.channel(d)]++
		}
	}
	end := start
	for d := range f.dieFree {
		if !ops.active(d) {
			continue
		}
		f.dieFree[d] = max(f.dieFree[d], start) + f.dieWork(d, ops)
		end = max(end, f.dieFree[d])
	}
	return end
}

// dieWork is the busy time of die d for ops. Host pages go Planes at a
// time; a page transfer shares the channel with the other dies this request
// keeps busy on it, and overlaps the previous array operation (cache
// program / cache read), so each step costs the slower of the two.
func (f *flashTimeline) dieWork(d int, ops *dieOps) time.Duration {
	p := f.p
	planes := int64(p.Planes)
	bus := time.Duration(max(f.active[f.channel(d)], 1)) * time.Duration(planes) * f.pageXfer
	var w time.Duration
	if n := int64(ops.prog[d]); n > 0 {
		w += f.pageXfer + time.Duration((n+planes-1)/planes)*max(p.ProgramPage, bus)
	}
	if n := int64(ops.read[d]); n > 0 {
		w += p.ReadPage + time.Duration((n+planes-1)/planes-1)*max(p.ReadPage, bus) + f.pageXfer
	}
	return w + f.gcWork(int64(ops.copy[d]), int64(ops.erase[d]))
}

// gcWork is the die time of copying n pages and erasing e blocks.
func (f *flashTimeline) gcWork(n, e int64) time.Duration {
	p := f.p
	planes := int64(p.Planes)
	w := time.Duration((n+planes-1)/planes)*(p.ReadPage+p.ProgramPage) + time.Duration(e)*p.EraseBlock
	if !p.Copyback {
		w += time.Duration(2*n) * f.pageXfer
	}
	return w
}
