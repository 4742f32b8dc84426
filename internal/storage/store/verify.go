package store

import (
	"slices"
	"sync"
	"sync/atomic"

	"github.com/strata-media/strata/internal/core/tier"
)

// marks are the records whose data checksum need not be computed again
// (decision 0030): a record's CRC32C protects against a crash (a torn or
// never-completed block write) and against reading a block rewritten
// since the lookup. Bytes this process wrote, or verified once since it
// started, are the device's to keep (its own ECC's job): while their
// block keeps the same generation, a read of them checks the record's
// header (key, generations, sequence, length: its own small checksum)
// and not the data's. A new process starts with nothing marked, so that
// what a crash left on flash is verified on its first read.
//
// Every block rewrite (WriteBlock) first clears the block's marks, and
// only then writes; a read checks the marks after its bytes are in, so a
// read that raced a rewrite is never taken as verified. A record verified
// by a read is marked only if its block was not rewritten meanwhile.
type marks struct {
	mu sync.Mutex // serializes marking a record against a rewrite of its block
	// cur is, per block, the generation this process last began writing
	// to it (0: none since start); whole the generation whose write
	// completed, all of whose records are therefore verified.
	cur, whole []atomic.Uint64
	// recs are, per block, the records verified by a read since start,
	// all of one generation (copy on write, under mu).
	recs []atomic.Pointer[recMarks]

	checked, skipped atomic.Uint64 // reads whose data was verified, and that were not
}

type recMarks struct {
	gen  uint64
	offs []uint32 // sorted record offsets within the block
}

func newMarks(blocks int) *marks {
	return &marks{
		cur:   make([]atomic.Uint64, blocks),
		whole: make([]atomic.Uint64, blocks),
		recs:  make([]atomic.Pointer[recMarks], blocks),
	}
}

// verified reports whether chunk ch's record is known to hold what was
// written, so that its data's checksum need not be computed.
func (m *marks) verified(ch tier.Chunk) bool {
	if m == nil || int(ch.Block) >= len(m.whole) {
		return false
	}
	if m.whole[ch.Block].Load() == ch.Gen {
		return true
	}
	r := m.recs[ch.Block].Load()
	if r == nil || r.gen != ch.Gen {
		return false
	}
	_, ok := slices.BinarySearch(r.offs, ch.Off)
	return ok
}

// mark records that chunk ch's record verified, unless its block was
// rewritten (or began to be) since: a rewrite by this process sets cur to
// a new generation first.
func (m *marks) mark(ch tier.Chunk) {
	if m == nil || int(ch.Block) >= len(m.whole) {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	b := ch.Block
	if c := m.cur[b].Load(); c != 0 && c != ch.Gen {
		return
	}
	old := m.recs[b].Load()
	if old != nil && old.gen == ch.Gen {
		i, ok := slices.BinarySearch(old.offs, ch.Off)
		if ok {
			return
		}
		m.recs[b].Store(&recMarks{gen: ch.Gen, offs: slices.Insert(slices.Clone(old.offs), i, ch.Off)})
		return
	}
	m.recs[b].Store(&recMarks{gen: ch.Gen, offs: []uint32{ch.Off}})
}

// rewriting clears block b's marks before generation gen is written to
// it.
func (m *marks) rewriting(b uint32, gen uint64) {
	if m == nil || int(b) >= len(m.whole) {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.cur[b].Store(gen)
	m.whole[b].Store(0)
	m.recs[b].Store(nil)
}

// written marks every record of block b's generation gen, whose write
// completed.
func (m *marks) written(b uint32, gen uint64) {
	if m == nil || int(b) >= len(m.whole) {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.cur[b].Load() == gen {
		m.whole[b].Store(gen)
	}
}

// forget clears every mark: every record is verified again on its next
// read.
func (m *marks) forget() {
	if m == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for b := range m.whole {
		m.whole[b].Store(0)
		m.recs[b].Store(nil)
	}
}

// count returns how many records are marked one by one, and how many
// blocks whole (for tests and stats).
func (m *marks) count() (records, blocks int) {
	if m == nil {
		return 0, 0
	}
	for b := range m.whole {
		if m.whole[b].Load() != 0 {
			blocks++
		}
		if r := m.recs[b].Load(); r != nil {
			records += len(r.offs)
		}
	}
	return records, blocks
}

// VerifyStats counts flash chunk reads by whether their data checksum was
// computed.
type VerifyStats struct {
	// Checked counts chunk reads whose data was verified against its
	// checksum (first reads since start); Skipped those whose record was
	// already verified (decision 0030).
	Checked uint64 `json:"checked"`
	Skipped uint64 `json:"skipped"`
}

// VerifyStats returns the counters of verified and skipped checksums.
func (f *Flash) VerifyStats() VerifyStats {
	if f.marks == nil {
		return VerifyStats{}
	}
	return VerifyStats{Checked: f.marks.checked.Load(), Skipped: f.marks.skipped.Load()}
}

// Verified reports whether chunk ch's record is known to hold what was
// written: a read of it need not compute its data's checksum, and its
// bytes may be sent straight from the device (PinHit).
func (f *Flash) Verified(ch tier.Chunk) bool { return f.marks.verified(ch) }

// ForgetVerified clears every mark, so that every record is verified
// again on its next read.
func (f *Flash) ForgetVerified() { f.marks.forget() }
