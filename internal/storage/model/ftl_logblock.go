package model

// logUnit is one log unit of the LogBlock FTL: a physical unit that
// absorbs writes to one logical unit, page-mapped inside (BAST).
type logUnit struct {
	lu, pu  int32   // logical unit served (-1 = unused), physical unit
	used    int32   // pages appended
	seq     int32   // next offset if written in order from 0, else -1
	pos     []int32 // offset in the logical unit -> position in the log, -1
	present int32   // distinct offsets in the log
	last    int64   // LRU clock
}

// logBlockFTL is a coarse (hybrid) mapping FTL, BAST-style (Kim et al.
// 2002): logical units of one erase block per die, striped page by page
// over the dies, are mapped whole to physical units; updates go to a few
// log units. A log written in order from offset 0 to the end is switched
// in (one erase); one written in order but short of the end is completed
// from the old unit (partial merge); any other log is merged by copying
// the whole unit (full merge). With few logs, every small random write
// costs a merge, which is why such drives do 4 KB random writes at tens of
// KB/s (FlashStream Table 2, OCZ Core V2: 0.02 MB/s) and reach sequential
// speed only with unit-aligned writes of a whole unit (FlashStream §3.1).
type logBlockFTL struct {
	dies        int64
	upp         int32   // pages per unit
	data        []int32 // logical unit -> physical unit, -1 = unmapped
	free        []int32 // erased physical units
	logs        []logUnit
	clock       int64
	eraseBlocks int64 // erase blocks per unit

	ops   *dieOps
	stats *Stats
}

func newLogBlockFTL(p *SSDParams, stats *Stats) *logBlockFTL {
	upp := int32(p.UnitSize() / p.PageSize)
	lus := (p.Capacity + p.UnitSize() - 1) / p.UnitSize()
	f := &logBlockFTL{
		dies: int64(p.dies()), upp: upp, data: filled(int(lus), -1),
		eraseBlocks: int64(p.dies() * p.Planes), stats: stats,
	}
	for pu := int32(p.blocksPerDie()) - 1; pu >= 0; pu-- {
		f.free = append(f.free, pu)
	}
	f.logs = make([]logUnit, p.LogBlocks)
	for i := range f.logs {
		f.logs[i] = logUnit{lu: -1, pos: filled(int(upp), -1)}
	}
	return f
}

func (f *logBlockFTL) setOps(o *dieOps)     { f.ops = o }
func (f *logBlockFTL) freeBlocks(int) int   { return len(f.free) }
func (f *logBlockFTL) collectIdle(int) bool { return false }

// forUnits calls fn for each logical unit piece of [first, first+n).
func (f *logBlockFTL) forUnits(first, n int64, fn func(lu, off, cnt int32)) {
	for n > 0 {
		lu, off := int32(first/int64(f.upp)), int32(first%int64(f.upp))
		cnt := int32(min(n, int64(f.upp-off)))
		fn(lu, off, cnt)
		first, n = first+int64(cnt), n-int64(cnt)
	}
}

func (f *logBlockFTL) write(first, n int64, stream int) {
	f.forUnits(first, n, f.writeUnit)
	f.stats.HostWrites += n
	f.stats.Streams[stream].HostWrites += n
}

// writeUnit writes cnt pages at offset off of logical unit lu.
func (f *logBlockFTL) writeUnit(lu, off, cnt int32) {
	if off == 0 && cnt == f.upp {
		f.replaceUnit(lu)
		return
	}
	l := f.logFor(lu)
	if l.used+cnt > f.upp {
		f.merge(l)
		l = f.logFor(lu)
	}
	spread(f.ops.prog, int64(l.used), int64(cnt))
	for o := off; o < off+cnt; o++ {
		if l.pos[o] < 0 {
			l.present++
		}
		l.pos[o] = l.used
		l.used++
	}
	if l.seq == off {
		l.seq += cnt
	} else {
		l.seq = -1
	}
	if l.seq == f.upp {
		f.merge(l) // complete in order: switch now
	}
}

// replaceUnit writes a whole logical unit to a fresh physical unit.
func (f *logBlockFTL) replaceUnit(lu int32) {
	if l := f.findLog(lu); l != nil {
		f.release(l.pu)
		f.dropLog(l)
	}
	pu := f.take()
	spread(f.ops.prog, 0, int64(f.upp))
	f.release(f.data[lu])
	f.data[lu] = pu
}

// logFor returns lu's log, allocating one (merging the least recently used
// log if none is free).
func (f *logBlockFTL) logFor(lu int32) *logUnit {
	f.clock++
	if l := f.findLog(lu); l != nil {
		l.last = f.clock
		return l
	}
	var l *logUnit
	for i := range f.logs {
		c := &f.logs[i]
		if c.lu < 0 {
			l = c
			break
		}
		if l == nil || c.last < l.last {
			l = c
		}
	}
	if l.lu >= 0 {
		f.merge(l)
	}
	l.lu, l.pu, l.used, l.seq, l.present, l.last = lu, f.take(), 0, 0, 0, f.clock
	return l
}

func (f *logBlockFTL) findLog(lu int32) *logUnit {
	for i := range f.logs {
		if f.logs[i].lu == lu {
			return &f.logs[i]
		}
	}
	return nil
}

// merge folds log l into its logical unit and frees the log.
func (f *logBlockFTL) merge(l *logUnit) {
	old := f.data[l.lu]
	switch {
	case l.seq == f.upp: // switch merge
		f.data[l.lu] = l.pu
		f.stats.SwitchMerges++
	case l.seq > 0: // partial merge: complete the tail from the old unit
		if old >= 0 {
			f.copyPages(int64(l.used), int64(f.upp-l.seq))
		}
		f.data[l.lu] = l.pu
		f.stats.PartialMerges++
	default: // full merge into a fresh unit
		pu := f.take()
		n := int64(l.present)
		if old >= 0 {
			n = int64(f.upp)
		}
		f.copyPages(0, n)
		f.release(l.pu)
		f.data[l.lu] = pu
		f.stats.FullMerges++
	}
	f.release(old)
	f.dropLog(l)
}

// copyPages counts n page copies into unit positions start.. (each die
// copies its own stripe share).
func (f *logBlockFTL) copyPages(start, n int64) {
	spread(f.ops.copy, start, n)
	f.stats.GCCopies += n
	f.stats.Streams[0].GCCopies += n
}

func (f *logBlockFTL) dropLog(l *logUnit) {
	if l.used > 0 {
		for i := range l.pos {
			l.pos[i] = -1
		}
	}
	l.lu, l.pu, l.used, l.seq, l.present = -1, -1, 0, 0, 0
}

// take pops an erased physical unit.
func (f *logBlockFTL) take() int32 {
	if len(f.free) == 0 {
		panic("model: log-block FTL ran out of physical units")
	}
	pu := f.free[len(f.free)-1]
	f.free = f.free[:len(f.free)-1]
	return pu
}

// release erases physical unit pu (every die erases its block) and frees it.
func (f *logBlockFTL) release(pu int32) {
	if pu < 0 {
		return
	}
	for d := range f.ops.erase {
		f.ops.erase[d]++
	}
	f.stats.Erases += f.eraseBlocks
	f.free = append(f.free, pu)
}

// read counts a flash read on the die holding each mapped page.
func (f *logBlockFTL) read(first, n int64) {
	f.forUnits(first, n, func(lu, off, cnt int32) {
		l := f.findLog(lu)
		for o := off; o < off+cnt; o++ {
			switch {
			case l != nil && l.pos[o] >= 0:
				f.ops.read[int64(l.pos[o])%f.dies]++
			case f.data[lu] >= 0:
				f.ops.read[int64(o)%f.dies]++
			default:
				continue
			}
			f.stats.HostReads++
		}
	})
}

// trim discards whole logical units in the range; partial units are kept
// (drives of this class did not implement TRIM below their mapping unit).
func (f *logBlockFTL) trim(first, n int64) {
	f.forUnits(first, n, func(lu, off, cnt int32) {
		if off != 0 || cnt != f.upp || f.data[lu] < 0 && f.findLog(lu) == nil {
			return
		}
		if l := f.findLog(lu); l != nil {
			f.release(l.pu)
			f.dropLog(l)
		}
		f.release(f.data[lu])
		f.data[lu] = -1
		f.stats.TrimmedPages += int64(f.upp)
	})
}
