package mrissim

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/dgraph-io/badger/v4"

	"github.com/strata-media/strata/internal/media/images"
)

// realReport is the workload run through Badger, configured exactly as
// Strata's image store (images.BadgerOptions), on two directories of this
// machine: the LSM's and the value log's. Both are on the same disk here,
// and the page cache is warm after the writes, so it measures the store's
// software path and this machine's disk, not a flash/disk split.
type realReport struct {
	Dir       string     `json:"dir"`
	Synced    bool       `json:"synced"`
	Writes    []writeRow `json:"writes"`
	Reads     []readRow  `json:"reads"`
	Line      line       `json:"fit"`
	LSMBytes  int64      `json:"lsm_bytes"`
	VLogBytes int64      `json:"vlog_bytes"`
}

// runReal runs the write benchmark in both key orders, then the read
// benchmark on the database written in random order. Each order is
// written twice, in the order sequential, random, random, sequential, and
// the two runs averaged: this cancels a drift of the disk across the runs.
func runReal(c Config, progress io.Writer) (*realReport, error) {
	base, err := os.MkdirTemp(c.RealDir, "strata-mris-")
	if err != nil {
		return nil, fmt.Errorf("mrissim: %w", err)
	}
	defer os.RemoveAll(base)
	rep := &realReport{Dir: base, Synced: c.RealSync}
	pool := randomPool(c.Seed)
	runs := map[bool][]Result{}
	for i, random := range []bool{false, true, true, false} {
		dir := filepath.Join(base, fmt.Sprintf("%s-%d", orderName(random), i))
		res, err := realWrites(c, dir, insertOrder(c.RealDBGroups, random, c.Seed), pool)
		if err != nil {
			return nil, err
		}
		fmt.Fprintf(progress, "real     write %-10s %8.0f ops/s %7.1f MB/s\n", orderName(random), res.OpsPerS, res.MBPerS)
		runs[random] = append(runs[random], res)
		if i != 2 { // keep the second random database for the reads
			os.RemoveAll(dir)
		}
	}
	for _, random := range []bool{false, true} {
		rep.Writes = append(rep.Writes, writeRow{Setup: "real", Order: orderName(random), Result: mean(runs[random])})
	}
	dir := filepath.Join(base, "random-2")
	rep.LSMBytes, rep.VLogBytes = dirBytes(filepath.Join(dir, "lsm")), dirBytes(filepath.Join(dir, "vlog"))
	return rep, realReadAll(c, dir, rep, progress)
}

// mean is the result of the runs' total ops and bytes over their total
// time.
func mean(runs []Result) Result {
	var ops int
	var bytes int64
	var secs float64
	for _, r := range runs {
		ops, bytes, secs = ops+r.Ops, bytes+r.Bytes, secs+r.Seconds
	}
	return newResult(ops, bytes, secs)
}

func realReadAll(c Config, dir string, rep *realReport, progress io.Writer) error {
	var res []Result
	for _, ratio := range c.Ratios {
		r, err := realReads(c, dir, readSequence(c.Reads, c.RealDBGroups, ratio, c.Seed))
		if err != nil {
			return err
		}
		fmt.Fprintf(progress, "real     read  ratio %-4d %8.0f ops/s %7.1f MB/s\n", ratio, r.OpsPerS, r.MBPerS)
		rep.Reads = append(rep.Reads, readRow{Setup: "real", Ratio: ratio, Result: r})
		res = append(res, r)
	}
	rep.Line = fitLine(c.Ratios, res, c.Reads)
	return nil
}

func orderName(random bool) string {
	if random {
		return "random"
	}
	return "sequential"
}

// openReal opens Badger in dir/lsm and dir/vlog with the image store's
// options.
func openReal(c Config, dir string) (*badger.DB, error) {
	o := images.Options{
		FlashDir: filepath.Join(dir, "lsm"), CapacityDir: filepath.Join(dir, "vlog"),
		SizeThreshold: c.SizeThreshold, MemTableSize: c.MemTableSize, BlockCacheSize: c.BlockCacheSize,
		NoSync: !c.RealSync, GCInterval: -1, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
	}
	o.EnsureDefaults()
	db, err := badger.Open(images.BadgerOptions(o))
	if err != nil {
		return nil, fmt.Errorf("mrissim: opening badger in %s: %w", dir, err)
	}
	return db, nil
}

func smallKey(g int) []byte { return fmt.Appendf(nil, "g/%08d/s", g) }
func largeKey(g int) []byte { return fmt.Appendf(nil, "g/%08d/l", g) }

// randomPool is incompressible bytes that values are cut from.
func randomPool(seed uint64) []byte {
	rng := rand.New(rand.NewPCG(seed, 7))
	b := make([]byte, 4<<20)
	for i := range b {
		b[i] = byte(rng.Uint32())
	}
	return b
}

// value is n bytes of the pool for group g and kind k.
func value(pool []byte, g, k int, n int64) []byte {
	off := (int64(g)*7919 + int64(k)*104729) % (int64(len(pool)) - n)
	return pool[off : off+n]
}

// realWrites inserts the groups in order, each group (its two objects)
// one transaction, and returns the throughput including the final sync.
func realWrites(c Config, dir string, order []int, pool []byte) (Result, error) {
	syscall.Sync() // start without the previous run's dirty pages being written back
	db, err := openReal(c, dir)
	if err != nil {
		return Result{}, err
	}
	defer db.Close()
	start := time.Now()
	for _, g := range order {
		err := db.Update(func(txn *badger.Txn) error {
			return errors.Join(txn.Set(smallKey(g), value(pool, g, 0, c.SmallSize)), txn.Set(largeKey(g), value(pool, g, 1, c.LargeSize)))
		})
		if err != nil {
			return Result{}, fmt.Errorf("mrissim: insert: %w", err)
		}
	}
	if err := db.Sync(); err != nil {
		return Result{}, fmt.Errorf("mrissim: sync: %w", err)
	}
	secs := time.Since(start).Seconds()
	return newResult(2*len(order), int64(len(order))*(c.SmallSize+c.LargeSize), secs), nil
}

// realReads opens the database afresh (cold Badger caches; the kernel's
// page cache stays warm) and runs a read sequence.
func realReads(c Config, dir string, seq []read) (Result, error) {
	db, err := openReal(c, dir)
	if err != nil {
		return Result{}, err
	}
	defer db.Close()
	buf := make([]byte, 0, c.LargeSize)
	start := time.Now()
	for _, r := range seq {
		key := smallKey(r.group)
		if r.large {
			key = largeKey(r.group)
		}
		if err := db.View(func(txn *badger.Txn) error {
			item, err := txn.Get(key)
			if err == nil {
				buf, err = item.ValueCopy(buf[:0])
			}
			return err
		}); err != nil {
			return Result{}, fmt.Errorf("mrissim: get %s: %w", key, err)
		}
	}
	secs := time.Since(start).Seconds()
	return newResult(len(seq), readBytes(seq, c.SmallSize, c.LargeSize), secs), nil
}

// dirBytes is the size of the regular files under dir.
func dirBytes(dir string) int64 {
	var n int64
	filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if fi, err := d.Info(); err == nil {
				n += fi.Size()
			}
		}
		return nil
	})
	return n
}
