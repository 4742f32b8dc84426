package streamsim

import "time"

// opQueue is a thread's ops decided but not yet issued.
type opQueue struct{ ops []Op }

// pop returns the next queued op.
func (q *opQueue) pop() (Op, bool) {
	if len(q.ops) == 0 {
		return Op{}, false
	}
	op := q.ops[0]
	q.ops = q.ops[1:]
	return op, true
}

func (q *opQueue) push(op Op) { q.ops = append(q.ops, op) }

// writes queues a write of each extent in class; work and done go with
// the last one.
func (q *opQueue) writes(ext []extent, c Class, work int64, done func(time.Duration)) {
	for i, e := range ext {
		op := Op{Kind: opWrite, Off: e.off, Len: e.n, Class: c}
		if i == len(ext)-1 {
			op.Work, op.Done = work, done
		}
		q.push(op)
	}
}

// reads queues a read of each extent.
func (q *opQueue) reads(ext []extent) {
	for _, e := range ext {
		q.push(Op{Kind: opRead, Off: e.off, Len: e.n})
	}
}

// trims queues a trim of each extent.
func (q *opQueue) trims(ext []extent) {
	for _, e := range ext {
		q.push(Op{Kind: opTrim, Off: e.off, Len: e.n})
	}
}

// fileRange maps bytes [off, off+n) of f to the drive.
func fileRange(f *file, off, n int64) []extent {
	var out []extent
	pos := int64(0)
	for _, e := range f.extents {
		if n <= 0 {
			break
		}
		if off < pos+e.n {
			skip := max(off-pos, 0)
			k := min(e.n-skip, n)
			out = append(out, extent{e.off + skip, k})
			off += k
			n -= k
		}
		pos += e.n
	}
	return out
}

// ready is the answer of a thread that has op to issue.
func ready(op Op) (Op, status, time.Duration) { return op, Ready, 0 }

// blocked is the answer of a thread waiting for another.
func blocked() (Op, status, time.Duration) { return Op{}, Blocked, 0 }

// waitUntil is the answer of a thread held back until t.
func waitUntil(t time.Duration) (Op, status, time.Duration) { return Op{}, wait, t }

// seqReader reads a list of files front to back.
type seqReader struct {
	files  []*file
	fi, ei int   // current file and extent
	skip   int64 // bytes of the current extent already read
}

// next returns the drive extents of the next n bytes (fewer at the end).
func (r *seqReader) next(n int64) []extent {
	var out []extent
	for n > 0 && r.fi < len(r.files) {
		ext := r.files[r.fi].extents
		if r.ei >= len(ext) {
			r.fi, r.ei, r.skip = r.fi+1, 0, 0
			continue
		}
		e := ext[r.ei]
		k := min(e.n-r.skip, n)
		out = append(out, extent{e.off + r.skip, k})
		n -= k
		if r.skip += k; r.skip == e.n {
			r.ei, r.skip = r.ei+1, 0
		}
	}
	return out
}
