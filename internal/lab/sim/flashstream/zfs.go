package flashstream

import (
	"strconv"
	"time"

	"github.com/strata-media/strata/internal/core/tier"
	"github.com/strata-media/strata/internal/lab/sim/des"
)

// ZFS-like baseline parameters, from the OpenZFS module parameter
// documentation (zfs(4)) and FlashStream §3.2.4.
const (
	zfsRecordSize   = 128 << 10   // recordsize default
	zfsWriteMax     = 8 << 20     // l2arc_write_max: bytes per feed interval
	zfsHeadroom     = 2           // l2arc_headroom: scan depth in write_max units
	zfsFeedInterval = time.Second // l2arc_feed_secs
	zfsL2Block      = 1 << 20     // L2ARC write unit modelled here (see NewZFS)
	zfsAdmitAlways  = 2.0         // utilization threshold above 1: never refuses
)

// ZFS is the ZFS-like baseline of FlashStream §5 (Table 3): an ARC in RAM
// over 128 KiB records; an L2ARC feed that every second scans the ARC's
// eviction end (headroom 2 x l2arc_write_max = 16 MiB) and writes up to 8 MiB
// of records not yet on the SSD, sequentially, with a FIFO rotor; L2ARC hits
// are copied back into the ARC (ZFS's L2ARC is not exclusive); SSD reads are
// not prioritized over writes. It runs on the same tier core as FlashStream,
// configured with these policies: no policy is written twice.
type ZFS struct {
	loop    *des.Loop
	cat     *des.Catalog
	core    *tier.Cache
	ssd     *des.Disk
	hdd     *des.Disk
	bs      int64
	writing bool
	budget  int64 // bytes the current feed interval may still write
	waiting map[string][]func()
	c       counters
}

// newZFS builds the baseline with ramBytes of ARC and flashBytes of L2ARC.
// The L2ARC is written in 1 MiB blocks of packed records, at most 8 per
// interval: ZFS writes the interval's buffers as one sequential run, which
// the block sequence reproduces on the device.
func newZFS(l *des.Loop, cat *des.Catalog, ssd, hdd *des.Disk, ramBytes, flashBytes int64) (*ZFS, error) {
	core, _, err := tier.New(tier.Options{
		RAMBytes:         ramBytes,
		RAMPolicy:        tier.NewARC(ramBytes),
		MonitorRoomBytes: zfsHeadroom * zfsWriteMax,
		RingBytes:        zfsWriteMax,
		DeviceSize:       flashBytes,
		BlockSize:        zfsL2Block,
		BlockPolicy:      tier.BlockFIFO,
		Admission:        tier.Threshold{Max: zfsAdmitAlways, IgnoreReads: true},
		Inclusive:        true,
	}, 1)
	if err != nil {
		return nil, err
	}
	z := &ZFS{loop: l, cat: cat, core: core, ssd: ssd, hdd: hdd, bs: zfsL2Block, waiting: make(map[string][]func())}
	z.c.SSDCapacity = int64(int(core.Blocks())-tier.MetaBlocks) * z.bs
	return z, nil
}

// Name is "ZFS".
func (z *ZFS) Name() string { return "ZFS" }

// SSD is the L2ARC device.
func (z *ZFS) SSD() *des.Disk { return z.ssd }

// HDD is the pool's disk.
func (z *ZFS) HDD() *des.Disk { return z.hdd }

// Counters are the cumulative counters, in records.
func (z *ZFS) Counters() counters {
	c := z.c
	occ := z.core.Occupancy()
	c.SSDCachedBytes, c.SSDFilled = occ.SSDBytes, filled(occ)
	return c
}

// Start schedules the L2ARC feed every l2arc_feed_secs.
func (z *ZFS) Start() {
	on := func() bool { return true }
	z.loop.Every(time.Second, on, z.ssd.TickEpoch)
	z.loop.Every(zfsFeedInterval, on, func() {
		z.core.Monitor(z.loop.Now())
		z.budget = zfsWriteMax
		z.feed()
	})
}

func (z *ZFS) feed() {
	if z.writing || z.budget < z.bs {
		return
	}
	now := z.loop.Now()
	w := z.core.Feed(now, tier.Signals{Now: now, Utilization: z.ssd.Utilization(), ReadsWaiting: z.ssd.ReadsOutstanding(), ReadLatency: z.ssd.ReadLatency()})
	if w == nil {
		return
	}
	z.writing = true
	z.budget -= z.bs
	z.ssd.Write(int64(w.Block)*z.bs, z.bs, 0, func() {
		z.core.WriteDone(w, nil, z.loop.Now())
		z.writing = false
		z.feed()
	})
}

// recordKey names record i of a segment.
func recordKey(seg string, i int) string { return seg + "#" + strconv.Itoa(i) }

// Serve reads the segment as the web server does through zfs-fuse (the
// paper's ZFS, Table 3): FUSE forwards reads of at most 128 KiB to the
// user-space daemon one after another, so the first records are read one
// after the other, each from the ARC, the L2ARC or the disk; once zfetch
// has seen the stream it reads the rest ahead, all at once. ZFS issues one
// I/O per block, and the vdev queue of its time aggregated adjacent I/Os
// only up to zfs_vdev_aggregation_limit = 128 KiB, one record; so under
// load each chained record read queues behind other clients' reads.
// (Unlike ext4 under CFQ, whose idling keeps a reader's requests together:
// the FUSE daemon's threads serve all clients.)
func (z *ZFS) Serve(seg int, done func(tier.Tier)) {
	z.c.Requests++
	n := int((z.cat.Sizes[seg] + zfsRecordSize - 1) / zfsRecordSize)
	from := tier.RAM
	var next func(i int)
	next = func(i int) {
		if i >= zfetchAfter && i < n {
			z.prefetch(seg, i, n, &from, func() { done(from) })
			return
		}
		for ; i < n; i++ {
			if z.fetch(seg, i, &from, func() { next(i + 1) }) {
				return
			}
		}
		done(from)
	}
	next(0)
}

// zfetchAfter is how many sequential block reads ZFS's prefetcher (zfetch)
// needs to see before it reads the rest of the stream ahead: it confirms a
// stream on the second sequential access, then prefetches the following
// blocks (zfetch_block_cap 256 blocks, more than a segment has).
const zfetchAfter = 2

// fetch serves record i: from the ARC at once (false), or by starting an
// L2ARC or disk read that calls then (true). from records the slowest tier.
func (z *ZFS) fetch(seg, i int, from *tier.Tier, then func()) bool {
	l, recSize := z.lookup(seg, i, z.cat.Sizes[seg])
	switch l.Tier {
	case tier.RAM:
		return false
	case tier.SSD:
		if *from == tier.RAM {
			*from = tier.SSD
		}
		z.readSSD(seg, i, recSize, l.Seg, then)
	default:
		*from = tier.Miss
		z.c.HDDBytes += recSize
		z.readRecord(seg, i, l.Token, then)
	}
	return true
}

// prefetch reads records [i, n) at once, as zfetch does once it has seen
// a sequential stream, and calls done when all are in.
func (z *ZFS) prefetch(seg, i, n int, from *tier.Tier, done func()) {
	left := 1
	fin := func() {
		if left--; left == 0 {
			done()
		}
	}
	for ; i < n; i++ {
		left++
		if !z.fetch(seg, i, from, fin) {
			left--
		}
	}
	fin()
}

// lookup looks record i up and counts where it was found.
func (z *ZFS) lookup(seg, i int, size int64) (tier.Lookup, int64) {
	recSize := min(int64(zfsRecordSize), size-int64(i)*zfsRecordSize)
	z.c.Units++
	l := z.core.Lookup(recordKey(z.cat.Keys[seg], i), z.loop.Now())
	switch l.Tier {
	case tier.RAM:
		z.c.RAMUnits++
		z.c.RAMBytes += recSize
	case tier.SSD:
		z.c.SSDUnits++
		z.c.SSDBytes += recSize
	}
	return l, recSize
}

// readSSD reads a record from the L2ARC and copies it into the ARC.
func (z *ZFS) readSSD(seg, i int, recSize int64, s tier.Segment, done func()) {
	z.ssd.ReadRanges(chunkRanges(s, z.bs), func() {
		z.core.Insert(recordKey(z.cat.Keys[seg], i), recSize, nil, z.core.Token(), z.loop.Now())
		done()
	})
}

// readRecord reads record i of a segment from the disk and puts it in the
// ARC; a record already being read is waited for, not read again.
func (z *ZFS) readRecord(seg, i int, tok tier.Token, done func()) {
	base, size := z.cat.Offsets[seg], z.cat.Sizes[seg]
	key := recordKey(z.cat.Keys[seg], i)
	if w, ok := z.waiting[key]; ok {
		z.waiting[key] = append(w, done)
		return
	}
	z.waiting[key] = []func(){done}
	off := int64(i) * zfsRecordSize
	n := min(int64(zfsRecordSize), size-off)
	z.hdd.Read(base+off, n, func() {
		z.core.Insert(key, n, nil, tok, z.loop.Now())
		for _, d := range z.waiting[key] {
			d()
		}
		delete(z.waiting, key)
	})
}
