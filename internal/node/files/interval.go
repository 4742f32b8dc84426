package files

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

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
// this keeps the pieces. A stream (ivStream) is what the paper calls one:
// a viewer playing a file from its first byte. It is one GET from byte 0,
// or, when the client names a session (the X-Strata-Session header or the
// session query parameter), the GETs of that session for the file, each
// Range starting where the previous one stopped (a player fetching the
// file in chunks). A stream arrives when its first request is admitted on
// the disk; it ends at the end of the file (End), or when its request
// stops before (Leave), or, with a session, when no request continues it
// within SessionIdle. Other requests (a Range elsewhere) are served
// outside interval caching.
type intervals struct {
	core     *vod.IntervalCache[string] // keyed by file id and version
	block    int64
	next     vod.StreamID
	streams  map[vod.StreamID]*ivStream // streams still playing
	sessions map[string]*ivStream       // by session and file version
	held     int64                      // bytes of pieces kept for followers
	peak     int64                      // the most held at once
	hits     uint64                     // pieces followers read from RAM
	back     uint64                     // followers sent back to the disk without disk bandwidth
	cont     uint64                     // requests that continued a session's stream
}

// SessionIdle is how long a session's stream waits for its next request
// before it ends (Leave): a player's pause between chunks is shorter.
const SessionIdle = 30 * time.Second

// ivStream is one stream of interval caching; guarded by Tier.mu.
type ivStream struct {
	id      vod.StreamID
	session string    // key in sessions; "" without a session
	cur     *stream   // the request reading now; nil between requests
	next    int64     // where the last request stopped
	buf     *ivBuffer // the buffer this stream follows with, if it has one
	feeds   *ivBuffer // the buffer this stream's reads fill, if any
	idle    *time.Timer
	ended   bool // a request still reading reads outside interval caching
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
	return &intervals{core: c, block: block, streams: make(map[vod.StreamID]*ivStream),
		sessions: make(map[string]*ivStream)}, nil
}

// sessionOf returns the session r names (X-Strata-Session, else the
// session query parameter), "" for none, and false for a malformed one.
func sessionOf(r *http.Request) (string, bool) {
	id := r.Header.Get("X-Strata-Session")
	if id == "" {
		id = r.URL.Query().Get("session")
	}
	if len(id) > 128 {
		return "", false
	}
	for _, c := range []byte(id) {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("._~-", c) >= 0) {
			return "", false
		}
	}
	return id, true
}

// rangeStart is the first byte r reads: 0 without a Range, N for one
// range "bytes=N-" or "bytes=N-M"; -1 for anything else (a suffix range,
// several ranges), which interval caching leaves alone.
func rangeStart(r *http.Request) int64 {
	rng := r.Header.Get("Range")
	if rng == "" {
		return 0
	}
	spec, ok := strings.CutPrefix(rng, "bytes=")
	if !ok || strings.Contains(spec, ",") {
		return -1
	}
	first, _, ok := strings.Cut(spec, "-")
	n, err := strconv.ParseInt(strings.TrimSpace(first), 10, 64)
	if !ok || err != nil || n < 0 {
		return -1
	}
	return n
}

// arriveLocked joins request s, admitted on the disk and reading from
// byte start, to interval caching: it continues its session's stream if
// it starts where that stream's last request stopped, else it starts a
// stream if it reads from the first byte.
func (t *Tier) arriveLocked(s *stream, session string, start int64) {
	iv := t.mu.iv
	key := ""
	if session != "" {
		key = session + "\x00" + copyPrefix(s.id, s.meta)
		if v := iv.sessions[key]; v != nil && v.cur == nil && start == v.next {
			v.idle.Stop()
			v.cur, s.iv, s.ivAt = s, v, -1
			iv.cont++
			if iv.core.OnRAM(v.id) { // its buffer serves it: no disk
				t.mu.adm.Disk.Release(s.meta.ByteRate)
				s.onRAM = true
			}
			return
		}
	}
	if start != 0 {
		return
	}
	if old := iv.sessions[key]; key != "" && old != nil {
		t.endStreamLocked(old, false) // the session starts the file again
	}
	iv.next++
	v := &ivStream{id: iv.next, session: key, cur: s}
	if _, err := iv.core.Arrive(t.now(), v.id, copyPrefix(s.id, s.meta), s.meta.ByteRate,
		int(min(t.mu.adm.Disk.Free()/max(s.meta.ByteRate, 1), 1<<30))); err != nil {
		t.log.Error("files: interval cache", "err", err) // a broken invariant: serve outside it
		return
	}
	s.iv, s.ivAt = v, -1
	iv.streams[v.id] = v
	if key != "" {
		iv.sessions[key] = v
	}
	t.syncIntervalsLocked()
}

// requestEndedLocked ends request s of a stream, which stopped at pos: the
// stream ends with it at the end of the file or without a session, and
// otherwise waits SessionIdle for the session's next request.
func (t *Tier) requestEndedLocked(s *stream, whole bool, pos int64) {
	v := s.iv
	if v.cur != s || v.ended {
		return
	}
	v.cur = nil
	if whole || v.session == "" {
		t.endStreamLocked(v, whole)
		return
	}
	v.next = pos
	v.idle = time.AfterFunc(SessionIdle, func() {
		t.mu.Lock()
		defer t.mu.Unlock()
		if v.cur == nil && t.mu.iv.streams[v.id] == v {
			t.endStreamLocked(v, false)
		}
	})
}

// endStreamLocked ends stream v: End if it played the whole file, Leave
// if it stopped before.
func (t *Tier) endStreamLocked(v *ivStream, whole bool) {
	iv := t.mu.iv
	end := iv.core.Leave
	if whole {
		end = iv.core.End
	}
	if _, err := end(t.now(), v.id); err != nil {
		t.log.Error("files: interval cache", "err", err)
	}
	if v.idle != nil {
		v.idle.Stop()
	}
	v.ended, v.feeds = true, nil
	delete(iv.streams, v.id)
	if v.session != "" && iv.sessions[v.session] == v {
		delete(iv.sessions, v.session)
	}
	t.dropBufferLocked(v)
	t.syncIntervalsLocked()
}

// syncIntervalsLocked makes the pieces kept follow the core's decisions:
// a follower whose interval holds a buffer gets one (as many pieces as its
// blocks), one whose buffer was preempted or lost its preceder drops its
// pieces and, if its request read from RAM, takes disk bandwidth again;
// each preceder still reading learns which buffer it fills.
func (t *Tier) syncIntervalsLocked() {
	iv := t.mu.iv
	for _, v := range iv.streams {
		v.feeds = nil
	}
	for id, v := range iv.streams {
		if s := v.cur; s != nil && s.onRAM && !iv.core.OnRAM(id) {
			s.onRAM = false
			if !t.mu.adm.Disk.Reserve(s.meta.ByteRate) {
				s.noDisk = true // served on: it has started (counted)
				iv.back++
			}
		}
		b, ok := iv.core.Buffer(id)
		if !ok {
			t.dropBufferLocked(v)
			continue
		}
		if v.buf == nil || v.buf.pre != b.Preceder {
			t.dropBufferLocked(v)
			at := -1
			if v.cur != nil {
				at = v.cur.ivAt
			}
			v.buf = &ivBuffer{pre: b.Preceder, at: at, pieces: make(map[int][]byte)}
		}
		v.buf.limit = b.Blocks
		if p := iv.streams[b.Preceder]; b.Writing && p != nil {
			p.feeds = v.buf
		}
	}
}

func (t *Tier) dropBufferLocked(v *ivStream) {
	if v.buf == nil {
		return
	}
	for _, d := range v.buf.pieces {
		t.mu.iv.held -= int64(len(d))
	}
	v.buf = nil
}

// bufferedPiece returns piece k of registered request s from its stream's
// buffer, forgetting the pieces before it, and moves s to RAM (releasing
// its disk bandwidth) once the core says its stream has reached its
// buffer. It also says whether the stream fills a follower's buffer, and
// so must read whole pieces.
func (t *Tier) bufferedPiece(s *stream, k int) (data []byte, feeds bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	iv, v := t.mu.iv, s.iv
	if v.ended {
		return nil, false
	}
	feeds = v.feeds != nil
	b := v.buf
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
	if !s.onRAM && !s.noDisk && (iv.core.Switch(t.now(), v.id) || iv.core.OnRAM(v.id)) {
		t.mu.adm.Disk.Release(s.meta.ByteRate)
		s.onRAM = true
	}
	return data, feeds
}

// keepPiece puts piece k, which s read, into the buffer its stream fills,
// if the follower has not passed it and the buffer has room: the RAM held
// never exceeds the blocks the core gave the intervals.
func (t *Tier) keepPiece(s *stream, k int, data []byte) {
	t.mu.Lock()
	defer t.mu.Unlock()
	b := s.iv.feeds
	if b == nil || k <= b.at || b.pieces[k] != nil || int64(len(b.pieces)) >= b.limit || int64(len(data)) > t.mu.iv.block {
		return
	}
	b.pieces[k] = data
	iv := t.mu.iv
	iv.held += int64(len(data))
	iv.peak = max(iv.peak, iv.held)
}

// readInterval reads for a registered request on the disk: a piece its
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
	// Continued is the requests that continued a session's stream.
	Continued uint64 `json:"session_requests_continued"`
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
		BackWithoutDisk: iv.back, Continued: iv.cont}
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
