package device

import (
	"fmt"
	"math/bits"
	"sync"
)

// memChunk is the allocation unit of a Mem device: a chunk is allocated on
// its first write and freed when a trim covers it, so a large device that is
// mostly unwritten costs little.
const memChunk = 1 << 20

// maxMemAlign bounds the alignment of a Mem device.
const maxMemAlign = 1 << 30

// A Mem is an in-memory Device. It reads zeros where nothing was written,
// Trim makes a range read zeros again, and it counts the bytes written in
// each lifetime class. It is safe for concurrent use.
type Mem struct {
	size  int64
	align int

	mu struct {
		// RWMutex protects everything below; readers share it.
		sync.RWMutex
		chunks   map[int64][]byte // chunk index -> bytes; absent reads zeros
		lifetime Lifetime
		written  [LifetimeExtreme + 1]int64 // bytes written per class
		writes   int64
		closed   bool
	}
}

var _ Device = (*Mem)(nil)

// NewMem returns a zero-filled in-memory device of size bytes with the
// given alignment. An alignment that is not a power of two is rounded up to
// one, and clamped to [1, 1 GiB]; size is rounded down to the alignment, and a negative
// size is 0.
func NewMem(size int64, align int) *Mem {
	align = 1 << bits.Len(uint(min(max(align, 1), maxMemAlign)-1))
	m := &Mem{size: AlignDown(max(size, 0), align), align: align}
	m.mu.chunks = make(map[int64][]byte)
	return m
}

// Size returns the size in bytes.
func (m *Mem) Size() int64 { return m.size }

// Alignment returns the I/O granularity in bytes.
func (m *Mem) Alignment() int { return m.align }

// ReadAt reads len(p) bytes at off.
func (m *Mem) ReadAt(p []byte, off int64) (int, error) {
	if err := CheckAligned(off, int64(len(p)), m.align, m.size); err != nil {
		return 0, err
	}
	m.mu.RLock()
	defer m.mu.RUnlock()
	if m.mu.closed {
		return 0, ErrClosed
	}
	m.forPieces(off, int64(len(p)), func(idx, within, buf, l int64) {
		if c := m.mu.chunks[idx]; c != nil {
			copy(p[buf:buf+l], c[within:within+l])
		} else {
			clear(p[buf : buf+l])
		}
	})
	return len(p), nil
}

// forPieces splits [off, off+n) at chunk boundaries and calls fn with each
// piece's chunk index, offset within the chunk, offset from off and length.
func (m *Mem) forPieces(off, n int64, fn func(idx, within, buf, l int64)) {
	for done := int64(0); done < n; {
		pos := off + done
		within := pos % memChunk
		l := min(memChunk-within, n-done)
		fn(pos/memChunk, within, done, l)
		done += l
	}
}

// WriteAt writes len(p) bytes at off, counting them under the lifetime
// class in effect.
func (m *Mem) WriteAt(p []byte, off int64) (int, error) {
	if err := CheckAligned(off, int64(len(p)), m.align, m.size); err != nil {
		return 0, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.mu.closed {
		return 0, ErrClosed
	}
	m.storeLocked(p, off)
	m.mu.written[m.mu.lifetime] += int64(len(p))
	m.mu.writes++
	return len(p), nil
}

// storeLocked copies p to off, allocating chunks as needed.
func (m *Mem) storeLocked(p []byte, off int64) {
	m.forPieces(off, int64(len(p)), func(idx, within, buf, l int64) {
		c := m.mu.chunks[idx]
		if c == nil {
			c = make([]byte, min(memChunk, m.size-idx*memChunk))
			m.mu.chunks[idx] = c
		}
		copy(c[within:within+l], p[buf:buf+l])
	})
}

// zeroLocked makes [off, off+n) read zeros, freeing chunks it covers.
func (m *Mem) zeroLocked(off, n int64) {
	m.forPieces(off, n, func(idx, within, _, l int64) {
		c := m.mu.chunks[idx]
		if int(l) == len(c) {
			delete(m.mu.chunks, idx)
		} else if c != nil {
			clear(c[within : within+l])
		}
	})
}

// Sync does nothing: a Mem holds no volatile state. See Crashable for a
// device whose unsynced writes can be lost.
func (m *Mem) Sync() error {
	m.mu.RLock()
	defer m.mu.RUnlock()
	if m.mu.closed {
		return ErrClosed
	}
	return nil
}

// Trim makes [off, off+n) read zeros.
func (m *Mem) Trim(off, n int64) error {
	if err := CheckAligned(off, n, m.align, m.size); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.mu.closed {
		return ErrClosed
	}
	m.zeroLocked(off, n)
	return nil
}

// SetLifetime sets the class that later writes are counted under.
func (m *Mem) SetLifetime(l Lifetime) error {
	if l > LifetimeExtreme {
		return fmt.Errorf("%w: %w: lifetime class %d", ErrHintUnsupported, ErrInvalid, uint64(l))
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.mu.closed {
		return ErrClosed
	}
	m.mu.lifetime = l
	return nil
}

// BytesWritten returns the number of bytes written while l was in effect.
func (m *Mem) BytesWritten(l Lifetime) int64 {
	if l > LifetimeExtreme {
		return 0
	}
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.mu.written[l]
}

// Writes returns the number of successful WriteAt calls.
func (m *Mem) Writes() int64 {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.mu.writes
}

// allocated returns the bytes of memory holding data.
func (m *Mem) allocated() int64 {
	m.mu.RLock()
	defer m.mu.RUnlock()
	var n int64
	for _, c := range m.mu.chunks {
		n += int64(len(c))
	}
	return n
}

// clone returns an open copy of m's contents, with fresh counters.
func (m *Mem) clone() *Mem {
	c := NewMem(m.size, m.align)
	m.mu.RLock()
	defer m.mu.RUnlock()
	for idx, b := range m.mu.chunks {
		c.mu.chunks[idx] = append([]byte(nil), b...)
	}
	return c
}

// Close releases the memory. Later calls return ErrClosed.
func (m *Mem) Close() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.mu.closed {
		return ErrClosed
	}
	m.mu.closed = true
	m.mu.chunks = nil
	return nil
}
