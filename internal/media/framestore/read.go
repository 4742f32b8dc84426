package framestore

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"iter"
	"path/filepath"
	"sync/atomic"

	"github.com/strata-media/strata/internal/storage/device"
)

// Store is an open frame-grouped store. It is safe for concurrent use;
// each Frames iteration has its own buffers.
type Store struct {
	opts    Options
	blocks  device.Device
	index   device.Device
	hdr     header
	layout  indexLayout
	records []BlockRecord

	dataReads  atomic.Int64 // data blocks read
	indexReads atomic.Int64 // index blocks read
}

// ReadStats counts the block reads of a Store, every one S bytes.
type ReadStats struct {
	DataBlocks  int64
	IndexBlocks int64
}

// Open opens the store in dir, reading its header and block records.
func Open(dir string, opts Options) (*Store, error) {
	opts.EnsureDefaults()
	s := &Store{opts: opts}
	var err error
	if s.index, err = opts.OpenDevice(filepath.Join(dir, IndexFile), 0, true); err != nil {
		return nil, fmt.Errorf("framestore: %w", err)
	}
	if s.blocks, err = opts.OpenDevice(filepath.Join(dir, BlocksFile), 0, true); err != nil {
		s.index.Close()
		return nil, fmt.Errorf("framestore: %w", err)
	}
	if err := s.load(); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// Close releases the store's files.
func (s *Store) Close() error { return errors.Join(s.blocks.Close(), s.index.Close()) }

// load reads and checks the header and the block records.
func (s *Store) load() error {
	first := device.AlignedBuffer(4096, s.index.Alignment())
	if _, err := s.index.ReadAt(first, 0); err != nil {
		return fmt.Errorf("framestore: reading the header: %w", err)
	}
	h, err := decodeHeader(first)
	if err != nil {
		return err
	}
	s.hdr, s.layout = h, layoutOf(&h)
	if err := s.checkSizes(); err != nil {
		return err
	}
	s.indexReads.Add(1) // the header block, as a whole block would be read
	raw, err := s.readRegion(s.layout.recordStart, int64(h.Blocks)*BlockRecordSize, h.RecordsCRC)
	if err != nil {
		return fmt.Errorf("framestore: block records: %w", err)
	}
	s.records, err = decodeRecords(raw)
	return err
}

func (s *Store) checkSizes() error {
	bs := int64(s.hdr.BlockSize)
	if err := checkAlignment(s.blocks, int(bs)); err != nil {
		return err
	}
	if s.index.Size() < s.layout.total*bs || s.blocks.Size() < int64(s.hdr.Blocks)*bs {
		return fmt.Errorf("%w: files shorter than the header says (index %d, blocks %d bytes)",
			ErrCorrupt, s.index.Size(), s.blocks.Size())
	}
	return nil
}

// readRegion reads n bytes of the index starting at block first, one
// block per request, and checks their CRC-32C.
func (s *Store) readRegion(first, n int64, crc uint32) ([]byte, error) {
	bs := int64(s.hdr.BlockSize)
	buf := device.AlignedBuffer(int(bs), s.index.Alignment())
	out := make([]byte, 0, n)
	for off := int64(0); off < n; off += bs {
		if _, err := s.index.ReadAt(buf, (first*bs)+off); err != nil {
			return nil, err
		}
		s.indexReads.Add(1)
		out = append(out, buf[:min(bs, n-off)]...)
	}
	if crc32.Checksum(out, castagnoli) != crc {
		return nil, fmt.Errorf("%w: checksum", ErrCorrupt)
	}
	return out, nil
}

func decodeRecords(raw []byte) ([]BlockRecord, error) {
	recs := make([]BlockRecord, len(raw)/BlockRecordSize)
	for i := range recs {
		r, err := decodeBlockRecord(binary.BigEndian.Uint64(raw[i*BlockRecordSize:]))
		if err != nil {
			return nil, fmt.Errorf("block %d: %w", i, err)
		}
		recs[i] = r
	}
	return recs, nil
}

// BlockSize returns S, bytes.
func (s *Store) BlockSize() int { return int(s.hdr.BlockSize) }

// Timescale returns the ticks per second of decode times and offsets.
func (s *Store) Timescale() uint32 { return s.hdr.Timescale }

// EndTime returns the decode time of the end of the last picture.
func (s *Store) EndTime() uint64 { return s.hdr.EndTime }

// FrameCount returns the number of pictures in stream st.
func (s *Store) FrameCount(st Stream) int { return int(s.hdr.Frames[st]) }

// Records returns a copy of the block records, in block order.
func (s *Store) Records() []BlockRecord { return append([]BlockRecord(nil), s.records...) }

// Stats returns the block reads so far.
func (s *Store) Stats() ReadStats {
	return ReadStats{DataBlocks: s.dataReads.Load(), IndexBlocks: s.indexReads.Load()}
}

// FrameRecords reads and returns stream st's frame records.
func (s *Store) FrameRecords(st Stream) ([]FrameRecord, error) {
	n := int64(s.hdr.Frames[st]) * FrameRecordSize
	raw, err := s.readRegion(s.layout.frameStart[st], n, s.hdr.FramesCRC[st])
	if err != nil {
		return nil, fmt.Errorf("framestore: frame records of %s: %w", st, err)
	}
	recs := make([]FrameRecord, s.hdr.Frames[st])
	for i := range recs {
		recs[i] = decodeFrameRecord(raw[i*FrameRecordSize:])
	}
	return recs, nil
}

// Frames yields the pictures of play level l in decoding order, with
// their bytes, reading whole blocks of only the streams l includes: each
// stream's blocks are found from its first block by the link offsets and
// read once, in order. It stops at the first error, which it yields.
func (s *Store) Frames(l Level) iter.Seq2[Frame, error] {
	return func(yield func(Frame, error) bool) {
		curs, err := s.cursors(l)
		if err != nil {
			yield(Frame{}, err)
			return
		}
		for {
			c := earliest(curs)
			if c == nil {
				return
			}
			f, err := c.next()
			if !yield(f, err) || err != nil {
				return
			}
		}
	}
}

func (s *Store) cursors(l Level) ([]*cursor, error) {
	if !l.Valid() {
		return nil, fmt.Errorf("%w: play level %d", ErrInvalid, int(l))
	}
	var curs []*cursor
	for _, st := range l.Streams() {
		if s.hdr.Frames[st] == 0 {
			continue
		}
		recs, err := s.FrameRecords(st)
		if err != nil {
			return nil, err
		}
		curs = append(curs, &cursor{s: s, st: st, frames: recs, block: noBlock})
	}
	return curs, nil
}

// earliest returns the cursor whose next picture decodes first, nil when
// all are done.
func earliest(curs []*cursor) *cursor {
	var best *cursor
	for _, c := range curs {
		if c.done() {
			continue
		}
		if best == nil || c.frames[c.idx].DTS < best.frames[best.idx].DTS {
			best = c
		}
	}
	return best
}
