package files

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/strata-media/strata/internal/core/vod"
)

// Mechanism is what serves streams besides the capacity disk (the VoD
// paper compares the two): file-level LFU copies on flash, interval
// caching in RAM, or both.
type Mechanism string

// The mechanisms.
const (
	// MechanismLFU serves popular files from flash copies chosen by
	// file-level LFU (Algorithm 2); RAM holds no intervals.
	MechanismLFU Mechanism = "lfu"
	// MechanismInterval keeps, in RAM, the pieces a stream reads until
	// the next stream of the same file reads them (Dan and Sitaram,
	// Algorithm 1); no flash copies are made or read.
	MechanismInterval Mechanism = "interval"
	// MechanismBoth does both: a file with a flash copy is served from
	// flash, and streams admitted on the disk form intervals in RAM.
	MechanismBoth Mechanism = "both"
)

// DefaultMechanism is the mechanism of a tier that names none: both, which
// the live comparison (BENCHMARKS.md, whole-file sessions) found serves
// the most streams within the same RAM, flash and disk budgets.
const DefaultMechanism = MechanismBoth

// ParseMechanism reads "lfu", "interval" or "both"; empty is the default.
func ParseMechanism(s string) (Mechanism, error) {
	switch m := Mechanism(strings.ToLower(strings.TrimSpace(s))); m {
	case "":
		return DefaultMechanism, nil
	case MechanismLFU, MechanismInterval, MechanismBoth:
		return m, nil
	}
	return "", fmt.Errorf("files: unknown mechanism %q (lfu, interval or both)", s)
}

func (m Mechanism) intervals() bool { return m == MechanismInterval || m == MechanismBoth }
func (m Mechanism) lfu() bool       { return m == MechanismLFU || m == MechanismBoth }

// intervals is the live side of interval caching: core decides which
// intervals hold RAM (smallest first, within the budget, time passed in);
// this keeps the pieces. A stream is one GET of a file from its first
// byte, identified by its response: it arrives when admitted on the disk
// and ends when the response does, at the end of the file (End) or before
// it (Leave). A request for a range that does not start at 0 is served
// as before, outside interval caching: its position is not where the
// paper's stream model puts it.
type intervals struct {
	core    *vod.IntervalCache[string] // keyed by file id and version
	block   int64
	next    vod.StreamID
	streams map[vod.StreamID]*stream // registered streams still playing
	held    int64                    // bytes of pieces kept for followers
	peak    int64                    // the most held at once
	hits    uint64                   // pieces followers read from RAM
	back    uint64                   // followers sent back to the disk without disk bandwidth
}

// ivBuffer is a follower's buffer: pieces its preceder read, kept until
// the follower reads them, at most limit at once.
type ivBuffer struct {
	pre    vod.StreamID
	limit  int64
	at     int // the follower's piece: pieces up to it are not kept
	pieces map[int][]byte
}

func newIntervals(ram, block int64) (*intervals, error) {
	c, err := vod.NewIntervalCache[string](vod.IntervalOptions{Capacity: ram, BlockSize: block, ExtraBlocks: 1})
	if err != nil {
		return nil, err
	}
	return &intervals{core: c, block: block, streams: make(map[vod.StreamID]*stream)}, nil
}

// fromStart reports whether r reads the file from its first byte: no
// Range, or one range beginning at 0.
func fromStart(r *http.Request) bool {
	rng := r.Header.Get("Range")
	return rng == "" || (strings.HasPrefix(rng, "bytes=0-") && !strings.Contains(rng, ","))
}

// arriveLocked registers a stream admitted on the disk with the interval
// cache.
func (t *Tier) arriveLocked(s *stream) {
	iv := t.mu.iv
	iv.next++
	s.ivID, s.ivAt = iv.next, -1
	rate := s.meta.Bitrate
	room := int(min(t.mu.adm.Disk.Free()/max(rate, 1), 1<<30))
	if _, err := iv.core.Arrive(t.now(), s.ivID, copyPrefix(s.id, s.meta), rate, room); err != nil {
		t.log.Error("files: interval cache", "err", err) // a broken invariant: serve outside it
		s.ivID = 0
		return
	}
	iv.streams[s.ivID] = s
	t.syncIntervalsLocked()
}

// endIntervalLocked ends registered stream s: End if it read the whole file,
// Leave if it stopped before.
func (t *Tier) endIntervalLocked(s *stream, whole bool) {
	iv := t.mu.iv
	end := iv.core.Leave
	if whole {
		end = iv.core.End
	}
	if _, err := end(t.now(), s.ivID); err != nil {
		t.log.Error("files: interval cache", "err", err)
	}
	delete(iv.streams, s.ivID)
	t.dropBufferLocked(s)
	t.syncIntervalsLocked()
}

// syncIntervalsLocked makes the pieces kept follow the core's decisions:
// a follower whose interval holds a buffer gets one (as many pieces as its
// blocks), one whose buffer was preempted or lost its preceder drops its
// pieces and, if it read from RAM, takes disk bandwidth again; each
// preceder still reading learns which buffer it fills.
func (t *Tier) syncIntervalsLocked() {
	iv := t.mu.iv
	for _, s := range iv.streams {
		s.feeds = nil
	}
	for id, s := range iv.streams {
		if s.onRAM && !iv.core.OnRAM(id) {
			s.onRAM = false
			if !t.mu.adm.Disk.Reserve(s.meta.Bitrate) {
				s.noDisk = true // served on: it has started (counted)
				iv.back++
			}
		}
		b, ok := iv.core.Buffer(id)
		if !ok {
			t.dropBufferLocked(s)
			continue
		}
		if s.buf == nil || s.buf.pre != b.Preceder {
			t.dropBufferLocked(s)
			s.buf = &ivBuffer{pre: b.Preceder, at: s.ivAt, pieces: make(map[int][]byte)}
		}
		s.buf.limit = b.Blocks
		if p := iv.streams[b.Preceder]; b.Writing && p != nil {
			p.feeds = s.buf
		}
	}
}

func (t *Tier) dropBufferLocked(s *stream) {
	if s.buf == nil {
		return
	}
	for _, d := range s.buf.pieces {
		t.mu.iv.held -= int64(len(d))
	}
	s.buf = nil
}

// bufferedPiece returns piece k of registered stream s from its buffer,
// forgetting the pieces before it, and moves s to RAM (releasing its disk
// bandwidth) once the core says it has reached its buffer. It also says
// whether s fills a follower's buffer, and so must read whole pieces.
func (t *Tier) bufferedPiece(s *stream, k int) (data []byte, feeds bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	iv := t.mu.iv
	feeds = s.feeds != nil
	b := s.buf
	if b == nil {
		return nil, feeds
	}
	b.at = k
	data = b.pieces[k]
	for j, d := range b.pieces {
		if j <= k {
			delete(b.pieces, j)
			iv.held -= int64(len(d))
		}
	}
	if data == nil {
		return nil, feeds
	}
	iv.hits++
	if !s.onRAM && !s.noDisk && iv.core.Switch(t.now(), s.ivID) {
		t.mu.adm.Disk.Release(s.meta.Bitrate)
		s.onRAM = true
	}
	return data, feeds
}

// keepPiece puts piece k, which s read, into the buffer s fills, if its
// follower has not passed it and the buffer has room: the RAM held never
// exceeds the blocks the core gave the intervals.
func (t *Tier) keepPiece(s *stream, k int, data []byte) {
	t.mu.Lock()
	defer t.mu.Unlock()
	b := s.feeds
	if b == nil || k <= b.at || b.pieces[k] != nil || int64(len(b.pieces)) >= b.limit || int64(len(data)) > t.mu.iv.block {
		return
	}
	b.pieces[k] = data
	iv := t.mu.iv
	iv.held += int64(len(data))
	iv.peak = max(iv.peak, iv.held)
}

// readInterval reads for a registered stream on the disk: a piece its
// buffer holds comes from RAM; a stream filling a follower's buffer (or
// reading a bucket) reads whole pieces and keeps them for the follower;
// any other read goes to the disk as it comes.
func (s *stream) readInterval(p []byte, off int64) (int, error) {
	t := s.t
	ps := t.pieceSize(s.id)
	k := int(off / ps)
	if k != s.ivAt {
		s.ivAt, s.piece, s.data = k, -1, nil
		data, feeds := t.bufferedPiece(s, k)
		s.fromRAM = data != nil
		if data == nil && (feeds || t.ram != nil) {
			d, err := t.piece(s.file, s.id, s.meta, k)
			if err != nil {
				return 0, err
			}
			data = d
		}
		if data != nil {
			s.piece, s.data = k, data
			t.keepPiece(s, k, data)
		}
	}
	if s.piece == k {
		n := copy(p, s.data[off-int64(k)*ps:])
		if s.fromRAM {
			t.stats.servedRAM.Add(uint64(n))
		} else {
			t.stats.servedDisk.Add(uint64(n))
		}
		return n, nil
	}
	n, err := s.readDisk(p, off)
	t.stats.servedDisk.Add(uint64(n))
	return n, err
}

// IntervalStats describe interval caching, under "intervals" in the
// tier's stats.
type IntervalStats struct {
	// CapacityBytes is the RAM the intervals may hold; HeldBytes what
	// their pieces hold now, PeakBytes the most they held at once.
	CapacityBytes int64 `json:"capacity_bytes"`
	HeldBytes     int64 `json:"held_bytes"`
	PeakBytes     int64 `json:"peak_bytes"`
	// Cached is the intervals holding RAM; RAMStreams the followers
	// reading from it, whose disk bandwidth is free for other streams.
	Cached     int `json:"cached"`
	RAMStreams int `json:"ram_streams"`
	// PieceHits is the pieces followers read from RAM.
	PieceHits uint64 `json:"piece_hits"`
	// Formed, Allocations, Preemptions and Switches are the core's counts.
	Formed      int64 `json:"formed"`
	Allocations int64 `json:"allocations"`
	Preemptions int64 `json:"preemptions"`
	Switches    int64 `json:"switches"`
	// BackWithoutDisk is followers sent back to the disk that found no
	// disk bandwidth (served on: they had started).
	BackWithoutDisk uint64 `json:"back_without_disk"`
}

func (t *Tier) intervalStatsLocked() *IntervalStats {
	iv := t.mu.iv
	if iv == nil {
		return nil
	}
	cs := iv.core.Stats()
	return &IntervalStats{CapacityBytes: t.intervalRAM(), HeldBytes: iv.held, PeakBytes: iv.peak,
		Cached: iv.core.CachedIntervals(), RAMStreams: iv.core.RAMStreams(), PieceHits: iv.hits,
		Formed: cs.Intervals, Allocations: cs.Allocations, Preemptions: cs.Preemptions, Switches: cs.Switches,
		BackWithoutDisk: iv.back}
}

// intervalRAM is the RAM interval caching may hold: the whole [files] ram
// budget for files in a directory (read through the page cache
// otherwise), half of it beside the pool of pieces of files in a bucket.
func (t *Tier) intervalRAM() int64 {
	if t.opts.Bucket != nil {
		return t.opts.RAMBytes / 2
	}
	return t.opts.RAMBytes
}
