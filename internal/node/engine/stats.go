package engine

import (
	"time"

	"github.com/strata-media/strata/internal/core/tier"
	"github.com/strata-media/strata/internal/node/feed"
	"github.com/strata-media/strata/internal/storage/ramfile"
	"github.com/strata-media/strata/internal/storage/store"
)

// Health returns the flash device's health, and false without a flash
// tier.
func (e *Engine) Health() (feed.DeviceReport, bool) {
	if e.health == nil {
		return feed.DeviceReport{}, false
	}
	r := e.health.Report()
	e.limit.Lock()
	lr := e.limit.l.Report()
	e.limit.Unlock()
	r.ReadLimit, r.ShedReads, r.HitsReading = lr.Limit, lr.Shed, e.hitsReading.Load()
	return r, true
}

// Stats is a snapshot of the engine's counters and sizes, grouped by tier as
// GET /stats reports them.
type Stats struct {
	RAM    RAMStats    `json:"ram"`
	Ring   RingStats   `json:"ring"`
	SSD    SSDStats    `json:"ssd"`
	Origin OriginStats `json:"origin"`
	// Invalidations counts invalidations since start.
	Invalidations uint64 `json:"invalidations"`
	// UptimeSeconds is the time since the engine started.
	UptimeSeconds float64 `json:"uptime_s"`
}

// RAMStats describe the RAM buffer pool.
type RAMStats struct {
	Hits           uint64 `json:"hits"`
	Misses         uint64 `json:"misses"`
	HitBytes       int64  `json:"hit_bytes"`
	Segments       int    `json:"segments"`
	Bytes          int64  `json:"bytes"`
	BudgetBytes    int64  `json:"budget_bytes"`
	Inserts        uint64 `json:"inserts"`
	Evictions      uint64 `json:"evictions"`
	EvictedUnsaved uint64 `json:"evicted_unsaved"`
	// NotKept counts the objects read from the capacity tier and
	// answered but not kept in RAM: RAM's memory files were at their
	// limit (held by RAM and by answers in flight), and keeping them in
	// the heap instead would take the node past its memory budget.
	NotKept uint64 `json:"not_kept"`
	// Files are RAM's memory files (Options.RAMFiles, decision 0036);
	// absent without them.
	Files *ramfile.Stats `json:"files,omitempty"`
}

// RingStats describe the ring between the monitor and the feed.
type RingStats struct {
	Segments      int    `json:"segments"`
	Bytes         int64  `json:"bytes"`
	CapacityBytes int64  `json:"capacity_bytes"`
	Pushes        uint64 `json:"pushes"`
	Full          uint64 `json:"full"`
}

// SSDStats describe the flash cache.
type SSDStats struct {
	Enabled           bool    `json:"enabled"`
	Hits              uint64  `json:"hits"`
	Misses            uint64  `json:"misses"`
	HitBytes          int64   `json:"hit_bytes"`
	Segments          int     `json:"segments"`
	BlockSize         int64   `json:"block_size"`
	Blocks            int     `json:"blocks"`
	BlocksUsed        int     `json:"blocks_used"`
	BlocksFree        int     `json:"blocks_free"`
	BlocksWritten     uint64  `json:"blocks_written"`
	BytesWritten      uint64  `json:"bytes_written"`
	PaddingBytes      uint64  `json:"padding_bytes"`
	SegmentsWritten   uint64  `json:"segments_written"`
	EvictedSegments   uint64  `json:"evicted_segments"`
	Utilization       float64 `json:"utilization"`
	AdmissionAccepts  uint64  `json:"admission_accepts"`
	AdmissionRejects  uint64  `json:"admission_rejects"`
	Reads             uint64  `json:"reads"`
	ReadBytes         uint64  `json:"read_bytes"`
	ReadErrors        uint64  `json:"read_errors"`
	Dropped           uint64  `json:"dropped"`
	WriteErrors       uint64  `json:"write_errors"`
	RecoveredSegments int     `json:"recovered_segments"`
	RecoveredBytes    int64   `json:"recovered_bytes"`
	RecoveryCorrupt   int     `json:"recovery_corrupt_records"`
	RecoveryOrphans   int     `json:"recovery_orphan_records"`
	// WrittenByClass is the bytes written per lifetime class.
	WrittenByClass map[string]uint64 `json:"written_by_class"`
	// DataClass is the lifetime class of data blocks now.
	DataClass string `json:"data_class"`
	// WriteRate is the recent flash write rate in bytes/s.
	WriteRate float64 `json:"write_rate_bps"`
	// Health is the flash device's health: degraded reads or writes,
	// errors by kind, probes, reads past their deadline.
	Health *feed.DeviceReport `json:"health,omitempty"`
	// HitMemory is the bound on the bytes of flash hits' buffers, from
	// the read until their response is written: held, peak, hits that
	// waited for room and that were answered 503 (Options.HitMemory).
	HitMemory *store.HitsStats `json:"hit_memory,omitempty"`
	// Checksums counts chunk reads whose data checksum was computed
	// (first reads since start) and those it was not (records this
	// process wrote or verified since: decision 0030).
	Checksums *store.VerifyStats `json:"checksums,omitempty"`
	// FileHits counts the flash hits sent straight from the device
	// (sendfile); Pins the hits pinned now and the block writes that
	// waited for one to yield.
	FileHits uint64          `json:"file_hits"`
	Pins     *store.PinStats `json:"pins,omitempty"`
	// FileHitsDeclined counts the hits that would have been sent from
	// the device but went the buffered way (a probe, or a skip to the
	// capacity tier) because its reads were degraded or too many were
	// late (decision 0035). FileReads counts the reads from the device's
	// file of those sent from it (one per splice of up to 1 MiB),
	// FileReadsLate the hits whose reads passed flash_read_deadline
	// (as one passed it, or all together), FileReadErrors the reads
	// that failed.
	FileHitsDeclined uint64 `json:"file_hits_declined"`
	FileReads        uint64 `json:"file_reads"`
	FileReadsLate    uint64 `json:"file_reads_late"`
	FileReadErrors   uint64 `json:"file_read_errors"`
	// SchedLagMs is the process's recent scheduling latency (the 90th
	// percentile of its goroutines' waits for a CPU over the last quarter
	// second or so; 0 when idle), which excuses reads past their
	// deadline from counting as the device's timeouts (health
	// starved_timeouts) when at least a quarter of it.
	SchedLagMs float64 `json:"sched_lag_ms"`
	// ProjectedLifetimeHours is the VoD paper's T = C x 1024 x N / (W x 3600)
	// with the average write rate since start and the configured endurance.
	ProjectedLifetimeHours float64 `json:"projected_lifetime_hours"`
}

// OriginStats describe reads of the capacity tier.
type OriginStats struct {
	Reads     uint64 `json:"reads"`
	Bytes     uint64 `json:"bytes"`
	Errors    uint64 `json:"errors"`
	Coalesced uint64 `json:"coalesced"`
	// Abandoned counts the reads canceled because every caller waiting
	// for them had gone (a client hanging up on a miss).
	Abandoned uint64 `json:"abandoned"`
	// Waiting is the callers waiting now for a read in progress.
	Waiting int64 `json:"waiting"`
	// Loads is the reads in progress now (at most Options.MaxLoads);
	// LoadWaits counts the reads that found MaxLoads in progress and
	// waited for one to end.
	Loads     int    `json:"loads"`
	LoadWaits uint64 `json:"load_waits"`
}

// Stats returns a snapshot.
func (e *Engine) Stats() Stats {
	e.mu.Lock()
	cs, occ, opts := e.mu.c.Stats(), e.mu.c.Occupancy(), e.mu.c.Options()
	e.mu.Unlock()
	ram := ramStats(cs, occ)
	ram.BudgetBytes = opts.RAMBytes
	ram.NotKept = e.counters.notKept.Load()
	if fs, ok := e.RAMFiles(); ok {
		ram.Files = &fs
	}
	return Stats{
		RAM:           ram,
		Ring:          RingStats{occ.RingSegments, occ.RingBytes, opts.RingBytes, cs.RingPushes, cs.RingFull},
		SSD:           e.ssdStats(cs, occ, opts.BlockSize),
		Origin:        e.originStats(),
		Invalidations: cs.Invalidations,
		UptimeSeconds: e.now().Seconds(),
	}
}

func ramStats(cs tier.Stats, occ tier.Occupancy) RAMStats {
	return RAMStats{
		Hits: cs.RAMHits, Misses: cs.RAMMisses, HitBytes: cs.RAMHitBytes,
		Segments: occ.RAMSegments, Bytes: occ.RAMBytes,
		Inserts: cs.RAMInserts, Evictions: cs.RAMEvictions, EvictedUnsaved: cs.EvictedUnsaved,
	}
}

func (e *Engine) ssdStats(cs tier.Stats, occ tier.Occupancy, bs int64) SSDStats {
	s := e.ssdCounters(cs, occ, bs)
	if e.flash == nil {
		return s
	}
	fs := e.feed.Stats()
	s.Utilization = fs.Utilization
	s.WrittenByClass, s.DataClass, s.WriteRate = e.flash.Written(), e.flash.DataClass().String(), fs.WriteRate
	h, _ := e.Health()
	s.Health = &h
	hs := e.hits.Stats()
	s.HitMemory = &hs
	vs := e.flash.VerifyStats()
	s.Checksums = &vs
	s.FileHits = e.counters.fileHits.Load()
	s.FileHitsDeclined = e.counters.fileHitsDeclined.Load()
	s.FileReads = e.counters.fileReads.Load()
	s.FileReadsLate = e.counters.fileReadsLate.Load()
	s.FileReadErrors = e.counters.fileReadErrors.Load()
	ps := e.flash.PinStats()
	s.Pins = &ps

	s.SchedLagMs = float64(e.schedLag()) / float64(time.Millisecond)
	s.ProjectedLifetimeHours = tier.ProjectedLifetimeHours(e.flash.Device().Size(), e.opts.EnduranceCycles, fs.AverageWriteRate)
	return s
}

func (e *Engine) ssdCounters(cs tier.Stats, occ tier.Occupancy, bs int64) SSDStats {
	c := &e.counters
	// The core counts a flash hit at lookup; one the device did not serve
	// was a miss, answered by the capacity tier.
	unserved, unservedBytes := c.unservedHits.Load(), int64(c.unservedBytes.Load())
	if unserved > cs.SSDHits || unservedBytes > cs.SSDHitBytes { // cs was taken before a lookup these count
		unserved, unservedBytes = cs.SSDHits, cs.SSDHitBytes
	}
	return SSDStats{
		Enabled: e.flash != nil, Hits: cs.SSDHits - unserved, Misses: cs.SSDMisses + unserved, HitBytes: cs.SSDHitBytes - unservedBytes,
		Segments: occ.SSDSegments, BlockSize: bs, Blocks: occ.DataBlocks,
		BlocksUsed: occ.SSDBlocks, BlocksFree: occ.FreeBlocks,
		BlocksWritten: cs.BlocksWritten, BytesWritten: cs.BytesWritten, PaddingBytes: cs.PaddingBytes,
		SegmentsWritten: cs.SegmentsWritten, EvictedSegments: cs.SSDEvictedSegments,
		AdmissionAccepts: cs.AdmissionAccepts, AdmissionRejects: cs.AdmissionRejects,
		Reads: c.flashReads.Load(), ReadBytes: c.flashReadBytes.Load(), ReadErrors: c.flashReadErrors.Load(),
		Dropped: cs.SSDDropped, WriteErrors: cs.WriteErrors,
		RecoveredSegments: e.recovery.Segments, RecoveredBytes: e.recovery.Bytes,
		RecoveryCorrupt: e.recovery.CorruptRecords, RecoveryOrphans: e.recovery.OrphanRecords,
	}
}

func (e *Engine) originStats() OriginStats {
	c := &e.counters
	return OriginStats{
		Reads: c.originReads.Load(), Bytes: c.originBytes.Load(), Errors: c.originErrors.Load(), Coalesced: c.coalesced.Load(), Abandoned: c.abandoned.Load(), Waiting: e.waiting.Load(),
		Loads: len(e.loads), LoadWaits: c.loadWaits.Load(),
	}
}
