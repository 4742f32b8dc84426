package store

import (
	"bytes"
	"fmt"
	"hash/fnv"
	"log/slog"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/strata-media/strata/internal/core/tier"
	"github.com/strata-media/strata/internal/storage/device"
)

// The randomized crash test drives the tier core and the flash store with
// random lookups, inserts, monitor and feed steps, write failures, corrupt
// reads, invalidations and crashes (crash clones that keep or drop unsynced
// writes, and tear the write in flight), and checks against a model map:
//   - a lookup never returns wrong bytes (content is a function of the key
//     and the title's current version);
//   - every segment indexed before a crash, whose blocks were therefore
//     written completely and synced, is found again after recovery;
//   - the core's invariants hold after every step.
//
// Run longer with -crash.seeds and -crash.cycles.

const (
	crashBlock   = 64 << 10
	crashBlocks  = 18
	crashTitles  = 5
	crashRends   = 2
	crashSegs    = 12
	opsPerCrash  = 40
	maxSegLength = 100 << 10 // some segments span blocks
)

var (
	crashSeeds  = 12
	crashCycles = 90
)

func TestRandomizedCrashRecovery(t *testing.T) {
	seeds, cycles := crashSeeds, crashCycles
	if testing.Short() {
		seeds, cycles = 2, 30
	}
	total := 0
	for seed := uint64(1); seed <= uint64(seeds); seed++ {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			t.Logf("seed %d", seed)
			w := newCrashWorld(t, seed)
			for range cycles {
				w.cycle()
				total++
			}
			t.Logf("seed %d: %s", seed, w.summary())
		})
	}
	t.Logf("%d crash/recover cycles", total)
}

type crashWorld struct {
	t       *testing.T
	rng     *rand.Rand
	crash   *device.Crashable
	fault   *device.Fault
	flash   *Flash
	c       *tier.Cache
	version [crashTitles]int
	now     time.Duration
	stats   struct{ ram, ssd, miss, bad, crashes, torn, found, raced int }
}

func newCrashWorld(t *testing.T, seed uint64) *crashWorld {
	w := &crashWorld{t: t, rng: rand.New(rand.NewPCG(seed, seed*7919))}
	w.mount(device.NewMem(crashBlock*crashBlocks, 4096))
	return w
}

func (w *crashWorld) opts() tier.Options {
	return tier.Options{
		RAMBytes:    300 << 10,
		BlockSize:   crashBlock,
		RingBytes:   200 << 10,
		MonitorRoom: 0.5,
		BlockPolicy: tier.BlockPolicy(w.rng.IntN(4)),
		Admission:   tier.Threshold{Max: 0.6},
	}
}

// mount opens the cache on mem, recovering what it holds.
func (w *crashWorld) mount(mem *device.Mem) tier.RecoveryReport {
	w.crash = device.NewCrashable(mem)
	w.fault = device.NewFault(w.crash)
	f, c, rep, err := Open(w.fault, w.opts(), Options{Logger: discardLogger()})
	if err != nil {
		w.t.Fatalf("open: %v", err)
	}
	w.flash, w.c = f, c
	w.check()
	return rep
}

func segKey(title, rend, seg int) string {
	return fmt.Sprintf("v/t%d/r%d/%d.m4s", title, rend, seg)
}

// content is the bytes of key at a title version.
func content(key string, version int) []byte {
	h := fnv.New64a()
	fmt.Fprintf(h, "%s@%d", key, version)
	s := h.Sum64()
	r := rand.New(rand.NewPCG(s, s>>7))
	b := make([]byte, 1+r.IntN(maxSegLength))
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

func (w *crashWorld) randomKey() (string, int) {
	// Skewed towards low titles and segments so that there are hits.
	title := min(w.rng.IntN(crashTitles), w.rng.IntN(crashTitles))
	return segKey(title, w.rng.IntN(crashRends), min(w.rng.IntN(crashSegs), w.rng.IntN(crashSegs))), title
}

func (w *crashWorld) cycle() {
	for range opsPerCrash {
		w.now += time.Millisecond
		w.step()
		w.check()
	}
	w.crashAndRecover()
}

func (w *crashWorld) step() {
	switch p := w.rng.IntN(100); {
	case p < 55:
		w.get()
	case p < 70:
		w.c.Monitor(w.now)
	case p < 92:
		w.feed(false)
	case p < 93:
		w.invalidate()
	case p < 94:
		w.racedInsert()
	case p < 97:
		w.corruptRead()
	default:
		w.failWrite()
	}
}

// get looks a key up and serves it like the live server does.
func (w *crashWorld) get() {
	key, title := w.randomKey()
	want := content(key, w.version[title])
	l := w.c.Lookup(key, w.now)
	switch l.Tier {
	case tier.RAM:
		w.stats.ram++
		w.expect(key, l.Entry.Data, want, "RAM")
	case tier.SSD:
		data, err := w.flash.ReadSegment(l.Seg)
		if err != nil {
			w.stats.bad++
			w.c.Drop(l.Seg)
			return
		}
		w.stats.ssd++
		w.expect(key, data, want, "flash")
	default:
		w.stats.miss++
		w.c.Insert(key, int64(len(want)), want, l.Token, w.now)
	}
}

func (w *crashWorld) expect(key string, got, want []byte, where string) {
	if !bytes.Equal(got, want) {
		w.t.Fatalf("%s returned wrong bytes for %q: %d bytes, want %d", where, key, len(got), len(want))
	}
}

// feed runs the feed step; the write is issued and completed at once.
func (w *crashWorld) feed(force bool) {
	util := w.rng.Float64() * 0.8
	bw := w.c.Feed(w.now, tier.Signals{Now: w.now, Utilization: util})
	if bw == nil && force {
		bw = w.c.Flush(w.now)
	}
	if bw == nil {
		return
	}
	err := w.flash.WriteBlock(bw)
	if err == nil {
		err = w.flash.Sync()
	}
	w.c.WriteDone(bw, err, w.now)
}

func (w *crashWorld) failWrite() {
	w.fault.FailNext(device.OpWrite, 1)
	w.feed(true)
	w.fault.Reset()
}

// corruptRead flips a byte of every read of one block: a read of it must
// fail verification, never return the flipped bytes. Records verified
// since start are not checked again (decision 0030: a device that changes
// bytes it acknowledged is its own ECC's to catch), so the marks are
// cleared first, as a restart would.
func (w *crashWorld) corruptRead() {
	w.flash.ForgetVerified()
	b := tier.MetaBlocks + w.rng.IntN(crashBlocks-tier.MetaBlocks)
	w.fault.CorruptReads(int64(b)*crashBlock+w.rng.Int64N(crashBlock), 1)
	for range 5 {
		w.get()
	}
	w.fault.Reset()
}

// invalidate replaces a title by a new version.
func (w *crashWorld) invalidate() {
	title := w.rng.IntN(crashTitles)
	mw, err := w.c.Invalidate(fmt.Sprintf("v/t%d/", title), w.now)
	if err != nil {
		w.t.Fatal(err)
	}
	err = w.flash.WriteMeta(mw)
	w.c.MetaDone(mw, err)
	if err != nil {
		w.t.Fatalf("meta write: %v", err)
	}
	w.version[title]++
}

// racedInsert reads the capacity tier after a miss, then the title is
// replaced before the insert: the old bytes must not be cached.
func (w *crashWorld) racedInsert() {
	key, title := w.randomKey()
	l := w.c.Lookup(key, w.now)
	if l.Tier != tier.Miss {
		return
	}
	old := content(key, w.version[title])
	w.invalidateTitle(title)
	if w.c.Insert(key, int64(len(old)), old, l.Token, w.now) {
		w.t.Fatalf("stale insert of %q accepted after invalidation", key)
	}
	w.stats.raced++
}

func (w *crashWorld) invalidateTitle(title int) {
	mw, _ := w.c.Invalidate(fmt.Sprintf("v/t%d/", title), w.now)
	if err := w.flash.WriteMeta(mw); err != nil {
		w.t.Fatal(err)
	}
	w.c.MetaDone(mw, nil)
	w.version[title]++
}

func (w *crashWorld) check() {
	if err := w.c.Check(); err != nil {
		w.t.Fatalf("invariants: %v", err)
	}
}

// crashAndRecover crashes, possibly in the middle of a block or metadata
// write, and recovers from what the device kept.
func (w *crashWorld) crashAndRecover() {
	tornMeta := w.crashMidWrite()
	before := w.indexed() // after the torn write took its victim
	mode := device.CrashMode(w.rng.IntN(3))
	mem := w.crash.CrashClone(device.CrashOptions{Unsynced: mode, Tear: w.rng.IntN(2) == 0, Rand: w.rng})
	w.stats.crashes++
	rep := w.mount(mem)
	if tornMeta != nil && rep.MetaSeq == tornMeta.seq {
		w.version[tornMeta.title]++ // the torn metadata write made it after all
	}
	if recs, blocks := w.flash.marks.count(); recs != 0 || blocks != 0 {
		w.t.Fatalf("recovery starts with %d records and %d blocks marked verified", recs, blocks)
	}
	after := w.indexed()
	for key := range before {
		if !after[key] {
			w.t.Fatalf("%q was on flash before the crash (mode %d), lost after recovery: %+v", key, mode, rep)
		}
		w.stats.found++
	}
	w.verifyAll()
}

type tornMeta struct {
	title int
	seq   uint64
}

// crashMidWrite tears a block or metadata write, as a crash would, and
// leaves it unreported to the core.
func (w *crashWorld) crashMidWrite() *tornMeta {
	switch w.rng.IntN(4) {
	case 0:
		for range 4 {
			w.c.Monitor(w.now)
		}
		bw := w.c.Flush(w.now)
		if bw == nil {
			return nil
		}
		w.fault.TearWriteAt(int64(bw.Block)*crashBlock + w.rng.Int64N(crashBlock))
		if err := w.flash.WriteBlock(bw); err == nil {
			w.t.Fatal("torn write did not fail")
		}
		w.stats.torn++
	case 1:
		title := w.rng.IntN(crashTitles)
		mw, _ := w.c.Invalidate(fmt.Sprintf("v/t%d/", title), w.now)
		w.fault.TearWriteAt(int64(mw.Slot)*crashBlock + w.rng.Int64N(crashBlock))
		if err := w.flash.WriteMeta(mw); err == nil {
			w.t.Fatal("torn metadata write did not fail")
		}
		w.stats.torn++
		return &tornMeta{title: title, seq: mw.Super.Seq}
	}
	return nil
}

// indexed returns the keys on flash, each read back and verified.
func (w *crashWorld) indexed() map[string]bool {
	keys := make(map[string]bool)
	for t := range crashTitles {
		for r := range crashRends {
			for s := range crashSegs {
				key := segKey(t, r, s)
				if _, ok := w.c.FlashSegment(key); ok {
					keys[key] = true
				}
			}
		}
	}
	return keys
}

// verifyAll reads every segment on flash and compares it with the model.
func (w *crashWorld) verifyAll() {
	for key := range w.indexed() {
		seg, _ := w.c.FlashSegment(key)
		data, err := w.flash.ReadSegment(seg)
		if err != nil {
			w.t.Fatalf("recovered %q does not read back: %v", key, err)
		}
		w.expect(key, data, content(key, w.version[titleOf(key)]), "recovered flash")
	}
}

func titleOf(key string) int {
	var t, r, s int
	if _, err := fmt.Sscanf(key, "v/t%d/r%d/%d.m4s", &t, &r, &s); err != nil {
		panic(err)
	}
	return t
}

func (w *crashWorld) summary() string {
	occ := w.c.Occupancy()
	return fmt.Sprintf("crashes=%d torn=%d found-again=%d hits ram=%d ssd=%d miss=%d bad-reads=%d raced=%d; now %d segments on flash",
		w.stats.crashes, w.stats.torn, w.stats.found, w.stats.ram, w.stats.ssd, w.stats.miss, w.stats.bad, w.stats.raced, occ.SSDSegments)
}

func discardLogger() *slog.Logger { return slog.New(slog.DiscardHandler) }
