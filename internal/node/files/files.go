// Package files is Strata's whole-file tier (VoD paper §5): progressive
// files served with byte ranges from the capacity directory or bucket, or
// from a flash copy chosen by file-level LFU with decaying counts, and stream
// admission control that reserves each stream's bitrate on the device that
// serves it (Algorithm 2).
//
// A flash copy is kept in the tier core's on-flash format in a cache file
// of its own (lifetime class long): the file is cut into pieces of one
// block each, every piece a record with its checksum, so a crash loses at
// most copies and recovery finds every complete one. Piece keys carry the
// file's version (modification time, or a bucket object's ETag), so a
// copy of an older version is never read. Files in a bucket are read in
// whole pieces through a RAM pool of pieces (LRU), one ranged GET per
// piece however many streams ask.
package files

import (
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/strata-media/strata/internal/core/tier"
	"github.com/strata-media/strata/internal/core/vod"
	"github.com/strata-media/strata/internal/ident"
	"github.com/strata-media/strata/internal/node/feed"
	"github.com/strata-media/strata/internal/storage/device"
	"github.com/strata-media/strata/internal/storage/origin"
	"github.com/strata-media/strata/internal/storage/space"
	"github.com/strata-media/strata/internal/storage/store"
	"github.com/strata-media/strata/internal/wtrace"
)

// Errors of the whole-file tier.
var (
	// ErrNotFound reports a file the capacity directory does not hold.
	ErrNotFound = errors.New("files: not found")
	// ErrOverloaded reports a stream refused by admission control: no
	// device has the bandwidth for it.
	ErrOverloaded = errors.New("files: no bandwidth for another stream")
)

// Options configure a Tier.
type Options struct {
	// Dir is the capacity directory holding the files and their sidecars.
	Dir string
	// Bucket, when set, holds the files and their sidecars instead of
	// Dir: objects ".files/<id>" and ".files/<id>.json" under its prefix.
	Bucket *origin.Bucket
	// RAMBytes is the RAM of the tier, bytes: the pool of pieces of files
	// read from Bucket, and the buffers of interval caching (for files in
	// Dir all of it, else half). Default 64 MiB. Files in Dir are
	// otherwise read through the page cache.
	RAMBytes int64
	// StatTTL is how long the version of a file in Bucket is trusted
	// before it is asked of the bucket again (one HEAD); uploads through
	// this node are seen at once. Default 5 s.
	StatTTL time.Duration
	// Flash is the device of the flash copies; nil for no flash tier.
	Flash device.Device
	// BlockSize is the flash block size (the device's optimal write size).
	// Default 4 MiB.
	BlockSize int64
	// FlashBandwidth and DiskBandwidth are the bytes/s each device may
	// promise to streams (Algorithm 2); from configuration or a probe.
	// Defaults 400 MB/s and 100 MB/s (the VoD paper's disk).
	FlashBandwidth, DiskBandwidth int64
	// DefaultBitrate is a stream's bytes/s when a file's play-out time is
	// unknown. Default 245 KB/s (the VoD paper's videos).
	DefaultBitrate int64
	// HalfLife is how long a request takes to count half as much in the
	// LFU. Default 1 h.
	HalfLife time.Duration
	// WriteRate bounds the flash write rate of copies, bytes/s; 0: none.
	WriteRate float64
	// Busy and Threshold gate copy writes on the flash device's
	// utilization (FlashStream §4.4); Busy nil: no gate.
	Busy      device.BusySource
	Threshold float64
	// FreeSpace says how much an upload may still write in Dir: an
	// upload of a declared length above it is refused before a byte is
	// stored. Nil: space.Free.
	FreeSpace space.FreeFunc
	// Mechanism is what serves streams besides the disk: file-level LFU
	// on flash, interval caching in RAM (RAMBytes), or both. Default
	// DefaultMechanism. With MechanismInterval, Flash is not used.
	Mechanism Mechanism
	// Trace records flash writes.
	Trace  *wtrace.Writer
	Logger *slog.Logger
}

func (o *Options) ensureDefaults() {
	if o.BlockSize == 0 {
		o.BlockSize = 4 << 20
	}
	if o.FlashBandwidth == 0 {
		o.FlashBandwidth = 400e6
	}
	if o.DiskBandwidth == 0 {
		o.DiskBandwidth = 100e6
	}
	if o.DefaultBitrate == 0 {
		o.DefaultBitrate = 245e3
	}
	if o.HalfLife == 0 {
		o.HalfLife = time.Hour
	}
	if o.RAMBytes == 0 {
		o.RAMBytes = 64 << 20
	}
	if o.StatTTL == 0 {
		o.StatTTL = 5 * time.Second
	}
	if o.Threshold == 0 {
		o.Threshold = tier.DefaultThreshold
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.Mechanism == "" {
		o.Mechanism = DefaultMechanism
	}
}

// Tier serves whole files.
type Tier struct {
	opts   Options
	log    *slog.Logger
	cap    capacity
	ram    *ramPieces   // nil for a directory
	flash  *store.Flash // nil without flash
	feed   *feed.Feeder // nil without flash
	health *feed.Health // the flash device's health; nil without flash
	start  time.Time

	mu struct {
		sync.Mutex // protects everything below
		core       *tier.Cache
		lfu        *vod.LFU[string]
		adm        vod.Admission
		copying    map[string]*copyJob
		onFlash    map[string]Meta // the version of each file's copy on flash, planned to resident
		iv         *intervals      // nil without interval caching
	}
	readsWaiting int64 // guarded by mu
	stats        counters
	probes       probeCache // metadata of files without a sidecar
}

// Open opens the tier: it recovers the flash copies, if any, and starts
// the flash feed, which runs the copier; Close stops them.
func Open(o Options) (*Tier, error) {
	o.ensureDefaults()
	if _, err := ParseMechanism(string(o.Mechanism)); err != nil {
		return nil, err
	}
	if !o.Mechanism.lfu() {
		o.Flash = nil
	}
	t := &Tier{opts: o, log: o.Logger, start: time.Now()}
	if o.Mechanism.intervals() {
		iv, err := newIntervals(t.intervalRAM(), o.BlockSize)
		if err != nil {
			return nil, err
		}
		t.mu.iv = iv
	}
	if err := t.openCapacity(); err != nil {
		return nil, err
	}
	t.mu.copying = make(map[string]*copyJob)
	t.mu.onFlash = make(map[string]Meta)
	t.mu.adm.Disk.Capacity = o.DiskBandwidth
	if o.Flash == nil {
		return t, nil
	}
	if err := t.openFlash(); err != nil {
		return nil, err
	}
	t.health = feed.NewHealth("files", feed.HealthOptions{Now: t.now})
	t.feed = feed.Start(t.mu.core, &t.mu.Mutex, t.flash, feed.Options{
		Busy: o.Busy, Logger: t.log, Now: t.now, Health: t.health,
		ReadsWaiting: func() int { return int(t.readsWaiting) },
		Written:      t.written,
		Produce:      t.copier, ProducePeriod: planPeriod, PokeOnWrite: true,
	})
	return t, nil
}

// openCapacity opens the directory or the bucket of the files.
func (t *Tier) openCapacity() error {
	if t.opts.Bucket == nil {
		d, err := openDir(t.opts.Dir, t.log)
		t.cap = d
		return err
	}
	t.cap = &bucketCapacity{b: t.opts.Bucket, ttl: t.opts.StatTTL, counts: &t.stats, statCache: make(map[string]statEntry)}
	pool := t.opts.RAMBytes
	if t.opts.Mechanism.intervals() {
		pool -= t.intervalRAM()
	}
	t.ram = newRAMPieces(pool)
	return nil
}

// openFlash recovers the copies on the flash device and tells the LFU
// which files are resident.
func (t *Tier) openFlash() error {
	// One piece a block, each copy's last block written as soon as the
	// feed is idle (FlushIdle) rather than when the next copy comes.
	f, c, rep, err := store.Open(t.opts.Flash, tier.Options{
		BlockSize: t.opts.BlockSize, BlockPolicy: tier.BlockFIFO, AlignObjects: true, FlushIdle: true,
		Admission: tier.Threshold{Max: t.opts.Threshold},
	}, store.Options{Logger: t.log, Name: "files", Trace: t.opts.Trace, DataClass: device.LifetimeLong})
	if err != nil {
		return fmt.Errorf("files: opening the flash copies: %w", err)
	}
	data := int64(c.Occupancy().DataBlocks) * t.opts.BlockSize
	// Confidence 1: a candidate must out-count its victims by a standard
	// deviation of Poisson noise, so nearly equal files do not churn.
	lfu, err := vod.NewLFU[string](vod.LFUOptions{Capacity: data, HalfLife: t.opts.HalfLife,
		Budget: vod.WriteBudget{Rate: t.opts.WriteRate}, Confidence: 1})
	if err != nil {
		return err
	}
	t.flash = f
	t.mu.core, t.mu.lfu = c, lfu
	t.mu.adm.Flash.Capacity = t.opts.FlashBandwidth
	t.restore(rep)
	return nil
}

// restore marks resident every file all of whose pieces were recovered,
// and drops the rest from the index: pieces of incomplete copies, of older
// versions, of files gone; their blocks are free again.
func (t *Tier) restore(rep tier.RecoveryReport) {
	n := 0
	for _, id := range t.idsOnFlash() {
		m, err := t.readMeta(id)
		if err != nil || !t.completeLocked(id, m) {
			continue
		}
		if t.mu.lfu.Stage(id, t.footprint(id, m)) == nil {
			t.mu.onFlash[id] = m
			n++
		}
	}
	dropped := 0
	for _, k := range t.mu.core.FlashKeys("f/") {
		if !t.currentPiece(k) {
			if seg, ok := t.mu.core.FlashSegment(k); ok {
				t.mu.core.Drop(seg)
				dropped++
			}
		}
	}
	t.log.Info("whole-file flash copies recovered", "files", n, "segments", rep.Segments, "stale_pieces_dropped", dropped)
}

// idsOnFlash lists the files with pieces on flash: the only ones whose
// version recovery asks of the capacity tier (for a bucket, a HEAD and a
// sidecar GET each), however many files it holds.
func (t *Tier) idsOnFlash() []string {
	seen := make(map[string]bool)
	var ids []string
	for _, k := range t.mu.core.FlashKeys("f/") {
		parts := strings.Split(k, "/")
		if len(parts) == 4 && !seen[parts[1]] && ident.ValidName(parts[1]) == nil {
			seen[parts[1]] = true
			ids = append(ids, parts[1])
		}
	}
	return ids
}

// currentPiece reports whether key is a piece of a resident copy.
func (t *Tier) currentPiece(key string) bool {
	parts := strings.Split(key, "/")
	if len(parts) != 4 {
		return false
	}
	m, ok := t.mu.onFlash[parts[1]]
	return ok && copyPrefix(parts[1], m) == strings.Join(parts[:3], "/")+"/"
}

func isSidecar(name string) bool { return len(name) > 5 && name[len(name)-5:] == ".json" }

// copyPrefix is the key prefix of the pieces of file id at version m:
// "f/<id>/<modification time>/", so pieces of another version never match.
func copyPrefix(id string, m Meta) string {
	return "f/" + id + "/" + m.stamp() + "/"
}

// pieceKey names piece k of file id at version m.
func pieceKey(id string, m Meta, k int) string { return copyPrefix(id, m) + strconv.Itoa(k) }

// pieceSize is the bytes of a file one flash block holds in one record,
// with room for the longest piece key of the file.
func (t *Tier) pieceSize(id string) int64 {
	longest := "f/" + id + "/" + strings.Repeat("z", maxStamp) + "/" + strconv.Itoa(1<<20)
	return tier.RecordCapacity(t.opts.BlockSize, len(longest))
}

// pieces is the number of pieces of a file.
func (t *Tier) pieces(id string, m Meta) int {
	p := t.pieceSize(id)
	return int((m.Size + p - 1) / p)
}

// footprint is the flash space a copy takes: whole blocks.
func (t *Tier) footprint(id string, m Meta) int64 {
	return int64(t.pieces(id, m)) * t.opts.BlockSize
}

// completeLocked reports whether every piece of the file is on flash.
func (t *Tier) completeLocked(id string, m Meta) bool {
	for k := range t.pieces(id, m) {
		if _, ok := t.mu.core.FlashSegment(pieceKey(id, m, k)); !ok {
			return false
		}
	}
	return m.Size > 0
}

// Close stops the copier and the feed, writes the pieces already staged,
// and syncs the flash copies. Calling it again returns the first call's
// result.
func (t *Tier) Close() error {
	if t.feed == nil {
		return nil
	}
	return t.feed.Close()
}

// written counts the blocks of pieces written.
func (t *Tier) written(_ *tier.BlockWrite, err error) {
	if err == nil {
		t.stats.blocksWritten.Add(1)
	}
}

func (t *Tier) now() time.Duration { return time.Since(t.start) }

// wake asks the copier to plan now: a request may have changed the LFU's
// choice.
func (t *Tier) wake() {
	if t.feed != nil {
		t.feed.Poke()
	}
}
