package files

import (
	"context"
	"time"
)

// copyJob is a file being copied to flash, piece by piece.
type copyJob struct {
	id     string
	meta   Meta
	next   int // next piece to stage
	pieces int // -1 until stage has read the version to copy
	// pending is piece next, read but not staged: the ring was full.
	pending []byte
}

// planPeriod is how often the copier asks the LFU for a copy when nothing
// pokes it (a request, a block written).
const planPeriod = 500 * time.Millisecond

// copier plans copies with the LFU and stages their pieces into the ring,
// off the request path; the feed runs it and writes what it staged (reads
// first). It returns the number of pieces staged.
func (t *Tier) copier() int {
	t.plan()
	return t.stageAll()
}

// plan asks the LFU for a copy, frees the flash of its victims, and starts
// the copies whose space is free.
func (t *Tier) plan() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if cp, ok := t.mu.lfu.Plan(t.now()); ok {
		for _, v := range cp.Freed {
			t.dropLocked(v)
		}
	}
	for {
		id, _, ok := t.mu.lfu.Ready()
		if !ok {
			return
		}
		// The version is read by stage, off the lock: a bucket is asked.
		t.mu.copying[id] = &copyJob{id: id, pieces: -1}
	}
}

// dropLocked forgets the flash copy of file id: the version that was
// copied, whatever the file is now; pieces still on their way are dropped
// too, so their blocks are not written.
func (t *Tier) dropLocked(id string) {
	m, ok := t.mu.onFlash[id]
	if !ok {
		return
	}
	delete(t.mu.onFlash, id)
	t.mu.core.Discard(copyPrefix(id, m))
	t.stats.evicted.Add(1)
}

// stageAll stages the pieces of every running copy that fit in the ring,
// marks finished copies installed, and returns the number of pieces
// staged.
func (t *Tier) stageAll() int {
	t.mu.Lock()
	jobs := make([]*copyJob, 0, len(t.mu.copying))
	for _, j := range t.mu.copying {
		jobs = append(jobs, j)
	}
	t.mu.Unlock()
	n := 0
	for _, j := range jobs {
		n += t.stage(j)
		t.finish(j)
	}
	return n
}

// stage reads pieces from the capacity tier and queues them for flash
// until the ring is full, and returns how many it queued.
func (t *Tier) stage(j *copyJob) int {
	h, err := t.cap.open(context.Background(), j.id)
	if err != nil {
		t.abort(j) // gone, or the bucket fails: the LFU may plan it again
		return 0
	}
	defer h.Close()
	if j.pieces < 0 && !t.begin(j, h) {
		return 0
	}
	if m := t.metaOf(context.Background(), j.id, h); !sameVersion(m, j.meta) {
		t.abort(j) // replaced since the copy began
		return 0
	}
	first := j.next
	for j.next < j.pieces {
		buf := j.pending
		if buf == nil {
			if buf, err = t.piece(h, j.id, j.meta, j.next); err != nil {
				t.log.Warn("reading a file to copy it to flash", "file", j.id, "err", err)
				t.abort(j)
				return 0
			}
		}
		t.mu.Lock()
		ok := t.mu.core.Stage(pieceKey(j.id, j.meta, j.next), int64(len(buf)), buf, 1)
		t.mu.Unlock()
		if !ok {
			j.pending = buf // ring full: the feed drains it first
			break
		}
		j.pending = nil
		j.next++
	}
	return j.next - first
}

// begin sets the version a planned copy copies, the one h reads, unless
// the copy was aborted meanwhile.
func (t *Tier) begin(j *copyJob, h handle) bool {
	m := t.metaOf(context.Background(), j.id, h)
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.mu.copying[j.id] != j {
		return false
	}
	j.meta, j.pieces = m, t.pieces(j.id, m)
	t.mu.onFlash[j.id] = m
	return true
}

// finish marks a copy installed once every piece is on flash, or aborts
// it when a piece was lost (a failed write, an eviction).
func (t *Tier) finish(j *copyJob) {
	if j.pieces < 0 || j.next < j.pieces {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.mu.copying[j.id] != j {
		return // aborted
	}
	pending, lost := 0, false
	for k := range j.pieces {
		key := pieceKey(j.id, j.meta, k)
		if _, ok := t.mu.core.FlashSegment(key); ok {
			continue
		}
		if t.mu.core.OnTheWay(key) {
			pending++
		} else {
			lost = true
		}
	}
	switch {
	case lost:
		t.abortLocked(j)
	case pending == 0:
		t.mu.lfu.Installed(j.id)
		t.stats.installed.Add(1)
		delete(t.mu.copying, j.id)
	}
}

// abort gives up a copy: its pieces are dropped wherever they are.
func (t *Tier) abort(j *copyJob) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.abortLocked(j)
}

func (t *Tier) abortLocked(j *copyJob) {
	if t.mu.copying[j.id] != j {
		return
	}
	t.dropLocked(j.id)
	t.mu.lfu.Abort(j.id)
	delete(t.mu.copying, j.id)
}
