package streamsim

import (
	"cmp"
	"fmt"
	"math"
	"time"
)

// imageStoreOptions configure the image store's flash traffic: Strata's
// MRIS store is Badger v4 with its LSM tree (write-ahead log, keys,
// metadata, variants under 128 KiB) on flash and its value log on the
// capacity tier. Uploads go through the memtable and its WAL, flushes make
// L0 tables, and leveled compaction moves them down. Byte sizes marked
// "scaled" are for the 256 GB drive.
type imageStoreOptions struct {
	// Fill is the share of the file system the LSM's live data takes.
	// Default 0.5.
	Fill float64
	// UploadBytes is what one upload puts in the LSM tree: the thumbnail
	// (about 6 KiB), the small variant (about 70 KiB), metadata and keys;
	// the larger variants go to the value log. Default 80 KiB, scaled
	// (one upload is one synced WAL write).
	UploadBytes int64
	// Replace is the share of uploads that replace an existing image
	// (re-uploads); the store keeps a fixed retention, so every new image
	// beyond it deletes the oldest. Default 0.1 (assumed).
	Replace float64
	// MemTable, BaseTable, BaseLevel are Badger's MemTableSize (64 MiB,
	// images.DefaultMemTableSize), BaseTableSize (2 MiB) and
	// BaseLevelSize (10 MiB), scaled.
	MemTable, BaseTable, BaseLevel int64
	// LevelMultiplier and TableMultiplier are Badger's (10 and 2).
	LevelMultiplier, TableMultiplier int
	// Levels is Badger's MaxLevels (7); L0Tables and L0Stall its
	// NumLevelZeroTables (5) and NumLevelZeroTablesStall (15).
	Levels, L0Tables, L0Stall int
	// Compactors is Badger's NumCompactors (4); Uploaders the uploads at
	// once (images.Options.MaxConcurrent, 2).
	Compactors, Uploaders int
	// SSTWrite is the request size of table writes, 512 KiB scaled.
	SSTWrite int64
}

func (o *imageStoreOptions) ensureDefaults(scale float64, page int64) {
	def := func(v *int64, d int64, floor int64) {
		if *v == 0 {
			*v = max(int64(float64(d)*scale)/floor*floor, floor)
		}
	}
	o.Fill = cmp.Or(o.Fill, 0.5)
	def(&o.UploadBytes, 80<<10, page)
	o.Replace = cmp.Or(o.Replace, 0.1)
	def(&o.MemTable, 64<<20, page)
	def(&o.BaseTable, 2<<20, page)
	def(&o.BaseLevel, 10<<20, page)
	o.LevelMultiplier = cmp.Or(o.LevelMultiplier, 10)
	o.TableMultiplier = cmp.Or(o.TableMultiplier, 2)
	o.Levels = cmp.Or(o.Levels, 7)
	o.L0Tables = cmp.Or(o.L0Tables, 5)
	o.L0Stall = cmp.Or(o.L0Stall, 15)
	o.Compactors = cmp.Or(o.Compactors, 4)
	o.Uploaders = cmp.Or(o.Uploaders, 2)
	def(&o.SSTWrite, 512<<10, page)
}

// The classes of the image store's writes, as RocksDB's per-level hints
// assign them (WAL short, L0 medium, L1 long, deeper extreme).
var (
	classWAL     = Class{Name: "lsm-wal", Kind: kindLog, Rank: short}
	classL0      = Class{Name: "lsm-l0", Kind: kindData, Rank: medium}
	classLBase   = Class{Name: "lsm-l1", Kind: kindData, Rank: long}
	classLDeeper = Class{Name: "lsm-l2+", Kind: kindData, Rank: extreme}
)

// leveled is the shared state of the image store's threads.
type leveled struct {
	o      imageStoreOptions
	fs     *fileSystem
	levels []level // [0] is L0
	mem    *lsmMem
	queue  []*lsmMem // sealed memtables, oldest first
	target int64     // live bytes the retention keeps
	live   int64
	n      int64 // uploads
	err    error
}

type level struct {
	tables []*lsmTable // key order (L1+), age order (L0)
	size   int64
	dead   float64 // bytes of deleted or replaced entries
	busy   bool    // a compaction reads or writes it
	cursor int     // next table to compact down
}

type lsmTable struct {
	f    *file
	size int64
}

type lsmMem struct {
	wal   *file
	bytes int64
}

func newLeveled(o imageStoreOptions, fs *fileSystem) *leveled {
	s := &leveled{o: o, fs: fs, levels: make([]level, o.Levels)}
	s.target = int64(o.Fill * float64(fs.DataBytes()))
	s.mem = s.newMem()
	return s
}

func (s *leveled) newMem() *lsmMem { return &lsmMem{wal: s.fs.create()} }

func (s *leveled) fail(err error) {
	if s.err == nil {
		s.err = err
	}
}

// classOf is the class of a table written to level i.
func (s *leveled) classOf(i int) Class {
	switch b := s.baseLevel(); {
	case i == 0:
		return classL0
	case i <= b:
		return classLBase
	}
	return classLDeeper
}

// targets are Badger's dynamic level sizes: the last level's target is
// its size; each level above a tenth of the next; the base level, into
// which L0 compacts, is the deepest level whose target falls below
// BaseLevel (or the last).
func (s *leveled) targets() []int64 {
	t := make([]int64, len(s.levels))
	last := len(s.levels) - 1
	t[last] = max(s.levels[last].size, s.o.BaseLevel)
	for i := last - 1; i >= 1; i-- {
		t[i] = t[i+1] / int64(s.o.LevelMultiplier)
	}
	return t
}

// baseLevel is the level L0 compacts into.
func (s *leveled) baseLevel() int {
	t := s.targets()
	for i := 1; i < len(t); i++ {
		if t[i] >= s.o.BaseLevel {
			return i
		}
	}
	return len(t) - 1
}

// tableSize is the target table size at level i.
func (s *leveled) tableSize(i int) int64 {
	k := max(i-s.baseLevel(), 0)
	return s.o.BaseTable * int64(math.Pow(float64(s.o.TableMultiplier), float64(k)))
}

// loadPlan is the data set as dynamic leveling holds it: the last level
// nine tenths, each level above a tenth of the next, down to the base;
// tables of each level at its target size.
func (s *leveled) loadPlan() [][]int64 {
	sizes := make([]int64, len(s.levels))
	left, base := s.target, len(s.levels)-1
	for i := len(s.levels) - 1; i >= 1 && left > 0; i-- {
		size := left - left/int64(s.o.LevelMultiplier)
		if size < s.o.BaseLevel || i == 1 {
			size = left
		}
		sizes[i], base = size, i
		left -= size
	}
	plan := make([][]int64, len(s.levels))
	for i := base; i < len(s.levels); i++ {
		each := s.o.BaseTable * int64(math.Pow(float64(s.o.TableMultiplier), float64(i-base)))
		plan[i] = splitSizes(sizes[i], each)
	}
	return plan
}

func splitSizes(total, each int64) []int64 {
	var out []int64
	for total > 0 {
		n := min(each, total)
		out = append(out, n)
		total -= n
	}
	return out
}

// forget marks n bytes of old entries dead: the oldest image's in the
// deepest level holding data (retention), or a random image's, spread
// over the levels by size (replacement).
func (s *leveled) forget(n int64, oldest bool) {
	if oldest {
		for i := len(s.levels) - 1; i >= 1; i-- {
			if l := &s.levels[i]; float64(l.size)-l.dead >= float64(n) {
				l.dead += float64(n)
				return
			}
		}
		return
	}
	var total int64
	for _, l := range s.levels {
		total += l.size
	}
	for i := range s.levels {
		if l := &s.levels[i]; total > 0 {
			l.dead += float64(n) * float64(l.size) / float64(total)
		}
	}
}

// upload accounts one upload of the retention workload.
func (s *leveled) upload() {
	s.n++
	b := s.o.UploadBytes
	if float64(s.n%1000) < s.o.Replace*1000 {
		s.forget(b, false)
		return
	}
	if s.live+b > s.target {
		s.forget(b, true)
		return
	}
	s.live += b
}

// Err is the first failure.
func (s *leveled) Err() error { return s.err }

func (s *leveled) notes() map[string]float64 {
	out := map[string]float64{"uploads": float64(s.n), "base_level": float64(s.baseLevel()),
		"fs_free_share": float64(s.fs.FreeBytes()) / float64(s.fs.DataBytes())}
	for i, l := range s.levels {
		out[fmt.Sprintf("L%d_MB", i)] = float64(l.size) / 1e6
	}
	return out
}

// imgLoader writes the loaded levels' tables.
type imgLoader struct {
	s     *leveled
	plan  [][]int64
	level int
	cur   *lsmTable
	left  int64
	q     opQueue
}

// Next implements Thread.
func (l *imgLoader) Next(time.Duration) (Op, status, time.Duration) {
	if op, ok := l.q.pop(); ok {
		return ready(op)
	}
	if l.cur == nil && !l.nextTable() {
		return Op{}, Finished, 0
	}
	n := min(l.s.o.SSTWrite, l.left)
	ext, err := l.s.fs.appendTo(l.cur.f, n)
	if err != nil {
		l.s.fail(fmt.Errorf("loading: %w", err))
		return Op{}, Finished, 0
	}
	l.q.writes(ext, l.s.classOf(l.level), 0, nil)
	if l.left -= n; l.left == 0 {
		l.s.fs.closeFile(l.cur.f)
		lv := &l.s.levels[l.level]
		lv.tables, lv.size = append(lv.tables, l.cur), lv.size+l.cur.size
		l.cur = nil
	}
	op, _ := l.q.pop()
	return ready(op)
}

// nextTable starts the next planned table, reporting false when done.
func (l *imgLoader) nextTable() bool {
	for l.level < len(l.plan) && len(l.plan[l.level]) == 0 {
		l.level++
	}
	if l.level == len(l.plan) {
		l.s.live = l.s.target
		return false
	}
	size := l.plan[l.level][0]
	l.plan[l.level] = l.plan[l.level][1:]
	l.cur, l.left = &lsmTable{f: l.s.fs.create(), size: size}, size
	return true
}

// uploader is one upload at a time: a synced WAL write of its entries.
type uploader struct {
	s *leveled
	q opQueue
}

// Next implements Thread.
func (u *uploader) Next(time.Duration) (Op, status, time.Duration) {
	s := u.s
	if op, ok := u.q.pop(); ok {
		return ready(op)
	}
	if s.err != nil {
		return Op{}, Finished, 0
	}
	if len(s.queue) >= 4 || len(s.levels[0].tables) >= s.o.L0Stall {
		return blocked() // Badger stalls writes
	}
	ext, err := s.fs.appendTo(s.mem.wal, s.o.UploadBytes)
	if err != nil {
		s.fail(fmt.Errorf("wal: %w", err))
		return Op{}, Finished, 0
	}
	s.upload()
	s.mem.bytes += s.o.UploadBytes
	if s.mem.bytes >= s.o.MemTable {
		s.fs.closeFile(s.mem.wal)
		s.queue = append(s.queue, s.mem)
		s.mem = s.newMem()
	}
	u.q.writes(ext, classWAL, 1, nil)
	op, _ := u.q.pop()
	return ready(op)
}
