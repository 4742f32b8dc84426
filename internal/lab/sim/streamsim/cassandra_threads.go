package streamsim

import (
	"cmp"
	"fmt"
	"slices"
	"time"
)

// flusher is Cassandra's flush writer: it writes sealed memtables out as
// SSTables, oldest first, and then frees their commit-log segments.
type flusher struct {
	c   *cassandra
	job *flushJob
	q   opQueue
}

type flushJob struct {
	mem         *memtable
	t           *sstable
	issued      int64
	outstanding int
}

// Next implements Thread.
func (fl *flusher) Next(time.Duration) (Op, status, time.Duration) {
	c := fl.c
	if op, ok := fl.q.pop(); ok {
		return ready(op)
	}
	if c.err != nil {
		return Op{}, Finished, 0
	}
	if fl.job == nil {
		if len(c.flushQ) == 0 {
			return blocked()
		}
		m := c.flushQ[0]
		fl.job = &flushJob{mem: m, t: &sstable{f: c.fs.create(), size: c.bytesOf(0, m.updates), n: m.updates}}
	}
	j := fl.job
	if j.issued == j.t.size {
		return blocked() // the last writes are in flight
	}
	n := min(c.o.SSTWrite, j.t.size-j.issued)
	ext, err := c.fs.appendTo(j.t.f, n)
	if err != nil {
		c.fail(fmt.Errorf("flush: %w", err))
		return Op{}, Finished, 0
	}
	j.issued += n
	j.outstanding++
	c.Stats.FlushBytes += n
	fl.q.writes(ext, classFlushed, 0, func(time.Duration) { fl.written(j) })
	op, _ := fl.q.pop()
	return ready(op)
}

// written notes a completed write of j and finishes j after its last.
func (fl *flusher) written(j *flushJob) {
	if j.outstanding--; j.outstanding > 0 || j.issued < j.t.size {
		return
	}
	c := fl.c
	c.fs.closeFile(j.t.f)
	c.addTable(j.t)
	c.flushQ = c.flushQ[1:]
	c.Stats.Flushes++
	fl.q.trims(c.flushed(j.mem))
	fl.job = nil
}

// compactor is one of Cassandra's compaction threads: it merges a bucket
// of similar-sized SSTables into one, reading its inputs and writing the
// output at the shared compaction throughput limit, then deletes the
// inputs.
type compactor struct {
	c   *cassandra
	job *compJob
	q   opQueue
}

type compJob struct {
	in          []*sstable
	inBytes     int64
	out         *sstable
	issued      int64
	outstanding int
	read        seqReader
}

// Next implements Thread.
func (k *compactor) Next(now time.Duration) (Op, status, time.Duration) {
	c := k.c
	if op, ok := k.q.pop(); ok {
		return ready(op)
	}
	if c.err != nil {
		return Op{}, Finished, 0
	}
	if k.job == nil {
		if k.job = c.pickCompaction(); k.job == nil {
			return blocked()
		}
	}
	j := k.job
	if j.issued == j.out.size {
		return blocked()
	}
	if c.pacer > now {
		return waitUntil(c.pacer)
	}
	if err := k.step(j, now); err != nil {
		c.fail(err)
		return Op{}, Finished, 0
	}
	op, _ := k.q.pop()
	return ready(op)
}

// step plans the next chunk of j: the input it consumes, then the output.
func (k *compactor) step(j *compJob, now time.Duration) error {
	c := k.c
	n := min(c.o.SSTWrite, j.out.size-j.issued)
	// The input left is read in proportion to the output left, so the
	// reads stay even over the job and the last chunk takes the rest.
	in := int64(float64(n) * float64(j.inBytes) / float64(j.out.size-j.issued))
	if j.issued+n == j.out.size {
		in = j.inBytes
	}
	if c.o.CompactionRate > 0 {
		c.pacer = max(c.pacer, now) + time.Duration(float64(in)/c.o.CompactionRate*float64(time.Second))
	}
	k.q.reads(j.read.next(in))
	ext, err := c.fs.appendTo(j.out.f, n)
	if err != nil {
		return fmt.Errorf("compaction: %w", err)
	}
	j.inBytes -= in
	j.issued += n
	j.outstanding++
	c.Stats.CompactBytes += n
	c.Stats.CompactBytesTier[min(j.out.tier, 3)-1] += n
	k.q.writes(ext, tierClass(j.out.tier), 0, func(time.Duration) { k.written(j) })
	return nil
}

// written notes a completed output write and finishes j after its last.
func (k *compactor) written(j *compJob) {
	if j.outstanding--; j.outstanding > 0 || j.issued < j.out.size {
		return
	}
	c := k.c
	c.fs.closeFile(j.out.f)
	c.addTable(j.out)
	k.q.trims(c.removeTables(j.in))
	c.Stats.Compactions++
	k.job = nil
}

// pickCompaction chooses the next size-tiered compaction, as Cassandra
// 1.2 does: bucket the SSTables not being compacted by size (within
// BucketLow..BucketHigh of a bucket's average, or all below MinSSTable
// together), keep buckets of at least MinThreshold, each cut to its
// MaxThreshold oldest tables (by generation), and take the one with the
// smallest average size. It returns nil when no bucket qualifies.
func (c *cassandra) pickCompaction() *compJob {
	var idle []*sstable
	for _, t := range c.tables {
		if !t.compacting {
			idle = append(idle, t)
		}
	}
	slices.SortStableFunc(idle, func(a, b *sstable) int { return cmp.Compare(a.size, b.size) })
	var best []*sstable
	bestAvg := 0.0
	for _, b := range c.buckets(idle) {
		if len(b) < c.o.MinThreshold {
			continue
		}
		slices.SortFunc(b, func(x, y *sstable) int { return x.gen - y.gen })
		b = b[:min(len(b), c.o.MaxThreshold)]
		if avg := avgSize(b); best == nil || avg < bestAvg {
			best, bestAvg = b, avg
		}
	}
	if best == nil {
		return nil
	}
	return c.startCompaction(best)
}

// buckets groups tables (sorted by size) as size-tiered compaction does.
func (c *cassandra) buckets(sorted []*sstable) [][]*sstable {
	var out [][]*sstable
	var avgs []float64
	for _, t := range sorted {
		s := float64(t.size)
		placed := false
		for i, avg := range avgs {
			small := s < float64(c.o.MinSSTable) && avg < float64(c.o.MinSSTable)
			if small || (s > avg*c.o.BucketLow && s < avg*c.o.BucketHigh) {
				out[i] = append(out[i], t)
				avgs[i] = avg + (s-avg)/float64(len(out[i]))
				placed = true
				break
			}
		}
		if !placed {
			out = append(out, []*sstable{t})
			avgs = append(avgs, s)
		}
	}
	return out
}

// startCompaction marks in as compacting and plans their merge.
func (c *cassandra) startCompaction(in []*sstable) *compJob {
	j := &compJob{in: slices.Clone(in)}
	out := &sstable{f: c.fs.create()}
	files := make([]*file, len(in))
	for i, t := range in {
		t.compacting = true
		j.inBytes += t.size
		out.base += t.base
		out.n += t.n
		out.tier = max(out.tier, t.tier+1)
		files[i] = t.f
	}
	out.size = max(c.bytesOf(out.base, out.n), 1)
	j.out, j.read = out, seqReader{files: files}
	return j
}

func avgSize(ts []*sstable) float64 {
	var s float64
	for _, t := range ts {
		s += float64(t.size)
	}
	return s / float64(len(ts))
}

// journal is ext4's jbd2: every commit interval it writes the metadata
// blocks dirtied since the last commit to the journal (a descriptor, the
// blocks, a commit block, sequentially and circularly), and when a
// quarter of the journal has been used since the last checkpoint it
// writes the committed blocks to their homes.
type journal struct {
	fs      *fileSystem
	next    time.Duration
	cursor  int64
	used    int64
	homes   map[int64]bool
	q       opQueue
	started bool
}

// Next implements Thread.
func (j *journal) Next(now time.Duration) (Op, status, time.Duration) {
	if op, ok := j.q.pop(); ok {
		return ready(op)
	}
	if !j.started {
		j.started, j.next, j.homes = true, now+j.fs.o.Commit, make(map[int64]bool)
	}
	if now < j.next {
		return waitUntil(j.next)
	}
	j.next = now + j.fs.o.Commit
	j.commit()
	if op, ok := j.q.pop(); ok {
		return ready(op)
	}
	return waitUntil(j.next)
}

// commit queues one transaction and, when due, a checkpoint.
func (j *journal) commit() {
	blocks := j.fs.takeDirty()
	if len(blocks) == 0 {
		return
	}
	mb := j.fs.o.MetaBlock
	size := int64(len(blocks)+2) * mb
	for size > 0 {
		n := min(size, j.fs.o.Journal-j.cursor)
		j.q.push(Op{Kind: opWrite, Off: j.fs.jOff + j.cursor, Len: n, Class: classSystem})
		j.cursor = (j.cursor + n) % j.fs.o.Journal
		size -= n
	}
	j.used += int64(len(blocks)+2) * mb
	for _, b := range blocks {
		j.homes[b] = true
	}
	if j.used >= j.fs.o.Journal/4 {
		j.checkpoint()
	}
}

// checkpoint queues the in-place writes of the journalled blocks.
func (j *journal) checkpoint() {
	homes := make([]int64, 0, len(j.homes))
	for b := range j.homes {
		homes = append(homes, b)
	}
	slices.Sort(homes)
	for _, b := range homes {
		j.q.push(Op{Kind: opWrite, Off: b, Len: j.fs.o.MetaBlock, Class: classSystem})
	}
	clear(j.homes)
	j.used = 0
}
