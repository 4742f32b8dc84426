package tier

// Stats are the cache's counters since it was created or recovered.
type Stats struct {
	RAMHits, RAMMisses   uint64
	RAMHitBytes          int64
	RAMInserts           uint64
	RAMEvictions         uint64
	EvictedUnsaved       uint64 // evicted from RAM neither on flash nor on the way (evict-ahead's lost chances)
	SSDHits, SSDMisses   uint64
	SSDHitBytes          int64
	SSDDropped           uint64 // flash copies dropped after a failed or unverified read
	SSDEvictedSegments   uint64 // segments dropped with a victim block
	RingPushes, RingFull uint64
	AdmissionAccepts     uint64
	AdmissionRejects     uint64
	BlocksWritten        uint64
	BytesWritten         uint64 // whole blocks
	PaddingBytes         uint64 // of BytesWritten, zero padding
	SegmentsWritten      uint64
	SegmentsLost         uint64 // split segments whose earlier chunks were evicted or failed
	WriteErrors          uint64
	MetaWrites           uint64
	Invalidations        uint64
	InsertsRefused       uint64 // misses whose key was invalidated during the capacity read
}

// Occupancy is a snapshot of the cache's sizes.
type Occupancy struct {
	RAMSegments  int
	RAMBytes     int64
	RingSegments int
	RingBytes    int64
	SSDSegments  int
	SSDBytes     int64 // bytes of the segments on flash
	SSDBlocks    int   // data blocks holding live data
	FreeBlocks   int
	DataBlocks   int // all data blocks
}

// Stats returns the counters.
func (c *Cache) Stats() Stats { return c.stats }

// Occupancy returns the current sizes.
func (c *Cache) Occupancy() Occupancy {
	data := 0
	if c.nblocks > MetaBlocks {
		data = int(c.nblocks) - MetaBlocks
	}
	return Occupancy{
		RAMSegments:  c.ram.Len(),
		RAMBytes:     c.ram.Used(),
		RingSegments: c.ring.Len(),
		RingBytes:    c.ring.Used(),
		SSDSegments:  c.ix.Segments(),
		SSDBytes:     c.ix.bytes,
		SSDBlocks:    c.ix.UsedBlocks(),
		FreeBlocks:   c.ix.FreeBlocks(),
		DataBlocks:   data,
	}
}
