package streamsim

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"time"
)

// cassandraOptions configure the Cassandra-like workload of MS §4: YCSB
// updates into Cassandra 1.2 with size-tiered compaction on ext4. Byte
// sizes marked "scaled" are for the 256 GB drive and are multiplied by the
// run's scale; record sizes are not.
type cassandraOptions struct {
	// Fill is the share of the file system the loaded data set takes.
	// Default 0.4. MS §4 does not give its data set size; DataStax's rule
	// for size-tiered compaction is at most half the disk, as a merge may
	// briefly need as much free space as its input. At 0.5 the reference
	// drive that never copies runs the file system full within the 40
	// minutes: on it flushes outrun four compactors and SSTables pile up.
	Fill float64
	// ZipfExponent is the exponent s of YCSB's request distribution over
	// keys (p(k) proportional to 1/k^s; YCSB calls it the Zipfian
	// constant). It is not a theta: workload.NewZipfTheta's theta means
	// s = 1 - theta. Default 0.99 (YCSB's default; workload A's).
	ZipfExponent float64
	// Fields is the fields per record, each updated alone (YCSB:
	// fieldcount 10, writeallfields false). Default 10.
	Fields int
	// CellBytes is a field on disk in an SSTable: name (2+6), flags (1),
	// timestamp (8), length (4), 100-byte value (YCSB fieldlength).
	// Default 121.
	CellBytes int64
	// RowBytes is a row's overhead in an SSTable beyond its cells: key
	// (2+23), row header (24), index entry (37), bloom filter bits (1).
	// Default 87.
	RowBytes int64
	// UpdateBytes is one update in the commit log: a RowMutation of one
	// cell (193) in an entry with its size and two checksums (20).
	// Default 213.
	UpdateBytes int64
	// Memtable is the serialized bytes at which a memtable is flushed:
	// memtable_total_space_in_mb (a third of the 1 GiB heap a 2 GB
	// machine gets) divided by a live ratio of about 10. Default 32 MiB,
	// scaled.
	Memtable int64
	// FlushQueue is memtable_flush_queue_size: writes block while more
	// memtables wait for the flush writer. Default 4.
	FlushQueue int
	// CLSegment and CLTotal are commitlog_segment_size_in_mb (32) and
	// commitlog_total_space_in_mb (1024), scaled. Segments whose data is
	// flushed are recycled (overwritten in place) while the total allows.
	CLSegment, CLTotal int64
	// CLWrite and SSTWrite are the request sizes of commit-log writeback
	// and of SSTable writes: Linux 3.13's max_sectors_kb, 512 KiB, scaled
	// (at any scale, two pages per die: one multi-plane program).
	CLWrite, SSTWrite int64
	// MinThreshold, MaxThreshold, BucketLow, BucketHigh and MinSSTable
	// are size-tiered compaction's options: 4, 32, 0.5, 1.5, 50 MB
	// (scaled).
	MinThreshold, MaxThreshold int
	BucketLow, BucketHigh      float64
	MinSSTable                 int64
	// Compactors is concurrent_compactors: the cores of MS §4's i7-3770.
	// Default 4.
	Compactors int
	// CompactionRate is compaction_throughput_mb_per_sec, bytes of input
	// per second over all compactions; 0 is unthrottled, the default.
	// MS §4.1 set 32 MB/s, but at the drive-bound rates of this model
	// that limit falls behind the flushes and the file system fills (see
	// the report's notes); pass 32e6 x the scale to try it.
	CompactionRate float64
}

func (o *cassandraOptions) ensureDefaults(scale float64, page int64) {
	def := func(v *int64, d int64, floor int64) {
		if *v == 0 {
			*v = max(int64(float64(d)*scale)/floor*floor, floor)
		}
	}
	o.Fill = cmp.Or(o.Fill, 0.4)
	o.ZipfExponent = cmp.Or(o.ZipfExponent, 0.99)
	o.Fields = cmp.Or(o.Fields, 10)
	o.CellBytes = cmp.Or(o.CellBytes, 121)
	o.RowBytes = cmp.Or(o.RowBytes, 87)
	o.UpdateBytes = cmp.Or(o.UpdateBytes, 213)
	def(&o.Memtable, 32<<20, 4096)
	o.FlushQueue = cmp.Or(o.FlushQueue, 4)
	def(&o.CLSegment, 32<<20, 4096)
	def(&o.CLTotal, 1<<30, o.CLSegment)
	def(&o.CLWrite, 512<<10, page)
	def(&o.SSTWrite, 512<<10, page)
	o.MinThreshold = cmp.Or(o.MinThreshold, 4)
	o.MaxThreshold = cmp.Or(o.MaxThreshold, 32)
	o.BucketLow = cmp.Or(o.BucketLow, 0.5)
	o.BucketHigh = cmp.Or(o.BucketHigh, 1.5)
	def(&o.MinSSTable, 50e6, 4096)
	o.Compactors = cmp.Or(o.Compactors, 4)
}

// The classes of Cassandra's writes (MS Table 1).
var (
	classCommitLog = Class{Name: "commitlog", Kind: kindLog, Rank: short}
	classFlushed   = Class{Name: "flushed", Kind: kindData, Rank: medium}
	classTier1     = Class{Name: "compaction-t1", Kind: kindData, Rank: long}
	classTier2     = Class{Name: "compaction-t2+", Kind: kindData, Rank: extreme}
	classSystem    = Class{Name: "system", Kind: kindSystem, Rank: short}
)

// tierClass is the class of an SSTable that went through tier compactions.
func tierClass(tier int) Class {
	switch {
	case tier == 0:
		return classFlushed
	case tier == 1:
		return classTier1
	}
	return classTier2
}

// cassandra is the shared state of the Cassandra-like workload's threads.
type cassandra struct {
	o    cassandraOptions
	fs   *fileSystem
	d    *distinct
	keys float64

	segs     []*clSeg // active commit-log segments, oldest first
	spare    []*file  // flushed segments to recycle
	cur      *memtable
	memID    int
	flushQ   []*memtable // sealed, oldest first; [0] may be flushing
	tables   []*sstable
	gen      int           // the last SSTable generation
	pacer    time.Duration // compaction throttle: the next input byte's time
	carry    float64       // fractional updates not yet counted as work
	err      error
	Stats    cassandraStats
	fullRows float64 // bytes of a row with every field
}

// cassandraStats count what the workload did.
type cassandraStats struct {
	Updates                           int64
	Flushes, Compactions              int64
	CLBytes, FlushBytes, CompactBytes int64
	CompactBytesTier                  [3]int64 // by tier 1, 2, 3+
	MaxTables                         int
}

type clSeg struct {
	f        *file
	written  int64
	lastMem  int  // the newest memtable with data in the segment
	recycled bool // f's extents exist already: overwrite them
}

type memtable struct {
	id      int
	updates float64
}

type sstable struct {
	gen        int // generation: creation order
	f          *file
	size       int64
	base       float64 // share of the loaded keys it holds
	n          float64 // update draws it holds
	tier       int
	compacting bool
}

// newCassandra sets up the workload over fs, with a data set of Fill of
// the file system's space.
func newCassandra(o cassandraOptions, fs *fileSystem, d *distinct, keys float64) *cassandra {
	c := &cassandra{o: o, fs: fs, d: d, keys: keys}
	c.fullRows = float64(o.Fields)*float64(o.CellBytes) + float64(o.RowBytes)
	c.cur = c.newMemtable()
	return c
}

// cassandraKeys is the number of YCSB records whose rows fill share of a
// file system of space bytes.
func cassandraKeys(o cassandraOptions, space int64) int64 {
	row := float64(o.Fields)*float64(o.CellBytes) + float64(o.RowBytes)
	return int64(o.Fill * float64(space) / row)
}

func (c *cassandra) newMemtable() *memtable {
	c.memID++
	return &memtable{id: c.memID}
}

// bytesOf is the size of an SSTable holding base of the loaded keys and
// the versions of n update draws, one version per cell.
func (c *cassandra) bytesOf(base, n float64) int64 {
	base = min(base, 1)
	cells := float64(c.o.Fields)*c.keys*base + c.d.Cells(n)*(1-base)
	rows := c.keys*base + c.d.Keys(n)*(1-base)
	return int64(math.Ceil(cells*float64(c.o.CellBytes) + rows*float64(c.o.RowBytes)))
}

// fail records the first error; the threads then finish.
func (c *cassandra) fail(err error) {
	if c.err == nil {
		c.err = err
	}
}

// Threads returns the workload's threads for the update phase.
func (c *cassandra) Threads() []threadSpec {
	ts := []threadSpec{{&clWriter{c: c}, 4}, {&flusher{c: c}, 4}, {&journal{fs: c.fs}, 1}}
	for range c.o.Compactors {
		ts = append(ts, threadSpec{&compactor{c: c}, 2})
	}
	return ts
}

// Err is the first error a thread met (a full file system).
func (c *cassandra) Err() error { return c.err }

// loadPlan is the data set as YCSB's load phase leaves it under
// size-tiered compaction: the key count in memtables of Memtable bytes,
// written in base 4, fewer than MinThreshold tables in each tier.
func (c *cassandra) loadPlan() []*sstable {
	total := c.keys * c.fullRows
	unit := float64(c.o.Memtable)
	var out []*sstable
	left := total
	for tier := 12; tier >= 0; tier-- {
		size := unit * math.Pow(float64(c.o.MinThreshold), float64(tier))
		for left >= size {
			out = append(out, &sstable{size: int64(size), base: size / total, tier: tier})
			left -= size
		}
	}
	if left > 0 {
		out = append(out, &sstable{size: int64(left), base: left / total})
	}
	return out
}

// loader writes the loaded data set's SSTables, one after another.
type loader struct {
	c    *cassandra
	plan []*sstable
	cur  *sstable
	done int64
	q    opQueue
}

// Next implements Thread.
func (l *loader) Next(time.Duration) (Op, status, time.Duration) {
	if op, ok := l.q.pop(); ok {
		return ready(op)
	}
	if l.c.err != nil || (l.cur == nil && len(l.plan) == 0) {
		return Op{}, Finished, 0
	}
	if l.cur == nil {
		l.cur, l.plan = l.plan[0], l.plan[1:]
		l.cur.f, l.done = l.c.fs.create(), 0
	}
	n := min(l.c.o.SSTWrite, l.cur.size-l.done)
	ext, err := l.c.fs.appendTo(l.cur.f, n)
	if err != nil {
		l.c.fail(fmt.Errorf("loading: %w", err))
		return Op{}, Finished, 0
	}
	l.q.writes(ext, tierClass(l.cur.tier), 0, nil)
	if l.done += n; l.done == l.cur.size {
		l.c.fs.closeFile(l.cur.f)
		l.c.addTable(l.cur)
		l.cur = nil
	}
	op, _ := l.q.pop()
	return ready(op)
}

// clWriter appends YCSB updates to the commit log and fills memtables.
type clWriter struct {
	c *cassandra
	q opQueue
}

// Next implements Thread.
func (w *clWriter) Next(time.Duration) (Op, status, time.Duration) {
	c := w.c
	if op, ok := w.q.pop(); ok {
		return ready(op)
	}
	if c.err != nil {
		return Op{}, Finished, 0
	}
	if len(c.flushQ) > c.o.FlushQueue {
		return blocked() // writes block until the flush writer catches up
	}
	seg, err := c.segment()
	if err != nil {
		c.fail(err)
		return Op{}, Finished, 0
	}
	ext, n, err := c.segWrite(seg)
	if err != nil {
		c.fail(err)
		return Op{}, Finished, 0
	}
	w.q.writes(ext, classCommitLog, c.addUpdates(n), nil)
	op, _ := w.q.pop()
	return ready(op)
}

// segment returns the commit-log segment being written, switching to a
// recycled or new one when it is full.
func (c *cassandra) segment() (*clSeg, error) {
	if k := len(c.segs); k > 0 && c.segs[k-1].written < c.o.CLSegment {
		return c.segs[k-1], nil
	}
	seg := &clSeg{}
	if k := len(c.spare); k > 0 {
		seg.f, seg.recycled = c.spare[k-1], true
		c.spare = c.spare[:k-1]
	} else {
		seg.f = c.fs.create()
	}
	c.segs = append(c.segs, seg)
	c.limitCommitLog()
	return seg, nil
}

// limitCommitLog flushes the current memtable when the commit log is
// over commitlog_total_space and its oldest segment waits on it.
func (c *cassandra) limitCommitLog() {
	if int64(len(c.segs))*c.o.CLSegment <= c.o.CLTotal {
		return
	}
	if c.segs[0].lastMem == c.cur.id && c.cur.updates > 0 {
		c.seal()
	}
}

// segWrite plans the next commit-log write into seg.
func (c *cassandra) segWrite(seg *clSeg) ([]extent, int64, error) {
	n := min(c.o.CLWrite, c.o.CLSegment-seg.written)
	var ext []extent
	if seg.recycled {
		ext = fileRange(seg.f, seg.written, n)
	} else {
		var err error
		if ext, err = c.fs.appendTo(seg.f, n); err != nil {
			return nil, 0, fmt.Errorf("commit log: %w", err)
		}
	}
	seg.written += n
	seg.lastMem = c.cur.id
	if seg.written == c.o.CLSegment && !seg.recycled {
		c.fs.closeFile(seg.f)
	}
	return ext, n, nil
}

// addUpdates puts the updates of n commit-log bytes in the memtable,
// seals it when full, and returns the whole updates to count as work.
func (c *cassandra) addUpdates(n int64) int64 {
	u := float64(n) / float64(c.o.UpdateBytes)
	c.cur.updates += u
	c.Stats.CLBytes += n
	c.carry += u
	work := int64(c.carry)
	c.carry -= float64(work)
	c.Stats.Updates += work
	if c.bytesOf(0, c.cur.updates) >= c.o.Memtable {
		c.seal()
	}
	return work
}

// seal queues the current memtable for flushing and starts a new one.
func (c *cassandra) seal() {
	c.flushQ = append(c.flushQ, c.cur)
	c.cur = c.newMemtable()
}

// flushed releases the commit-log segments whose data is all on disk and
// returns the extents of those it deleted.
func (c *cassandra) flushed(m *memtable) []extent {
	var trims []extent
	for len(c.segs) > 1 && c.segs[0].lastMem <= m.id {
		seg := c.segs[0]
		c.segs = c.segs[1:]
		trims = append(trims, c.recycle(seg)...)
	}
	return trims
}

// recycle keeps a flushed segment's file for reuse while the commit log
// stays within its total, else deletes it (TRIM with discard).
func (c *cassandra) recycle(seg *clSeg) []extent {
	if seg.written < c.o.CLSegment && !seg.recycled {
		c.fs.closeFile(seg.f)
	}
	if int64(len(c.segs)+len(c.spare)+1)*c.o.CLSegment <= c.o.CLTotal && seg.f.size == c.o.CLSegment {
		c.spare = append(c.spare, seg.f)
		return nil
	}
	return c.fs.remove(seg.f)
}

// addTable registers a new SSTable.
func (c *cassandra) addTable(t *sstable) {
	c.gen++
	t.gen = c.gen
	c.tables = append(c.tables, t)
	c.Stats.MaxTables = max(c.Stats.MaxTables, len(c.tables))
}

// removeTables deletes compacted SSTables and returns their extents.
func (c *cassandra) removeTables(in []*sstable) []extent {
	var ext []extent
	c.tables = slices.DeleteFunc(c.tables, func(t *sstable) bool { return slices.Contains(in, t) })
	for _, t := range in {
		ext = append(ext, c.fs.remove(t.f)...)
	}
	return ext
}
