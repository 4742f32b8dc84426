package files

import (
	"io"
	"sync"

	"golang.org/x/sync/singleflight"

	"github.com/strata-media/strata/internal/core/tier"
)

// ramPieces is the RAM tier of files read from a bucket: whole pieces
// (the unit of a flash copy, one block each), evicted LRU by the core's
// RAM pool, each fetched by one ranged GET however many streams ask at
// once.
type ramPieces struct {
	mu    sync.Mutex // protects pool
	pool  *tier.RAMPool
	fetch singleflight.Group
}

func newRAMPieces(budget int64) *ramPieces {
	return &ramPieces{pool: tier.NewRAMPool(budget, tier.NewLRU())}
}

func (r *ramPieces) get(key string) ([]byte, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	e, ok := r.pool.Get(key)
	if !ok {
		return nil, false
	}
	return e.Data, true
}

func (r *ramPieces) put(key string, data []byte) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.pool.Insert(&tier.Entry{Key: key, Size: int64(len(data)), Data: data})
}

// used is the bytes the pool holds.
func (r *ramPieces) used() int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.pool.Used()
}

// piece returns piece k of the version m of file id, read through h:
// from the RAM pool of a bucket's files, else with one read of the whole
// piece (coalesced, and kept in the pool, for a bucket).
func (t *Tier) piece(h handle, id string, m Meta, k int) ([]byte, error) {
	key := pieceKey(id, m, k)
	if t.ram == nil {
		return t.readPiece(h, id, m, k)
	}
	if data, ok := t.ram.get(key); ok {
		t.stats.ramHits.Add(1)
		return data, nil
	}
	v, err, _ := t.ram.fetch.Do(key, func() (any, error) {
		data, err := t.readPiece(h, id, m, k)
		if err == nil {
			t.ram.put(key, data)
		}
		return data, err
	})
	if err != nil {
		return nil, err
	}
	return v.([]byte), nil
}

// readPiece reads piece k of version m of file id through h.
func (t *Tier) readPiece(h handle, id string, m Meta, k int) ([]byte, error) {
	ps := t.pieceSize(id)
	buf := make([]byte, min(ps, m.Size-int64(k)*ps))
	n, err := h.ReadAt(buf, int64(k)*ps)
	if n == len(buf) {
		return buf, nil
	}
	if err == nil || err == io.EOF {
		err = io.ErrUnexpectedEOF // the file is shorter than its version says
	}
	return nil, err
}
