// Package tier is Strata's sans-I/O segment cache engine (FlashStream §3-4):
// the RAM buffer pool with its monitor room, the ring, the SSD block index
// with its replacement policies, block packing, admission, invalidation,
// the on-flash format and recovery. It starts no goroutines, never sleeps
// and does no I/O: drivers pass the time in, perform the block writes it
// plans, and report back.
package tier

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"time"
)

// Options configure a Cache. Zero fields take the defaults of
// EnsureDefaults.
type Options struct {
	// RAMBytes is the RAM buffer pool's budget in bytes.
	RAMBytes int64
	// RAMPolicy orders the pool for eviction. Default: LRU (FlashStream
	// §3.2.1).
	RAMPolicy RAMPolicy
	// MonitorRoom is the fraction of the pool's segments, counted from the
	// tail, that the monitor copies to the ring. Default 0.10 (§3.2.1).
	MonitorRoom float64
	// MonitorRoomBytes, when positive, bounds the monitor room in bytes
	// instead (ZFS's L2ARC headroom).
	MonitorRoomBytes int64
	// RingBytes bounds the ring in bytes. Default: DefaultRingBytes.
	RingBytes int64
	// DeviceSize is the flash device's size in bytes; whole blocks of it
	// are used. Zero disables the flash tier.
	DeviceSize int64
	// Alignment is the device's I/O alignment in bytes. Default 4096.
	Alignment int
	// BlockSize is the flash block size in bytes: the device's optimal
	// block size (§3.1), a multiple of Alignment. Default 4 MiB.
	BlockSize int64
	// BlockPolicy is the SSD block replacement and flash admission policy.
	// Default BlockReinsert (the zero value); FlashStream §3.2.3's is
	// BlockLRU.
	BlockPolicy BlockPolicy
	// FreqWindow is the number of requests after which BlockTinyLFU's
	// frequency sketch halves its counts (TinyLFU's sample size: ten
	// times the objects the cache holds). Default: ten per MiB of RAM and
	// flash, at least 1024; BytesWindowFactor times that with
	// ObjectiveBytes.
	FreqWindow int
	// ReinsertMax, ReinsertMinEst and ReinsertShare bound BlockReinsert's
	// reinsertion: a segment is reinserted at most ReinsertMax times in a
	// row without a read on flash, only if read since written or estimated
	// at ReinsertMinEst recent requests or more, and at most ReinsertShare
	// of a block per victim. Defaults: DefaultReinsert* (BytesReinsertShare
	// with ObjectiveBytes).
	ReinsertMax    int
	ReinsertMinEst int
	ReinsertShare  float64
	// GroupShrink, in [0, 1], is the weight BlockReinsert gives a
	// segment's group (its rendition directory) in its score; see
	// group.go. Default DefaultGroupShrink (BytesGroupShrink with
	// ObjectiveBytes); negative scores segments alone.
	GroupShrink float64
	// GroupRatio scores a group by its requests per distinct segment
	// rather than by capture-recapture's requests per segment (group.go):
	// better for whole-title sessions read in order (strata-lab sim
	// policies' vod workload), worse for FlashStream's. Default false.
	GroupRatio bool
	// Group returns the group of a key, whose requests BlockReinsert's
	// group-aware score pools (group.go): keys whose segments share a
	// popularity. Default: the key up to and including its last '/' (a
	// title's rendition directory); a driver whose keys carry more after
	// that directory (the edge's) passes its own.
	Group func(key string) string
	// Sessions is the number of cursors of BlockReinsert's session table
	// (session.go): viewers reading a group's segments in order, learnt
	// from the keys requested, whose next segments are valued by when
	// they will be reached. Default DefaultSessions; negative turns the
	// table off. It needs the group score (GroupShrink not negative).
	// The table values segments in the victim choice and the rescue
	// plan; admission to flash leaves it out unless SessionAdmission.
	Sessions int
	// SessionAdmission lets the session table vouch for a segment the
	// monitor offers to flash: a segment a viewer behind will reach is
	// admitted (interval caching). strata-lab sim policies: more hits on
	// the whole-title workloads for markedly more flash writes
	// (docs/decisions/0032-session-aware-flash-policy.md). Default false.
	SessionAdmission bool
	// SessionCapture scores a group that viewers of the session table
	// read through like any other, by capture-recapture (the policy of
	// decision 0032). Default false: such a group is scored by its
	// readings, its requests per distinct segment, times the share of
	// read-through requests that found their segment requested before,
	// how often a group read through is read again within the sketch's
	// memory (session.go; decision 0037).
	SessionCapture bool
	// Objective is what BlockReinsert's and BlockTinyLFU's scores per
	// byte maximize: the hit ratio (ObjectiveRequests, the zero value and
	// default) or the byte hit ratio (ObjectiveBytes, for an edge whose
	// origin link is the limit); see objective.go.
	Objective Objective
	// VictimSample is the number of blocks BlockTinyLFU (from the LRU
	// end) and BlockReinsert (at random among all) compare to choose a
	// victim. Default 16.
	VictimSample int
	// ScoreOracle, when set, replaces BlockTinyLFU's and BlockReinsert's
	// estimate of a key's recent requests: a simulator's yardstick that
	// knows each key's true request rate (in requests per FreqWindow),
	// to tell the policy's estimation error from its other losses. Nil
	// (the sketch) everywhere else.
	ScoreOracle func(key string) float64
	// RandomFree hands out free blocks in random order rather than by
	// address (§5.3's experiment).
	RandomFree bool
	// Seed seeds RandomFree.
	Seed uint64
	// Admission decides when the feed may write. Default:
	// Threshold{Max: 0.6} (§4.4).
	Admission Admission
	// Inclusive lets a segment live in RAM and on flash at once (the
	// ZFS-like baseline). Default false: exclusive tiers (§3.2).
	Inclusive bool
	// AlignObjects starts every object in a block of its own, so that
	// dropping an object frees whole blocks (the whole-file tier).
	AlignObjects bool
	// FlushIdle lets Feed write a partly packed block, padded, once the
	// ring is empty (Idle), rather than hold it back for segments that
	// may never come: for a cache fed whole objects (the whole-file tier),
	// whose last block would otherwise wait for the next copy. Admission
	// decides on it as on any block. Default false: FlashStream's feed
	// writes only full blocks and pads the last one at shutdown (Flush).
	FlushIdle bool
}

// Defaults.
const (
	DefaultBlockSize   = 4 << 20
	DefaultAlignment   = 4096
	DefaultMonitorRoom = 0.10
)

// DefaultRingBytes is the ring's bytes when Options.RingBytes is 0: two
// blocks of blockSize, at least 16 MiB, so that it holds several segments
// even with small blocks. A memory budget counts the same (the node's
// sizing of its parts).
func DefaultRingBytes(blockSize int64) int64 { return max(2*blockSize, 16<<20) }

// EnsureDefaults fills zero fields with defaults and returns o.
func (o *Options) EnsureDefaults() *Options {
	if o.RAMPolicy == nil {
		o.RAMPolicy = NewLRU()
	}
	if o.MonitorRoom == 0 {
		o.MonitorRoom = DefaultMonitorRoom
	}
	if o.Alignment == 0 {
		o.Alignment = DefaultAlignment
	}
	if o.BlockSize == 0 {
		o.BlockSize = DefaultBlockSize
	}
	if o.RingBytes == 0 {
		o.RingBytes = DefaultRingBytes(o.BlockSize)
	}
	if o.Admission == nil {
		o.Admission = Threshold{Max: DefaultThreshold}
	}
	if o.ReinsertMax == 0 {
		o.ReinsertMax = DefaultReinsertMax
	}
	if o.ReinsertMinEst == 0 {
		o.ReinsertMinEst = DefaultReinsertMinEst
	}
	if o.ReinsertShare == 0 {
		o.ReinsertShare = DefaultReinsertShare
		if o.Objective.perByte() {
			o.ReinsertShare = BytesReinsertShare
		}
	}
	if o.GroupShrink == 0 {
		o.GroupShrink = DefaultGroupShrink
		if o.GroupRatio {
			o.GroupShrink = DefaultGroupShrinkRatio
		} else if o.Objective.perByte() {
			o.GroupShrink = BytesGroupShrink
		}
	}
	if o.Sessions == 0 {
		o.Sessions = DefaultSessions
	}
	if o.VictimSample == 0 {
		o.VictimSample = tinyLFUSample
	}
	if o.FreqWindow == 0 {
		o.FreqWindow = int(max(10*((o.RAMBytes+o.DeviceSize)>>20), 1024))
		if o.Objective.perByte() {
			o.FreqWindow *= BytesWindowFactor
		}
	}
	return o
}

func (o *Options) validate() error {
	a := int64(o.Alignment)
	switch {
	case a <= 0 || a&(a-1) != 0:
		return fmt.Errorf("tier: alignment %d is not a power of two", a)
	case o.BlockSize%a != 0:
		return fmt.Errorf("tier: block size %d is not a multiple of alignment %d", o.BlockSize, a)
	case o.BlockSize < 4096:
		return fmt.Errorf("tier: block size %d is below 4096 bytes", o.BlockSize)
	case o.DeviceSize > 0 && o.DeviceSize/o.BlockSize <= MetaBlocks:
		return fmt.Errorf("tier: device of %d bytes holds no data block of %d bytes", o.DeviceSize, o.BlockSize)
	case o.Objective < ObjectiveRequests || o.Objective > ObjectiveBalanced:
		return fmt.Errorf("tier: unknown objective %d", int(o.Objective))
	case o.DeviceSize/o.BlockSize > 1<<32-1:
		return fmt.Errorf("tier: device of %d bytes has too many blocks", o.DeviceSize)
	}
	return nil
}

// Tier says where a lookup found a segment.
type Tier uint8

// Tiers.
const (
	Miss Tier = iota // in neither cache: read the capacity tier
	RAM              // in the RAM pool (or waiting in the ring for flash)
	SSD              // on flash
)

func (t Tier) String() string { return [...]string{"miss", "ram", "ssd"}[t] }

// A Lookup is the result of Cache.Lookup.
type Lookup struct {
	Tier Tier
	// Entry is the segment when Tier is RAM.
	Entry *Entry
	// Seg is where the segment lies on flash when Tier is SSD; the driver
	// reads and verifies its chunks and reports failures with Drop.
	Seg Segment
	// Token is for Insert after a miss.
	Token Token
}

// Cache is the tier engine's state. It is not safe for concurrent use;
// the live driver guards it with a mutex.
type Cache struct {
	opts     Options
	nblocks  uint32
	formatID uint64
	nextGen  uint64
	metaSeq  uint64

	ram     *RAMPool
	ring    *Ring
	pack    *packer
	ix      *Index
	inv     *invalidations
	partial map[string][]Chunk // chunks on flash of segments still being written
	rescue  *rescueQueue       // reinserted segments, packed before the ring's

	freq     *sketch // recent requests, for BlockTinyLFU; nil otherwise
	filtered uint64  // segments BlockTinyLFU kept off flash

	reinserted, reinsertLost uint64 // BlockReinsert's rescues planned, and not completed
	barCache                 barCache

	inflight   *BlockWrite
	ondisk     map[uint32][]content // what a recovery scan could read in each block
	pruneAbove int                  // pruneAbove, or less in tests

	stats Stats
}

// New returns an empty cache over a freshly formatted device with format id
// formatID; the driver writes the returned metadata first. Use Recover for
// a device that already holds a cache.
func New(opts Options, formatID uint64) (*Cache, *MetaWrite, error) {
	c, err := newCache(opts)
	if err != nil {
		return nil, nil, err
	}
	c.formatID = formatID
	c.nextGen = 1
	if c.nblocks == 0 {
		return c, nil, nil
	}
	return c, c.metaWrite(), nil
}

func newCache(opts Options) (*Cache, error) {
	opts.EnsureDefaults()
	if err := opts.validate(); err != nil {
		return nil, err
	}
	c := &Cache{
		opts:       opts,
		nblocks:    uint32(opts.DeviceSize / opts.BlockSize),
		ram:        NewRAMPool(opts.RAMBytes, opts.RAMPolicy),
		ring:       NewRing(opts.RingBytes),
		pack:       newPacker(opts.BlockSize),
		inv:        newInvalidations(),
		partial:    make(map[string][]Chunk),
		rescue:     newRescueQueue(),
		ondisk:     make(map[uint32][]content),
		pruneAbove: pruneAbove,
	}
	var rng *rand.Rand
	if opts.RandomFree {
		rng = rand.New(rand.NewPCG(opts.Seed, 0x535452415441))
	}
	if (opts.BlockPolicy == BlockTinyLFU || opts.BlockPolicy == BlockReinsert) && c.nblocks > 0 {
		// Four counters a row for each object the window spans, a tenth
		// of its requests: few collisions at a byte a counter.
		c.freq = newSketch(max(opts.FreqWindow*4/10, 256), opts.FreqWindow)
		if opts.BlockPolicy == BlockReinsert && opts.GroupShrink > 0 {
			c.freq.groups = newGroupSketch(max(opts.FreqWindow/40, 256))
			c.freq.groups.capture = !opts.GroupRatio
			if opts.Group != nil {
				c.freq.groups.group = opts.Group
			}
			c.freq.shrink = opts.GroupShrink
			if opts.Sessions > 0 {
				c.freq.sessions = newSessionTable(opts.Sessions)
				c.freq.sessions.capture = opts.SessionCapture
			}
		}
		c.freq.oracle = opts.ScoreOracle
	}
	c.ix = newIndex(opts.BlockSize, c.nblocks, opts.BlockPolicy, c.freq, rng)
	if p, ok := c.ix.policy.(*tinyLFUPolicy); ok {
		p.sample = opts.VictimSample
		p.objective = opts.Objective
		if opts.BlockPolicy == BlockReinsert {
			p.lost = c.lostValue
			p.random = true
			p.rng = rand.New(rand.NewPCG(opts.Seed, 0x7669637469))
		}
	}
	return c, nil
}

// Options returns the cache's options with defaults filled in.
func (c *Cache) Options() Options { return c.opts }

// FormatID is the id of the on-flash format instance.
func (c *Cache) FormatID() uint64 { return c.formatID }

// Blocks is the number of flash blocks, metadata blocks included.
func (c *Cache) Blocks() uint32 { return c.nblocks }

// Lookup finds key: in RAM (a hit moves it to the head), on flash (the
// access is counted for the block policy; FlashStream §3.2: the segment is
// served from flash and not copied into RAM), or nowhere.
func (c *Cache) Lookup(key string, now time.Duration) Lookup {
	if c.freq != nil {
		c.freq.add(key)
	}
	if e, ok := c.ram.Get(key); ok {
		c.stats.RAMHits++
		c.stats.RAMHitBytes += e.Size
		return Lookup{Tier: RAM, Entry: e}
	}
	if e, ok := c.pending(key); ok {
		c.stats.RAMHits++
		c.stats.RAMHitBytes += e.Size
		return Lookup{Tier: RAM, Entry: e}
	}
	c.stats.RAMMisses++
	if s, ok := c.ix.get(key); ok {
		c.ix.access(s)
		c.stats.SSDHits++
		c.stats.SSDHitBytes += s.Size
		seg, _ := c.FlashSegment(key)
		return Lookup{Tier: SSD, Seg: seg}
	}
	if c.nblocks > 0 {
		c.stats.SSDMisses++
	}
	return Lookup{Tier: Miss, Token: c.inv.epoch}
}

// InRAM reports whether key is in the RAM pool, without counting a hit.
func (c *Cache) InRAM(key string) bool {
	_, ok := c.ram.Peek(key)
	return ok
}

// Token returns the current invalidation epoch, for an Insert that follows
// a capacity read not preceded by a Miss lookup (after a failed flash read).
func (c *Cache) Token() Token { return c.inv.epoch }

// FlashSegment returns where key lies on flash, without counting an
// access.
func (c *Cache) FlashSegment(key string) (Segment, bool) {
	s, ok := c.ix.get(key)
	if !ok {
		return Segment{}, false
	}
	seg := *s
	seg.Chunks = append([]Chunk(nil), s.Chunks...)
	return seg, true
}

// pending finds key among the segments on their way to flash, whose bytes
// are still in memory: in the ring, being packed, or being written.
func (c *Cache) pending(key string) (*Entry, bool) {
	it, ok := c.ring.Get(key)
	if r := c.rescue.keys[key]; r != nil && !r.waiting {
		it, ok = r.RingItem, true
	}
	if !ok {
		var s *packSeg
		if s, ok = c.pack.segs[key]; ok {
			it = s.RingItem
		} else if c.inflight != nil {
			it, ok = c.inflight.items[key]
		}
	}
	if !ok {
		return nil, false
	}
	return &Entry{Key: it.Key, Size: it.Size, Data: it.Data, Hold: it.Hold, Hits: it.Hits, Sum: it.Sum}, true
}

// Rehome replaces the bytes RAM holds for key, kept alive by old, with the
// same bytes elsewhere (data, kept alive by hold): the live server moves
// an object out of memory that holds little else (ramfile.File.Sparse).
// It reports whether it did: false if key is not in RAM, or is there
// with other bytes than old's (replaced, or refreshed, since), or data's
// length is not the entry's. Nothing else changes (position, hits,
// sum); whoever read the old pair keeps it, and old with it.
func (c *Cache) Rehome(key string, old any, data []byte, hold any) bool {
	e, ok := c.ram.Peek(key)
	if !ok || e.Hold != old || old == nil || len(data) != len(e.Data) {
		return false
	}
	e.Data, e.Hold = data, hold
	return true
}

// Insert puts a segment read from the capacity tier at the head of the RAM
// pool, evicting from the tail without waiting (§3.2.1 evict-ahead). token
// is the one the miss's Lookup returned; if key was invalidated since, the
// bytes may be stale and nothing is inserted. It reports whether the
// segment was inserted.
func (c *Cache) Insert(key string, size int64, data []byte, token Token, now time.Duration) bool {
	return c.InsertSum(key, size, data, nil, 0, token, now)
}

// InsertSum is Insert with a digest of data kept in the entry (Entry.Sum)
// and hold, what keeps data's memory alive (Entry.Hold; nil for bytes in
// Go's heap).
func (c *Cache) InsertSum(key string, size int64, data []byte, hold any, sum uint64, token Token, now time.Duration) bool {
	if c.inv.since(key, token) {
		c.stats.InsertsRefused++
		return false
	}
	if _, onFlash := c.ix.get(key); onFlash && !c.opts.Inclusive {
		return false
	}
	evicted, ok := c.ram.Insert(&Entry{Key: key, Size: size, Data: data, Hold: hold, Sum: sum, Hits: 1, Inserted: now})
	c.evicted(evicted)
	if ok {
		c.stats.RAMInserts++
	}
	return ok
}

func (c *Cache) evicted(evicted []*Entry) {
	for _, e := range evicted {
		c.stats.RAMEvictions++
		if !c.flashBound(e.Key) {
			c.stats.EvictedUnsaved++
		}
	}
}

// ChargeRAM counts b bytes against RAM's budget besides its segments'
// (RAMPool.Charge): the live server's memory that RAM's segments keep
// beyond their own bytes. RAM evicts at once until its segments fit
// beside it, as an insertion would.
func (c *Cache) ChargeRAM(b int64) { c.evicted(c.ram.Charge(b)) }

// flashBound reports whether key is on flash or on its way there.
func (c *Cache) flashBound(key string) bool {
	if _, ok := c.ix.get(key); ok {
		return true
	}
	_, ok := c.pending(key)
	return ok || c.partial[key] != nil || c.rescue.keys[key] != nil
}

// Monitor is one pass of the RAM monitor (§3.2.1): it copies the segments
// of the monitor room that are neither on flash nor already queued into the
// ring, until the ring is full, and returns how many it copied.
func (c *Cache) Monitor(now time.Duration) int {
	if c.nblocks == 0 {
		return 0
	}
	n := 0
	admit := c.flashAdmission()
	c.ram.WalkMonitorRoom(c.opts.MonitorRoom, c.opts.MonitorRoomBytes, func(e *Entry) {
		if c.flashBound(e.Key) {
			return
		}
		if !admit(e.Key, e.Size) {
			c.filtered++
			return
		}
		if c.ring.Push(RingItem{Key: e.Key, Size: e.Size, Data: e.Data, Hold: e.Hold, Hits: e.Hits, Sum: e.Sum}) {
			n++
		} else {
			c.stats.RingFull++
		}
	})
	c.stats.RingPushes += uint64(n)
	return n
}

// flashAdmission returns the monitor's admission filter: with
// BlockTinyLFU and flash full, a segment goes to the ring only if the
// sketch counts more recent requests for it than the mean of the segments
// the next victim block would take with it; otherwise every segment goes.
func (c *Cache) flashAdmission() func(key string, size int64) bool {
	all := func(string, int64) bool { return true }
	p, ok := c.ix.policy.(*tinyLFUPolicy)
	if !ok || c.ix.free.len() > 0 {
		return all
	}
	if c.opts.BlockPolicy == BlockReinsert {
		return c.reinsertAdmission(p)
	}
	bar, ok := p.bar()
	if !ok {
		return all
	}
	return func(key string, _ int64) bool { return float64(c.freq.estimate(key)) > bar }
}

// FlashFiltered is the number of segments the monitor kept off flash
// because BlockTinyLFU's admission judged them colder than what they
// would displace.
func (c *Cache) FlashFiltered() uint64 { return c.filtered }

// Stage queues a whole object for flash directly, bypassing RAM: the
// whole-file tier copies files its LFU policy chose (VoD paper §5). hits
// seeds the object's count for the LFU block policies. It reports false
// when the object is on flash or on its way, or the ring has no room.
func (c *Cache) Stage(key string, size int64, data []byte, hits uint64) bool {
	if c.nblocks == 0 || c.flashBound(key) {
		return false
	}
	if !c.ring.Push(RingItem{Key: key, Size: size, Data: data, Hits: hits}) {
		c.stats.RingFull++
		return false
	}
	c.stats.RingPushes++
	return true
}

// OnTheWay reports whether key waits to be written to flash: in the ring,
// being packed, in the write in flight, or partly written.
func (c *Cache) OnTheWay(key string) bool {
	_, ok := c.pending(key)
	return ok || c.partial[key] != nil || c.rescue.keys[key] != nil
}

// Idle reports whether the feed has nothing to write but a partly packed
// block: the ring is empty and the plan is not full. Then, and only then,
// Flush writes what admission would otherwise hold back for more data.
func (c *Cache) Idle() bool {
	return c.ring.Len() == 0 && len(c.rescue.items) == 0 && !c.pack.full() && c.inflight == nil
}

// FlashKeys lists the keys on flash under prefix.
func (c *Cache) FlashKeys(prefix string) []string {
	var keys []string
	for k := range c.ix.segs {
		if covers(prefix, k) {
			keys = append(keys, k)
		}
	}
	return keys
}

// Touch counts an access to key on flash without reading it, for an
// object served in parts (a range of a whole file): the block policy sees
// it as one access.
func (c *Cache) Touch(key string) {
	if s, ok := c.ix.get(key); ok {
		c.ix.access(s)
	}
}

// Feed is one step of the SSD feed (§3.2.2): it packs ring segments into a
// block plan and, when a whole block is ready (or, with FlushIdle, the
// ring is empty and the plan holds something) and the admission policy
// allows, returns the block write to issue. It returns nil when there is
// nothing to write, a write is already in flight, or admission refuses.
func (c *Cache) Feed(now time.Duration, sig Signals) *BlockWrite {
	if c.inflight != nil || c.nblocks == 0 {
		return nil
	}
	if !c.fill() && !(c.opts.FlushIdle && len(c.pack.pieces) > 0) {
		return nil
	}
	if !c.opts.Admission.Admit(sig) {
		c.stats.AdmissionRejects++
		return nil
	}
	c.stats.AdmissionAccepts++
	return c.issue()
}

// fill moves ring segments into the block plan and reports whether the
// block is ready to be written.
func (c *Cache) fill() bool {
	for !c.pack.full() {
		it, ok := c.ring.Front()
		pop := func() { c.ring.Pop() }
		if r, rok := c.rescue.front(); rok {
			if r.waiting { // the driver never handed its bytes over
				c.rescue.pop()
				c.reinsertLost++
				continue
			}
			it, ok, pop = r.RingItem, true, c.rescue.pop
		}
		if !ok {
			return false
		}
		if !c.pack.storable(it.Key) {
			pop() // its key leaves no room for data in a block
			c.stats.SegmentsLost++
			continue
		}
		if c.opts.AlignObjects && len(c.pack.pieces) > 0 || !c.pack.start(it) {
			return true
		}
		pop()
	}
	return true
}

// Flush returns a write of the partly packed block, padded, so that the
// ring's last segments reach flash at shutdown. It ignores admission, and
// returns nil when nothing is packed or a write is in flight.
func (c *Cache) Flush(now time.Duration) *BlockWrite {
	if c.inflight != nil || c.nblocks == 0 {
		return nil
	}
	c.fill()
	if len(c.pack.pieces) == 0 {
		return nil
	}
	return c.issue()
}

// issue seals the plan into a write to a free block or the policy's
// victim.
func (c *Cache) issue() *BlockWrite {
	var rescue []*Segment
	if c.opts.BlockPolicy == BlockReinsert && c.ix.free.len() == 0 {
		if v := c.ix.policy.victim(); v != nil {
			rescue = c.planRescue(v) // takeBlock takes the same victim
		}
	}
	num, dropped, ok := c.ix.takeBlock()
	if !ok {
		return nil
	}
	w := c.pack.seal(num, c.nextGen)
	c.nextGen++
	w.Victim = dropped > 0
	if len(rescue) > 0 {
		w.Rescue = c.queueRescue(rescue)
		dropped -= len(rescue)
	}
	c.stats.SSDEvictedSegments += uint64(dropped)
	c.inflight = w
	return w
}

// WriteDone reports the completion of the block write w. On success its
// segments become visible in the index (a segment split over blocks when
// its last chunk is written). A segment copied ahead of its eviction may
// still be in RAM: it stays there, served from RAM, until RAM pressure
// evicts it (FlashStream §3.2.1); what exclusive tiers forbid is copying a
// segment served from flash into RAM. On failure the block returns to the
// free blocks and its segments are dropped.
func (c *Cache) WriteDone(w *BlockWrite, err error, now time.Duration) {
	if w != c.inflight {
		panic("tier: WriteDone for a write that is not in flight")
	}
	c.inflight = nil
	if err != nil {
		c.writeFailed(w)
		return
	}
	c.ondisk[w.Block] = []content{{gen: w.Gen, keys: recordKeys(w.Records)}}
	b := newBlock(w.Block, w.Gen)
	b.used = w.Used
	c.ix.written(b)
	for i := range w.Records {
		c.written(b, &w.Records[i], w)
	}
	c.ix.release(b)
	c.stats.BlocksWritten++
	c.stats.BytesWritten += uint64(c.opts.BlockSize)
	c.stats.PaddingBytes += uint64(c.opts.BlockSize - w.Used)
}

func recordKeys(recs []PlannedRecord) []string {
	keys := make([]string, 0, len(recs))
	for _, r := range recs {
		if len(keys) == 0 || keys[len(keys)-1] != r.Key {
			keys = append(keys, r.Key)
		}
	}
	return keys
}

// written handles one record of a completed block write.
func (c *Cache) written(b *block, r *PlannedRecord, w *BlockWrite) {
	if c.inv.dead(r.Key, r.SegGen) || slices.Contains(w.discarded, r.Key) {
		c.dropPartial(r.Key)
		return
	}
	ch := Chunk{Block: b.num, Off: uint32(r.Off), Len: r.Len, Gen: b.gen}
	chunks := append(c.partial[r.Key], ch)
	if len(chunks) != int(r.Seq)+1 {
		c.dropPartial(r.Key) // an earlier chunk was lost
		c.stats.SegmentsLost++
		return
	}
	if r.Seq+1 < r.Chunks {
		c.partial[r.Key] = chunks
		b.partial++
		c.ix.policy.changed(b)
		return
	}
	current := c.ix.chunksCurrent(chunks)
	if current {
		c.ix.publish(&Segment{Key: r.Key, Size: r.SegSize, Gen: r.SegGen, Chunks: chunks, count: r.hits, base: r.hits, reins: r.reins, Sum: r.sum})
	}
	c.dropPartial(r.Key) // after publishing, so its blocks are not released
	if !current {
		c.stats.SegmentsLost++
		return
	}
	c.stats.SegmentsWritten++
}

// dropPartial forgets the chunks written so far of a split segment.
func (c *Cache) dropPartial(key string) {
	for _, ch := range c.partial[key] {
		if b := c.ix.blocks[ch.Block]; b != nil && b.gen == ch.Gen {
			b.partial--
			c.ix.policy.changed(b)
			c.ix.release(b)
		}
	}
	delete(c.partial, key)
}

func (c *Cache) writeFailed(w *BlockWrite) {
	c.stats.WriteErrors++
	// The block may now hold the old content, the new one, or a mix: a
	// recovery scan may find either.
	c.ondisk[w.Block] = append(c.ondisk[w.Block], content{gen: w.Gen, keys: recordKeys(w.Records)})
	for _, r := range w.Records {
		c.dropPartial(r.Key)
	}
	// The planned rest of a split segment whose earlier chunks are lost.
	c.pack.removeIf(func(k string) bool {
		_, ok := w.items[k]
		return ok
	})
	c.ix.free.put(w.Block)
}

// Drop forgets the flash copy of seg after a read of it failed or did not
// verify, unless the index has moved on to another copy.
func (c *Cache) Drop(seg Segment) {
	if s, ok := c.ix.get(seg.Key); ok && s.Gen == seg.Gen {
		c.ix.remove(s)
		c.stats.SSDDropped++
	}
}

// ErrBadPrefix reports an invalidation prefix that is not "", a directory
// ending in '/', or a key.
var ErrBadPrefix = errors.New("tier: bad invalidation prefix")

// Invalidate makes every segment whose key starts with prefix unservable
// from now on: a new version of a title replaces the old one (§3.2.1).
// prefix is "" (everything), a directory ending in '/', or one key. The
// segments leave RAM, the ring and the index at once; the returned metadata
// write makes the invalidation survive a restart, and the driver must
// complete it before acknowledging.
func (c *Cache) Invalidate(prefix string, now time.Duration) (*MetaWrite, error) {
	mw, _, err := c.InvalidateCounted(prefix, now)
	return mw, err
}

// Dropped is what an invalidation took out of the cache: the distinct
// objects (segments) that were servable or on their way to flash, and
// their bytes.
type Dropped struct {
	Objects int
	Bytes   int64
}

// InvalidateCounted is Invalidate, and says what it dropped.
func (c *Cache) InvalidateCounted(prefix string, now time.Duration) (*MetaWrite, Dropped, error) {
	if len(prefix) > MaxKeyLen {
		return nil, Dropped{}, fmt.Errorf("%w: %d bytes", ErrBadPrefix, len(prefix))
	}
	gen := c.nextGen
	c.nextGen++
	c.inv.add(prefix, gen)
	c.stats.Invalidations++
	d := c.discard(prefix)
	if c.nblocks == 0 {
		return nil, d, nil
	}
	return c.metaWrite(), d, nil
}

// Discard forgets every object under prefix in memory, as Invalidate does,
// without recording an invalidation: for copies a caller abandons (an
// aborted whole-file copy), whose records on flash stay valid bytes.
func (c *Cache) Discard(prefix string) { c.discard(prefix) }

// discard drops the objects under prefix from RAM, the ring, the plan, the
// write in flight (so lookups no longer find their bytes there; the write's
// records are not published) and the index, and counts the distinct keys
// it dropped from RAM, the ring and the index.
func (c *Cache) discard(prefix string) Dropped {
	match := func(k string) bool { return covers(prefix, k) }
	sizes := map[string]int64{}
	for k, e := range c.ram.m {
		if match(k) {
			sizes[k] = e.Size
			c.ram.Remove(e)
		}
	}
	c.ring.RemoveIf(func(it RingItem) bool {
		if !match(it.Key) {
			return false
		}
		sizes[it.Key] = it.Size
		return true
	})
	c.rescue.removeIf(match)
	c.pack.removeIf(match)
	if w := c.inflight; w != nil {
		for k := range w.items {
			if match(k) {
				delete(w.items, k)
				w.discarded = append(w.discarded, k)
			}
		}
	}
	for k := range c.partial {
		if match(k) {
			c.dropPartial(k)
		}
	}
	for k, s := range c.ix.segs {
		if match(k) {
			sizes[k] = s.Size
			c.ix.remove(s)
		}
	}
	d := Dropped{Objects: len(sizes)}
	for _, n := range sizes {
		d.Bytes += n
	}
	return d
}

// A MetaWrite is a metadata block the driver must write, whole, at block
// Slot, then sync, then report with MetaDone.
type MetaWrite struct {
	Slot  uint32
	Super Super
}

// Checkpoint returns a metadata write of the current state. A fresh
// format writes it to both slots, so no older slot outranks it.
func (c *Cache) Checkpoint() *MetaWrite { return c.metaWrite() }

// pruneAbove is the table size past which metadata writes prune it; below,
// pruning (which walks every block's keys under the caller's lock) is not
// worth its cost, and a larger table is always safe.
const pruneAbove = 64

// metaWrite prunes the invalidation table when it has grown, and returns
// the next metadata write.
func (c *Cache) metaWrite() *MetaWrite {
	if len(c.inv.table) > c.pruneAbove {
		c.inv.prune(c.contents)
	}
	c.metaSeq++
	s := Super{
		Alignment:  uint32(c.opts.Alignment),
		BlockSize:  c.opts.BlockSize,
		Blocks:     c.nblocks,
		FormatID:   c.formatID,
		Seq:        c.metaSeq,
		GenFloor:   c.nextGen,
		Invalidate: c.inv.list(metaTableCap(c.opts.BlockSize)),
	}
	return &MetaWrite{Slot: uint32(c.metaSeq % MetaBlocks), Super: s}
}

// contents yields what a recovery scan could read: every block's content
// and the write in flight.
func (c *Cache) contents(yield func(content) bool) {
	for _, cs := range c.ondisk {
		for _, ct := range cs {
			if !yield(ct) {
				return
			}
		}
	}
	if w := c.inflight; w != nil {
		yield(content{gen: w.Gen, keys: recordKeys(w.Records)})
	}
}

// MetaDone reports the completion of a metadata write. A failed one leaves
// the invalidation in force in memory; the next metadata write carries it.
func (c *Cache) MetaDone(w *MetaWrite, err error) {
	if err != nil {
		c.stats.WriteErrors++
		return
	}
	c.stats.MetaWrites++
}

// PrefixOf returns the invalidation prefix of a title directory: the key
// prefix up to and including the last '/' of dir + "/".
func PrefixOf(dir string) string {
	return strings.TrimSuffix(dir, "/") + "/"
}
