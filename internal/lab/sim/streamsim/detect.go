package streamsim

// detector is the multi-streamed SSD's automatic stream assignment (MS
// §4.2): the drive detects up to four concurrent sequential write patterns
// and gives each a stream; a fifth pattern takes the stream of the least
// recently used one. A write continues a pattern when it starts where the
// pattern's last write ended; a pattern is detected when a write starts
// where a recent write outside any pattern ended. Other writes are random
// and go to stream 0. The paper gives no more detail; the history of
// recent write ends is the least a detector needs to see a pattern begin.
type detector struct {
	slots   []pattern // stream i+1 follows slots[i]
	history []int64   // ends of recent writes outside patterns, newest last
	histCap int
	clock   uint64
	// Total counts the bytes of the writes the detector saw, Sequential
	// those it put in a pattern (the paper: 71% of Cassandra's data).
	Sequential, Total int64
}

type pattern struct {
	next int64 // byte offset a continuing write starts at; -1 unused
	used uint64
}

func newDetector(streams, history int) *detector {
	d := &detector{slots: make([]pattern, streams), histCap: history}
	for i := range d.slots {
		d.slots[i].next = -1
	}
	return d
}

// Stream implements Mapping.
func (d *detector) Stream(op *Op) int {
	d.clock++
	end := op.Off + op.Len
	d.Total += op.Len
	if i := d.follows(op.Off); i >= 0 {
		d.slots[i].next, d.slots[i].used = end, d.clock
		d.Sequential += op.Len
		return i + 1
	}
	if d.fromHistory(op.Off) {
		i := d.lru()
		d.slots[i] = pattern{next: end, used: d.clock}
		d.Sequential += op.Len
		return i + 1
	}
	d.remember(end)
	return 0
}

// follows returns the slot whose pattern op continues, or -1.
func (d *detector) follows(off int64) int {
	for i, p := range d.slots {
		if p.next == off {
			return i
		}
	}
	return -1
}

// fromHistory removes and reports a recent write end equal to off.
func (d *detector) fromHistory(off int64) bool {
	for i := len(d.history) - 1; i >= 0; i-- {
		if d.history[i] == off {
			d.history = append(d.history[:i], d.history[i+1:]...)
			return true
		}
	}
	return false
}

func (d *detector) remember(end int64) {
	if len(d.history) == d.histCap {
		d.history = d.history[1:]
	}
	d.history = append(d.history, end)
}

// lru returns the least recently used slot (an unused one first).
func (d *detector) lru() int {
	best := 0
	for i, p := range d.slots {
		if p.used < d.slots[best].used {
			best = i
		}
	}
	return best
}

// SequentialShare is the fraction of written bytes put in a pattern.
func (d *detector) SequentialShare() float64 {
	if d.Total == 0 {
		return 0
	}
	return float64(d.Sequential) / float64(d.Total)
}
