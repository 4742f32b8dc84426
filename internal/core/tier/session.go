package tier

// sessionTable is BlockReinsert's knowledge of viewers reading a group (a
// title's rendition) in order: interval caching (Dan and Sitaram) learnt
// from the request stream. A request for segment k of a group whose
// tracked cursor stands at k-1 (or a segment or two before: a skipped or
// already cached segment) advances that cursor; any other request starts
// a cursor at k. A cursor that has advanced sessionMinRun times in a row
// is a viewer: it will ask for k+1, k+2, ... about one measured step
// apart, so a segment of its group ahead of it is worth a request at a
// known distance, whatever the group's popularity. Random requests within
// a title (FlashStream's) rarely line up sessionMinRun times, so they
// leave no viewer behind them.
//
// Time is the sketch's request count (every Lookup adds one): a step is
// the requests the whole cache served between two of the viewer's, and a
// segment d steps ahead is worth window/(d*step) recent requests, the
// rate the sketch would count for it, so the two add up. A viewer is
// forgotten once it is sessionExpire steps late (it left or finished)
// or, the table being full, when it is the least recently advanced.
//
// Memory: at most Options.Sessions cursors of 40 bytes each, plus their
// map entries, at most sessionsPerGroup cursors a group: about 100 bytes
// a cursor, 1.6 MiB at DefaultSessions.
type sessionTable struct {
	cur        []cursor
	byGroup    map[uint64][]int32 // a group's cursors, by slot
	head, tail int32              // least recently advanced at tail; -1 when empty
	used       int32              // slots handed out so far

	capture bool // Options.SessionCapture: no read-through rate

	// readReqs counts the requests of viewers reading a group through
	// (sessionReadRun steps in order or more), readRepeats those of them
	// for a segment the sketch had counted already: their ratio is how
	// often a group read through is read again within the sketch's
	// memory. Both age with the sketch.
	readReqs, readRepeats float64
}

// readThrough reports whether a viewer is reading or has read group g
// through: one of its cursors in the table has advanced sessionReadRun
// times in a row.
func (t *sessionTable) readThrough(g uint64) bool {
	for _, i := range t.byGroup[g] {
		if t.cur[i].run >= sessionReadRun {
			return true
		}
	}
	return false
}

type cursor struct {
	group      uint64
	pos        int32   // the segment last requested
	run        int32   // in-order steps so far
	last       int64   // the sketch's count at that request
	step       float64 // requests between two of its steps, averaged
	prev, next int32   // LRU links
}

// Session table defaults.
const (
	// DefaultSessions is the number of cursors of Options.Sessions'
	// default: a few times the concurrent in-order viewers a node serves,
	// since random requests start cursors that never advance.
	DefaultSessions = 16384
	// sessionsPerGroup bounds the cursors of one group: scoring a segment
	// walks them.
	sessionsPerGroup = 32
	// sessionsUnconfirmed bounds the cursors of one group that are not
	// viewers yet: random requests within a popular title start one each,
	// and with many of them some would line up sessionMinRun times by
	// chance (FlashStream's workload lost half a point of hit ratio with
	// 32); a new one replaces the oldest.
	sessionsUnconfirmed = 4
	// sessionMinRun is the in-order steps after which a cursor is a
	// viewer.
	sessionMinRun = 4
	// sessionReadRun is the in-order steps after which a viewer is taken
	// to read its group through: random requests within a popular title
	// (FlashStream's) line up sessionMinRun times now and then, never
	// this many (with 8 they still changed flashstream's hit ratio and
	// writes; 16 and 32 measured alike, 32 leaves a margin).
	sessionReadRun = 32
	// sessionSkip is the largest jump, in segments, that still advances
	// a cursor.
	sessionSkip = 2
	// sessionExpire is how many steps late a viewer may be before it is
	// taken to have left.
	sessionExpire = 8
	// sessionStepAlpha is the weight of the newest step in its average.
	sessionStepAlpha = 0.25
)

func newSessionTable(n int) *sessionTable {
	return &sessionTable{cur: make([]cursor, n), byGroup: make(map[uint64][]int32), head: -1, tail: -1}
}

// ordinal is the segment number of key within its group: the last run of
// digits in the first path element after the group, up to its first '.'
// ("12" in "v/T/R/12.m4s", "00012" in ".../oseg_00012.m4s/variant/0"; the
// last nine digits of a longer run), or -1.
func ordinal(key, group string) int32 {
	if len(group) >= len(key) || key[:len(group)] != group {
		return -1
	}
	rest := key[len(group):]
	for i := 0; i < len(rest); i++ {
		if rest[i] == '/' || rest[i] == '.' { // the name, without its extension ("m4s" is no ordinal)
			rest = rest[:i]
			break
		}
	}
	end := -1
	for i := len(rest) - 1; i >= 0; i-- {
		if rest[i] >= '0' && rest[i] <= '9' {
			end = i + 1
			break
		}
	}
	if end < 0 {
		return -1
	}
	start := end
	for start > 0 && rest[start-1] >= '0' && rest[start-1] <= '9' {
		start--
	}
	if end-start > 9 {
		start = end - 9
	}
	var n int32
	for i := start; i < end; i++ {
		n = n*10 + int32(rest[i]-'0')
	}
	return n
}

func (t *sessionTable) unlink(i int32) {
	c := &t.cur[i]
	if c.prev >= 0 {
		t.cur[c.prev].next = c.next
	} else {
		t.head = c.next
	}
	if c.next >= 0 {
		t.cur[c.next].prev = c.prev
	} else {
		t.tail = c.prev
	}
}

func (t *sessionTable) pushFront(i int32) {
	c := &t.cur[i]
	c.prev, c.next = -1, t.head
	if t.head >= 0 {
		t.cur[t.head].prev = i
	}
	t.head = i
	if t.tail < 0 {
		t.tail = i
	}
}

// drop takes cursor i out of its group's list.
func (t *sessionTable) drop(i int32) {
	g := t.cur[i].group
	l := t.byGroup[g]
	for j, s := range l {
		if s == i {
			l[j] = l[len(l)-1]
			l = l[:len(l)-1]
			break
		}
	}
	if len(l) == 0 {
		delete(t.byGroup, g)
	} else {
		t.byGroup[g] = l
	}
}

// observe records a request for segment ord of group g at count now and
// reports whether it came from a viewer reading the group through.
func (t *sessionTable) observe(g uint64, ord int32, now int64) (through bool) {
	if ord < 0 || len(t.cur) == 0 {
		return false
	}
	l := t.byGroup[g]
	best := int32(-1)
	for _, i := range l {
		c := &t.cur[i]
		skip := int32(1) // a cursor not yet a viewer must not skip: random requests would line up
		if c.run >= sessionMinRun {
			skip = sessionSkip
		}
		if c.pos < ord && c.pos >= ord-skip && (best < 0 || c.pos > t.cur[best].pos ||
			c.pos == t.cur[best].pos && c.last > t.cur[best].last) {
			best = i
		}
	}
	if best >= 0 {
		c := &t.cur[best]
		step := float64(now-c.last) / float64(ord-c.pos)
		if c.run == 0 {
			c.step = step
		} else {
			c.step += sessionStepAlpha * (step - c.step)
		}
		c.pos, c.last = ord, now
		c.run++
		t.unlink(best)
		t.pushFront(best)
		return c.run >= sessionReadRun
	}
	var i int32
	unconf, oldest := 0, int32(-1)
	for _, s := range l {
		if t.cur[s].run < sessionMinRun {
			unconf++
			if oldest < 0 || t.cur[s].last < t.cur[oldest].last {
				oldest = s
			}
		}
	}
	switch {
	case unconf >= sessionsUnconfirmed:
		i = oldest
		t.drop(i)
		t.unlink(i)
	case len(l) >= sessionsPerGroup:
		i = l[0] // the group's least recently added
		for _, s := range l[1:] {
			if t.cur[s].last < t.cur[i].last {
				i = s
			}
		}
		t.drop(i)
		t.unlink(i)
	case int(t.used) < len(t.cur):
		i = t.used
		t.used++
	default:
		i = t.tail
		t.drop(i)
		t.unlink(i)
	}
	t.cur[i] = cursor{group: g, pos: ord, last: now}
	t.byGroup[g] = append(t.byGroup[g], i)
	t.pushFront(i)
	return false
}

// readRate is the rate of a group read through whose requests per
// distinct segment are ratio: its readings in the sketch's memory times
// the share of read-through requests that found their segment requested
// before, the chance that a reading is followed by another. Without
// enough read-through requests to tell, ok is false.
func (t *sessionTable) readRate(ratio float64) (rate float64, ok bool) {
	if t.capture || t.readReqs < 1 {
		return 0, false
	}
	return ratio * t.readRepeats / t.readReqs, true
}

// value is the requests per window of w the group's viewers will make
// for segment ord: for each viewer behind it, window over the requests
// until it gets there.
func (t *sessionTable) value(g uint64, ord int32, now int64, window float64) float64 {
	if ord < 0 {
		return 0
	}
	var v float64
	for _, i := range t.byGroup[g] {
		c := &t.cur[i]
		if c.run < sessionMinRun || c.pos >= ord {
			continue
		}
		late := float64(now - c.last)
		if late > sessionExpire*max(c.step, 1) {
			continue
		}
		d := max(float64(ord-c.pos)*c.step-late, c.step, 1)
		v += window / d
	}
	return v
}
