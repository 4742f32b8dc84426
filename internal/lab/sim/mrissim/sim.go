package mrissim

import (
	"math"
	"time"

	"github.com/strata-media/strata/internal/lab/sim/des"
	"github.com/strata-media/strata/internal/storage/model"
)

// Write-back of the simulated store's appends: the kernel writes a file's
// dirty pages in requests of writeChunk bytes (a typical max_sectors_kb)
// and blocks the writer once dirtyLimit bytes are dirty or in flight.
const (
	writeChunk = 512 << 10
	dirtyLimit = 64 << 20
)

const forever = time.Duration(math.MaxInt64)

// machine is one setup's devices in a discrete-event loop: the LSM tree's
// and the value log's, one device when both parts are on the same kind.
type machine struct {
	loop      *des.Loop
	lsm, vlog *des.Disk
}

// newMachine builds the devices of setup s for data up to end bytes on
// each; SSDs are mapped over [0, filled) (a store already holding data).
func newMachine(c Config, s Setup, end, filled int64) (*machine, error) {
	l := &des.Loop{}
	dev := func(ssd bool) (model.Model, error) {
		if ssd {
			return newSSD(c.SSD, max(4*gib, roundUp(end+end/4+gib, gib)), filled)
		}
		return newHDD(c.HDD)
	}
	lm, err := dev(s.LSMOnSSD)
	if err != nil {
		return nil, err
	}
	m := &machine{loop: l, lsm: des.NewDisk(l, lm)}
	if s.LSMOnSSD == s.VLogOnSSD {
		m.vlog = m.lsm
		return m, nil
	}
	vm, err := dev(s.VLogOnSSD)
	if err != nil {
		return nil, err
	}
	m.vlog = des.NewDisk(l, vm)
	return m, nil
}

// shared reports whether the LSM tree and the value log share a device.
func (m *machine) shared() bool { return m.lsm == m.vlog }

// simReads runs a read sequence against a loaded store, one get at a
// time (MRIS's single-threaded benchmark), and returns its throughput.
// Each get costs CPUPerOp; a small object is one read of its LSM pages
// unless the block cache has them; a large object reads its value pointer
// from the LSM tree, then its value from the value log (Badger keeps table
// indexes and Bloom filters in RAM, as LevelDB's table cache does).
func simReads(c Config, s Setup, lay *layout, seq []read) (Result, error) {
	lay.place(s.LSMOnSSD == s.VLogOnSSD)
	end := max(lay.lsmBytes(), lay.vlogBase+lay.vlogBytes())
	filled := lay.lsmBytes()
	if s.LSMOnSSD == s.VLogOnSSD {
		filled = end
	}
	m, err := newMachine(c, s, end, filled)
	if err != nil {
		return Result{}, err
	}
	r := &reader{m: m, lay: lay, cache: newPageCache(c.BlockCacheSize), seq: seq, cpu: c.CPUPerOp}
	m.loop.After(0, r.next)
	m.loop.RunUntil(forever)
	return newResult(len(seq), readBytes(seq, c.SmallSize, c.LargeSize), r.end.Seconds()), nil
}

// reader is the closed-loop client of simReads.
type reader struct {
	m     *machine
	lay   *layout
	cache *pageCache
	seq   []read
	i     int
	cpu   time.Duration
	end   time.Duration
}

func (r *reader) next() {
	if r.i == len(r.seq) {
		r.end = r.m.loop.Now()
		return
	}
	rd := r.seq[r.i]
	r.i++
	r.m.loop.After(r.cpu, func() {
		if rd.large {
			r.readLSM(r.lay.pointer, rd.group, func() { r.readValue(rd.group) })
		} else {
			r.readLSM(r.lay.small, rd.group, r.next)
		}
	})
}

// readLSM reads the pages of an LSM entry unless they are cached.
func (r *reader) readLSM(at func(int) (int64, int64), g int, done func()) {
	off, n := pages(at(g))
	if r.cache.hit(off, n) {
		done()
		return
	}
	r.m.lsm.Read(off, n, done)
}

func (r *reader) readValue(g int) {
	off, n := pages(r.lay.value(g))
	r.m.vlog.Read(off, n, r.next)
}

// simWrites inserts the groups in order into an empty store and returns
// the throughput until every byte is on its device. Each insert appends
// the small value and the large value's pointer to the write-ahead log
// and the large value to the value log (Badger's write path: the WAL is
// on the LSM device); a full memtable is flushed as an SSTable. Key order
// changes nothing here: at these sizes Badger never compacts (its first
// L0 compaction waits for five 64 MiB tables), so this model has no
// compaction.
func simWrites(c Config, s Setup, order []int) (Result, error) {
	lay := newLayout(c, len(order), order)
	walBytes := lay.lsmBytes()
	sstBase := roundUp(walBytes, gib)
	vlogBase := int64(0)
	if s.LSMOnSSD == s.VLogOnSSD {
		vlogBase = sstBase + roundUp(walBytes, gib)
	}
	m, err := newMachine(c, s, max(sstBase+walBytes, vlogBase+lay.vlogBytes()), 0)
	if err != nil {
		return Result{}, err
	}
	w := &writer{m: m, c: c, lay: lay, order: order,
		wal: &stream{disk: m.lsm}, sst: &stream{disk: m.lsm, off: sstBase}, vlog: &stream{disk: m.vlog, off: vlogBase}}
	m.loop.After(0, w.next)
	m.loop.RunUntil(forever)
	bytes := int64(len(order)) * (c.SmallSize + c.LargeSize)
	return newResult(2*len(order), bytes, w.lastDone.Seconds()), nil
}

// stream is an append-only file being written back.
type stream struct {
	disk  *des.Disk
	off   int64 // next byte to write back
	dirty int64 // appended, not yet submitted
}

// writer is the closed-loop inserting client and the kernel's write-back.
type writer struct {
	m              *machine
	c              Config
	lay            *layout
	order          []int
	i              int
	wal, sst, vlog *stream
	memtable       int64
	inflight       int64
	dirty          int64
	waiting        bool
	lastDone       time.Duration
}

func (w *writer) next() {
	if w.i == len(w.order) {
		for _, s := range []*stream{w.wal, w.sst, w.vlog} {
			w.submit(s, s.dirty)
		}
		return
	}
	if w.inflight+w.dirty > dirtyLimit {
		w.waiting = true
		return
	}
	w.insert()
	w.m.loop.After(2*w.c.CPUPerOp, w.next)
}

// insert appends one group to the WAL, the value log and the memtable.
func (w *writer) insert() {
	w.i++
	entry := w.lay.smallEntry + w.lay.ptrEntry
	w.append(w.wal, entry)
	w.append(w.vlog, w.lay.vlogEntry)
	if w.memtable += entry; w.memtable >= w.c.MemTableSize {
		w.append(w.sst, w.memtable) // flush the memtable as an L0 table
		w.memtable = 0
	}
}

func (w *writer) append(s *stream, n int64) {
	s.dirty += n
	w.dirty += n
	for s.dirty >= writeChunk {
		w.submit(s, writeChunk)
	}
}

// submit writes n dirty bytes of s back.
func (w *writer) submit(s *stream, n int64) {
	if n <= 0 {
		return
	}
	s.dirty -= n
	w.dirty -= n
	w.inflight += n
	off := s.off
	s.off += n
	s.disk.Write(off, n, 0, func() {
		w.inflight -= n
		w.lastDone = w.m.loop.Now()
		if w.waiting && w.inflight+w.dirty <= dirtyLimit {
			w.waiting = false
			w.m.loop.After(0, w.next)
		}
	})
}
