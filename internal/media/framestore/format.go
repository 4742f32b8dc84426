package framestore

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
)

// Errors of the store.
var (
	// ErrCorrupt reports metadata or blocks that fail their checks.
	ErrCorrupt = errors.New("framestore: corrupt store")
	// ErrInvalid reports invalid options or frames given to a Writer.
	ErrInvalid = errors.New("framestore: invalid argument")
)

// File names inside a store directory.
const (
	BlocksFile = "blocks"
	IndexFile  = "index"
)

// Sizes of the on-disk structures, bytes.
const (
	headerSize      = 128
	BlockRecordSize = 8
	FrameRecordSize = 16
)

// Limits of the record fields.
const (
	maxStartIndex = 1<<28 - 1
	maxFrames     = 1<<16 - 1
	farLink       = 0xFFFF // link offset meaning "65535 or more"
	maxDTS        = 1<<48 - 1
	noBlock       = ^uint32(0)
)

var magic = [4]byte{'S', 'F', 'G', 'S'} // Strata frame-grouped store

const formatVersion = 1

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// header is block 0 of the index file, 128 bytes, big-endian:
//
//	0    4  magic "SFGS"
//	4    2  format version (1)
//	6    2  header size (128)
//	8    4  block size S, bytes
//	12   4  timescale of decode times and offsets, ticks per second
//	16   4  N, number of data blocks
//	20   8  end time: decode time of the last picture plus its duration
//	28  20  frames per stream, 5 × uint32, stream order
//	48  20  first block of each stream, 5 × uint32, 0xFFFFFFFF if empty
//	68  24  CRC-32C of the block records, then of each stream's frame
//	        records (6 × uint32, over the records without padding)
//	92  32  reserved, zero
//	124  4  CRC-32C of bytes 0-123
type header struct {
	BlockSize  uint32
	Timescale  uint32
	Blocks     uint32
	EndTime    uint64
	Frames     [NumStreams]uint32
	FirstBlock [NumStreams]uint32
	RecordsCRC uint32
	FramesCRC  [NumStreams]uint32
}

func (h *header) encode() []byte {
	b := make([]byte, headerSize)
	copy(b, magic[:])
	binary.BigEndian.PutUint16(b[4:], formatVersion)
	binary.BigEndian.PutUint16(b[6:], headerSize)
	binary.BigEndian.PutUint32(b[8:], h.BlockSize)
	binary.BigEndian.PutUint32(b[12:], h.Timescale)
	binary.BigEndian.PutUint32(b[16:], h.Blocks)
	binary.BigEndian.PutUint64(b[20:], h.EndTime)
	for s := range NumStreams {
		binary.BigEndian.PutUint32(b[28+4*s:], h.Frames[s])
		binary.BigEndian.PutUint32(b[48+4*s:], h.FirstBlock[s])
		binary.BigEndian.PutUint32(b[72+4*s:], h.FramesCRC[s])
	}
	binary.BigEndian.PutUint32(b[68:], h.RecordsCRC)
	binary.BigEndian.PutUint32(b[124:], crc32.Checksum(b[:124], castagnoli))
	return b
}

func decodeHeader(b []byte) (header, error) {
	var h header
	if len(b) < headerSize || [4]byte(b[:4]) != magic {
		return h, fmt.Errorf("%w: no store header", ErrCorrupt)
	}
	if crc32.Checksum(b[:124], castagnoli) != binary.BigEndian.Uint32(b[124:]) {
		return h, fmt.Errorf("%w: header checksum", ErrCorrupt)
	}
	if v := binary.BigEndian.Uint16(b[4:]); v != formatVersion {
		return h, fmt.Errorf("%w: format version %d, want %d", ErrCorrupt, v, formatVersion)
	}
	h.BlockSize = binary.BigEndian.Uint32(b[8:])
	h.Timescale = binary.BigEndian.Uint32(b[12:])
	h.Blocks = binary.BigEndian.Uint32(b[16:])
	h.EndTime = binary.BigEndian.Uint64(b[20:])
	h.RecordsCRC = binary.BigEndian.Uint32(b[68:])
	for s := range NumStreams {
		h.Frames[s] = binary.BigEndian.Uint32(b[28+4*s:])
		h.FirstBlock[s] = binary.BigEndian.Uint32(b[48+4*s:])
		h.FramesCRC[s] = binary.BigEndian.Uint32(b[72+4*s:])
	}
	return h, h.check()
}

// check validates the header's values against each other.
func (h *header) check() error {
	if err := checkBlockSize(int(h.BlockSize)); err != nil {
		return fmt.Errorf("%w: %w", ErrCorrupt, err)
	}
	if h.Timescale == 0 {
		return fmt.Errorf("%w: timescale 0", ErrCorrupt)
	}
	for s := range NumStreams {
		empty := h.FirstBlock[s] == noBlock
		if empty != (h.Frames[s] == 0) || !empty && h.FirstBlock[s] >= h.Blocks {
			return fmt.Errorf("%w: stream %s: %d frames, first block %d of %d",
				ErrCorrupt, Stream(s), h.Frames[s], h.FirstBlock[s], h.Blocks)
		}
	}
	return nil
}

// BlockRecord is the metadata of one data block (see the package doc for
// its 8-byte encoding).
type BlockRecord struct {
	Stream Stream
	// Fragment reports that the block's last picture continues in the
	// stream's next block.
	Fragment bool
	// Start is the index within the stream of the first picture with
	// bytes in the block.
	Start uint32
	// Frames is the number of pictures with bytes in the block.
	Frames uint16
	// Link is the distance to the stream's next block, 0 if none,
	// farLink if 65535 or more.
	Link uint16
}

func (r BlockRecord) encode() uint64 {
	v := uint64(r.Stream)<<61 | uint64(r.Start)<<32 | uint64(r.Frames)<<16 | uint64(r.Link)
	if r.Fragment {
		v |= 1 << 60
	}
	return v
}

func decodeBlockRecord(v uint64) (BlockRecord, error) {
	r := BlockRecord{
		Stream:   Stream(v >> 61),
		Fragment: v>>60&1 == 1,
		Start:    uint32(v >> 32 & maxStartIndex),
		Frames:   uint16(v >> 16),
		Link:     uint16(v),
	}
	if r.Stream >= NumStreams || r.Frames == 0 {
		return r, fmt.Errorf("%w: block record %#016x", ErrCorrupt, v)
	}
	return r, nil
}

// FrameFlags are the flag bits of a frame record.
type FrameFlags uint16

// Frame flag bits.
const (
	FlagSync  FrameFlags = 1 << 0 // sync sample (random access point)
	FlagRef   FrameFlags = 1 << 1 // reference picture
	kindShift            = 2      // bits 2-3: Kind
)

// Kind returns the coding type stored in the flags.
func (f FrameFlags) Kind() Kind { return Kind(f >> kindShift & 3) }

// MakeFlags builds frame flags.
func MakeFlags(k Kind, ref, sync bool) FrameFlags {
	f := FrameFlags(k) << kindShift
	if ref {
		f |= FlagRef
	}
	if sync {
		f |= FlagSync
	}
	return f
}

// FrameRecord is the stored description of one picture (see the package
// doc for its 16-byte encoding).
type FrameRecord struct {
	DTS   uint64 // decode time, track timescale; < 2^48
	Flags FrameFlags
	CTO   int32 // composition offset
	Size  uint32
}

func (f FrameRecord) encode(b []byte) {
	binary.BigEndian.PutUint64(b, f.DTS<<16|uint64(f.Flags))
	binary.BigEndian.PutUint32(b[8:], uint32(f.CTO))
	binary.BigEndian.PutUint32(b[12:], f.Size)
}

func decodeFrameRecord(b []byte) FrameRecord {
	v := binary.BigEndian.Uint64(b)
	return FrameRecord{
		DTS:   v >> 16,
		Flags: FrameFlags(v),
		CTO:   int32(binary.BigEndian.Uint32(b[8:])),
		Size:  binary.BigEndian.Uint32(b[12:]),
	}
}

// checkBlockSize accepts a multiple of 4 KiB from 4 KiB to 64 MiB: whole
// pages, so O_DIRECT accepts every block, and at least one header.
func checkBlockSize(s int) error {
	if s < 4096 || s > 64<<20 || s%4096 != 0 {
		return fmt.Errorf("block size %d is not a multiple of 4 KiB in [4 KiB, 64 MiB]", s)
	}
	return nil
}

// blocksFor is the number of S-byte blocks that n bytes occupy.
func blocksFor(n, s int64) int64 { return (n + s - 1) / s }

// indexLayout gives the index file's regions, in blocks: the block
// records start at block 1, each stream's frame records follow.
type indexLayout struct {
	recordStart int64
	frameStart  [NumStreams]int64
	total       int64
}

func layoutOf(h *header) indexLayout {
	s := int64(h.BlockSize)
	l := indexLayout{recordStart: 1}
	next := 1 + blocksFor(int64(h.Blocks)*BlockRecordSize, s)
	for st := range NumStreams {
		l.frameStart[st] = next
		next += blocksFor(int64(h.Frames[st])*FrameRecordSize, s)
	}
	l.total = next
	return l
}
