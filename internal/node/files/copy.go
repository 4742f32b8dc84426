package files

import (
	"os"
	"time"
)

// copyJob is a file being copied to flash, piece by piece.
type copyJob struct {
	id     string
	meta   Meta
	next   int // next piece to stage
	pieces int
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
		m, err := t.readMeta(id)
		if err != nil {
			t.mu.lfu.Abort(id)
			continue
		}
		t.mu.copying[id] = &copyJob{id: id, meta: m, pieces: t.pieces(id, m)}
		t.mu.onFlash[id] = m
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

// stage reads pieces from the disk and queues them for flash until the
// ring is full, and returns how many it queued.
func (t *Tier) stage(j *copyJob) int {
	f, err := os.Open(t.filePath(j.id))
	if err != nil {
		return 0
	}
	defer f.Close()
	ps := t.pieceSize(j.id)
	if st, err := f.Stat(); err != nil || st.Size() != j.meta.Size || !st.ModTime().Equal(j.meta.Modified) {
		t.abort(j) // replaced since the copy was planned
		return 0
	}
	first := j.next
	for j.next < j.pieces {
		n := min(ps, j.meta.Size-int64(j.next)*ps)
		buf := make([]byte, n)
		if _, err := f.ReadAt(buf, int64(j.next)*ps); err != nil {
			t.log.Warn("reading a file to copy it to flash", "file", j.id, "err", err)
			t.abort(j)
			return 0
		}
		t.mu.Lock()
		ok := t.mu.core.Stage(pieceKey(j.id, j.meta, j.next), n, buf, 1)
		t.mu.Unlock()
		if !ok {
			break // ring full: the feed drains it first
		}
		j.next++
	}
	return j.next - first
}

// finish marks a copy installed once every piece is on flash, or aborts
// it when a piece was lost (a failed write, an eviction).
func (t *Tier) finish(j *copyJob) {
	if j.next < j.pieces {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
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
