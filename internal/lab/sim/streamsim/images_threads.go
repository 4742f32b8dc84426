package streamsim

import (
	"fmt"
	"slices"
	"time"
)

// lsmFlusher writes sealed memtables as L0 tables, then deletes their WAL.
type lsmFlusher struct {
	s           *leveled
	mem         *lsmMem
	t           *lsmTable
	issued      int64
	outstanding int
	q           opQueue
}

// Next implements Thread.
func (f *lsmFlusher) Next(time.Duration) (Op, status, time.Duration) {
	s := f.s
	if op, ok := f.q.pop(); ok {
		return ready(op)
	}
	if s.err != nil {
		return Op{}, Finished, 0
	}
	if f.mem == nil {
		if len(s.queue) == 0 {
			return blocked()
		}
		f.mem, f.issued = s.queue[0], 0
		f.t = &lsmTable{f: s.fs.create(), size: f.mem.bytes}
	}
	if f.issued == f.t.size {
		return blocked()
	}
	n := min(s.o.SSTWrite, f.t.size-f.issued)
	ext, err := s.fs.appendTo(f.t.f, n)
	if err != nil {
		s.fail(fmt.Errorf("flush: %w", err))
		return Op{}, Finished, 0
	}
	f.issued += n
	f.outstanding++
	f.q.writes(ext, classL0, 0, func(time.Duration) { f.written() })
	op, _ := f.q.pop()
	return ready(op)
}

func (f *lsmFlusher) written() {
	if f.outstanding--; f.outstanding > 0 || f.issued < f.t.size {
		return
	}
	s := f.s
	s.fs.closeFile(f.t.f)
	l0 := &s.levels[0]
	l0.tables, l0.size = append(l0.tables, f.t), l0.size+f.t.size
	s.queue = s.queue[1:]
	f.q.trims(s.fs.remove(f.mem.wal))
	f.mem = nil
}

// lsmCompactor is one of Badger's compactors.
type lsmCompactor struct {
	s   *leveled
	job *lsmJob
	q   opQueue
}

// lsmJob merges tables of level from into level from+1 (or the base).
type lsmJob struct {
	from, to    int
	in          []*lsmTable // from's tables
	under       []*lsmTable // to's overlapping tables
	live        int64       // output bytes
	outs        []*lsmTable
	cur         *lsmTable
	issued      int64
	outstanding int
	read        seqReader
	inBytes     int64
}

// Next implements Thread.
func (k *lsmCompactor) Next(time.Duration) (Op, status, time.Duration) {
	s := k.s
	if op, ok := k.q.pop(); ok {
		return ready(op)
	}
	if s.err != nil {
		return Op{}, Finished, 0
	}
	if k.job == nil {
		if k.job = s.pick(); k.job == nil {
			return blocked()
		}
	}
	if k.job.issued == k.job.live {
		return blocked()
	}
	if err := k.step(k.job); err != nil {
		s.fail(err)
		return Op{}, Finished, 0
	}
	op, _ := k.q.pop()
	return ready(op)
}

// step reads the next slice of input and writes the output it makes.
func (k *lsmCompactor) step(j *lsmJob) error {
	s := k.s
	if j.cur == nil || j.cur.f.size == j.cur.size {
		j.cur = &lsmTable{f: s.fs.create(), size: min(s.tableSize(j.to), j.live-j.issued)}
		j.outs = append(j.outs, j.cur)
	}
	n := min(s.o.SSTWrite, j.cur.size-j.cur.f.size)
	in := int64(float64(n) / float64(j.live) * float64(j.inBytes))
	if j.issued+n == j.live {
		in = 1 << 62
	}
	k.q.reads(j.read.next(in))
	ext, err := s.fs.appendTo(j.cur.f, n)
	if err != nil {
		return fmt.Errorf("compaction: %w", err)
	}
	if j.cur.f.size == j.cur.size {
		s.fs.closeFile(j.cur.f)
	}
	j.issued += n
	j.outstanding++
	k.q.writes(ext, s.classOf(j.to), 0, func(time.Duration) { k.written(j) })
	return nil
}

func (k *lsmCompactor) written(j *lsmJob) {
	if j.outstanding--; j.outstanding > 0 || j.issued < j.live {
		return
	}
	k.q.trims(k.s.install(j))
	k.job = nil
}

// pick chooses the most urgent compaction whose levels are free: L0 by
// table count, deeper levels by size over target (Badger's scores).
func (s *leveled) pick() *lsmJob {
	t := s.targets()
	base := s.baseLevel()
	best, bestScore := -1, 1.0
	if l0 := &s.levels[0]; !l0.busy && !s.levels[base].busy {
		if sc := float64(len(l0.tables)) / float64(s.o.L0Tables); sc >= bestScore {
			best, bestScore = 0, sc
		}
	}
	for i := base; i < len(s.levels)-1; i++ {
		l := &s.levels[i]
		if l.busy || s.levels[i+1].busy || len(l.tables) == 0 {
			continue
		}
		if sc := (float64(l.size) - l.dead) / float64(t[i]); sc > bestScore {
			best, bestScore = i, sc
		}
	}
	if best < 0 {
		return nil
	}
	if best == 0 {
		return s.startJob(0, base, slices.Clone(s.levels[0].tables), slices.Clone(s.levels[base].tables))
	}
	return s.startDown(best)
}

// maxCompactionTables bounds the tables of a level compacted down at once,
// RocksDB's max_compaction_bytes (25 target files).
const maxCompactionTables = 25

// startDown compacts the next tables of level i (round robin over the key
// space), as many as bring it back to its target, up to
// maxCompactionTables, with the tables of level i+1 whose keys they
// overlap: the same share of them, and one more at the edges.
func (s *leveled) startDown(i int) *lsmJob {
	l, next := &s.levels[i], &s.levels[i+1]
	excess := float64(l.size) - l.dead - float64(s.targets()[i])
	l.cursor %= len(l.tables)
	var in []*lsmTable
	var inBytes int64
	first := l.cursor
	for len(in) < maxCompactionTables && l.cursor < len(l.tables) && (len(in) == 0 || float64(inBytes) < excess) {
		t := l.tables[l.cursor]
		in, inBytes = append(in, t), inBytes+t.size
		l.cursor++
	}
	var under []*lsmTable
	if n := len(next.tables); n > 0 {
		share := float64(inBytes) / float64(l.size)
		k := min(int(share*float64(n))+1, n)
		at := min(int(float64(first)/float64(len(l.tables))*float64(n)), n-k)
		under = slices.Clone(next.tables[at : at+k])
	}
	return s.startJob(i, i+1, in, under)
}

// startJob marks the levels busy and sizes the output: the inputs' live
// bytes, each level's dead share dropped.
func (s *leveled) startJob(from, to int, in, under []*lsmTable) *lsmJob {
	j := &lsmJob{from: from, to: to, in: in, under: under}
	s.levels[from].busy, s.levels[to].busy = true, true
	var files []*file
	live := 0.0
	for _, part := range []struct {
		ts []*lsmTable
		l  *level
	}{{in, &s.levels[from]}, {under, &s.levels[to]}} {
		var b int64
		for _, t := range part.ts {
			b += t.size
			files = append(files, t.f)
		}
		live += float64(b) * (1 - deadShare(part.l))
		j.inBytes += b
	}
	j.live = max(int64(live), 1)
	j.read = seqReader{files: files}
	return j
}

func deadShare(l *level) float64 {
	if l.size <= 0 {
		return 0
	}
	return min(l.dead/float64(l.size), 1)
}

// install replaces j's inputs by its outputs and returns the inputs'
// extents for TRIM.
func (s *leveled) install(j *lsmJob) []extent {
	var trims []extent
	for _, part := range []struct {
		ts []*lsmTable
		l  *level
	}{{j.in, &s.levels[j.from]}, {j.under, &s.levels[j.to]}} {
		var b int64
		for _, t := range part.ts {
			b += t.size
			trims = append(trims, s.fs.remove(t.f)...)
		}
		part.l.dead -= float64(b) * deadShare(part.l)
		part.l.size -= b
		part.l.tables = slices.DeleteFunc(part.l.tables, func(t *lsmTable) bool { return slices.Contains(part.ts, t) })
	}
	to := &s.levels[j.to]
	for _, t := range j.outs {
		t.size = t.f.size
		to.tables = append(to.tables, t)
		to.size += t.size
	}
	s.levels[j.from].busy, to.busy = false, false
	return trims
}
