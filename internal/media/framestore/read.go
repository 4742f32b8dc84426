package framestore

import (
	"errors"
	"fmt"
	"iter"
	"path/filepath"
	"sync/atomic"

	"github.com/strata-media/strata/internal/core/framegroup"
	"github.com/strata-media/strata/internal/storage/device"
)

// Store is an open frame-grouped store. It is safe for concurrent use;
// each Frames iteration has its own buffers.
type Store struct {
	opts    Options
	blocks  device.Device
	index   device.Device
	hdr     framegroup.Header
	regions framegroup.IndexLayout // of the index file
	groups  *framegroup.Layout     // of the blocks file

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

// load reads and checks the header and the block records, and follows
// each stream's links.
func (s *Store) load() error {
	first := device.AlignedBuffer(4096, s.index.Alignment())
	if _, err := s.index.ReadAt(first, 0); err != nil {
		return fmt.Errorf("framestore: reading the header: %w", err)
	}
	h, err := framegroup.DecodeHeader(first)
	if err != nil {
		return err
	}
	s.hdr, s.regions = h, framegroup.LayoutOf(&h)
	if err := s.checkSizes(); err != nil {
		return err
	}
	s.indexReads.Add(1) // the header block, as a whole block would be read
	raw, err := s.readRegion(s.regions.RecordStart, int64(h.Blocks)*framegroup.BlockRecordSize, h.RecordsCRC)
	if err != nil {
		return fmt.Errorf("framestore: block records: %w", err)
	}
	recs, err := framegroup.DecodeRecords(raw)
	if err != nil {
		return err
	}
	s.groups, err = framegroup.NewLayout(int(h.BlockSize), recs, h.FirstBlock, h.Frames)
	return err
}

func (s *Store) checkSizes() error {
	bs := int64(s.hdr.BlockSize)
	if err := checkAlignment(s.blocks, int(bs)); err != nil {
		return err
	}
	if s.index.Size() < s.regions.Total*bs || s.blocks.Size() < int64(s.hdr.Blocks)*bs {
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
	if framegroup.Checksum(out) != crc {
		return nil, fmt.Errorf("%w: checksum", ErrCorrupt)
	}
	return out, nil
}

// BlockSize returns S, bytes.
func (s *Store) BlockSize() int { return int(s.hdr.BlockSize) }

// Timescale returns the ticks per second of decode times and offsets.
func (s *Store) Timescale() uint32 { return s.hdr.Timescale }

// EndTime returns the decode time of the end of the last picture.
func (s *Store) EndTime() uint64 { return s.hdr.EndTime }

// FrameCount returns the number of pictures in stream st.
func (s *Store) FrameCount(st framegroup.Stream) int { return int(s.hdr.Frames[st]) }

// Records returns a copy of the block records, in block order.
func (s *Store) Records() []framegroup.BlockRecord {
	return append([]framegroup.BlockRecord(nil), s.groups.Records()...)
}

// Stats returns the block reads so far.
func (s *Store) Stats() ReadStats {
	return ReadStats{DataBlocks: s.dataReads.Load(), IndexBlocks: s.indexReads.Load()}
}

// FrameRecords reads and returns stream st's frame records.
func (s *Store) FrameRecords(st framegroup.Stream) ([]framegroup.FrameRecord, error) {
	n := int64(s.hdr.Frames[st]) * framegroup.FrameRecordSize
	raw, err := s.readRegion(s.regions.FrameStart[st], n, s.hdr.FramesCRC[st])
	if err != nil {
		return nil, fmt.Errorf("framestore: frame records of %s: %w", st, err)
	}
	recs := make([]framegroup.FrameRecord, s.hdr.Frames[st])
	for i := range recs {
		recs[i] = framegroup.DecodeFrameRecord(raw[i*framegroup.FrameRecordSize:])
	}
	return recs, nil
}

// Frames yields the pictures of play level l in decoding order, with
// their bytes, reading whole blocks of only the streams l includes, each
// block once, in the order framegroup's cursor gives (FG §III.3). It stops
// at the first error, which it yields.
func (s *Store) Frames(l framegroup.Level) iter.Seq2[Frame, error] {
	return func(yield func(Frame, error) bool) {
		p, err := s.play(l)
		if err != nil {
			yield(Frame{}, err)
			return
		}
		for {
			f, ok, err := p.next()
			if err != nil {
				yield(Frame{}, err)
				return
			}
			if !ok || !yield(f, nil) {
				return
			}
		}
	}
}

// play reads the frame records of the streams l includes and starts a
// player at the first picture.
func (s *Store) play(l framegroup.Level) (*player, error) {
	if !l.Valid() {
		return nil, fmt.Errorf("%w: play level %d", ErrInvalid, int(l))
	}
	p := &player{s: s}
	var order [framegroup.NumStreams][]int64
	for _, st := range l.Streams() {
		if s.hdr.Frames[st] == 0 {
			continue
		}
		recs, err := s.FrameRecords(st)
		if err != nil {
			return nil, err
		}
		p.streams[st].frames = recs
		order[st] = make([]int64, len(recs))
		for i, r := range recs {
			order[st][i] = int64(r.DTS)
		}
	}
	p.cur = framegroup.NewCursor(s.groups, l, order, 0)
	return p, nil
}
