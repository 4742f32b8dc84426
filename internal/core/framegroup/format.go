package framegroup

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
)

// Errors of the layout.
var (
	// ErrCorrupt reports records that fail their checks.
	ErrCorrupt = errors.New("framegroup: corrupt record")
	// ErrInvalid reports invalid sizes, levels or pictures.
	ErrInvalid = errors.New("framegroup: invalid argument")
)

// Sizes of the on-device structures, bytes.
const (
	HeaderSize      = 128
	BlockRecordSize = 8
	FrameRecordSize = 16
)

// Limits of the record fields.
const (
	// MaxStartIndex is the largest picture index a block record holds.
	MaxStartIndex = 1<<28 - 1
	// MaxFrames is the most pictures with bytes in one block.
	MaxFrames = 1<<16 - 1
	// FarLink is the link offset meaning "65535 or more".
	FarLink = 0xFFFF
	// MaxDTS is the largest decode time a frame record holds.
	MaxDTS = 1<<48 - 1
	// NoBlock marks an empty stream's first block.
	NoBlock = ^uint32(0)
)

var magic = [4]byte{'S', 'F', 'G', 'S'} // Strata frame-grouped store

const formatVersion = 1

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Checksum is the CRC-32C the header keeps of the block records and of
// each stream's frame records.
func Checksum(b []byte) uint32 { return crc32.Checksum(b, castagnoli) }

// Header is block 0 of the index, 128 bytes, big-endian:
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
type Header struct {
	BlockSize  uint32
	Timescale  uint32
	Blocks     uint32
	EndTime    uint64
	Frames     [NumStreams]uint32
	FirstBlock [NumStreams]uint32
	RecordsCRC uint32
	FramesCRC  [NumStreams]uint32
}

// Encode returns the header's 128 bytes.
func (h *Header) Encode() []byte {
	b := make([]byte, HeaderSize)
	copy(b, magic[:])
	binary.BigEndian.PutUint16(b[4:], formatVersion)
	binary.BigEndian.PutUint16(b[6:], HeaderSize)
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
	binary.BigEndian.PutUint32(b[124:], Checksum(b[:124]))
	return b
}

// DecodeHeader parses and checks a header from the start of b.
func DecodeHeader(b []byte) (Header, error) {
	var h Header
	if len(b) < HeaderSize || [4]byte(b[:4]) != magic {
		return h, fmt.Errorf("%w: no store header", ErrCorrupt)
	}
	if Checksum(b[:124]) != binary.BigEndian.Uint32(b[124:]) {
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
func (h *Header) check() error {
	if err := CheckBlockSize(int(h.BlockSize)); err != nil {
		return fmt.Errorf("%w: %w", ErrCorrupt, err)
	}
	if h.Timescale == 0 {
		return fmt.Errorf("%w: timescale 0", ErrCorrupt)
	}
	for s := range NumStreams {
		empty := h.FirstBlock[s] == NoBlock
		if empty != (h.Frames[s] == 0) || !empty && h.FirstBlock[s] >= h.Blocks {
			return fmt.Errorf("%w: stream %s: %d frames, first block %d of %d",
				ErrCorrupt, Stream(s), h.Frames[s], h.FirstBlock[s], h.Blocks)
		}
	}
	return nil
}

// BlockRecord is the metadata of one data block (FG §III.3, Fig. 10),
// 8 bytes, one big-endian uint64 (6 bytes in the paper):
//
//	bits 63-61  stream (0 IOdd, 1 IEven, 2 P, 3 BOdd, 4 BEven)
//	bit  60     fragment: the block's last picture continues in the stream's next block
//	bits 59-32  start frame index: 0-based index, within the stream, of the
//	            first picture with bytes in this block (a continued one counts)
//	bits 31-16  number of pictures with bytes in this block, continued and
//	            fragmented ones included (a block is closed early rather than exceed 65535)
//	bits 15-0   link offset: number of the stream's next block minus this
//	            block's number; 0 for the stream's last block, 0xFFFF when
//	            the distance is 65535 or more (search the records forward)
//
// Eight bytes rather than the paper's six buys a 28-bit frame index (2^28
// pictures: 103 days at 30 fps, against the paper's 3.5 hours with 18
// bits) and a 16-bit count, and keeps records aligned; it is 0.006% of a
// 128 KiB block. Block numbers need no field: a record's position is its
// block number.
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
	// FarLink if 65535 or more.
	Link uint16
}

// Complete is the number of the stream's pictures that end in this block
// or an earlier one.
func (r BlockRecord) Complete() uint32 {
	n := r.Start + uint32(r.Frames)
	if r.Fragment {
		n--
	}
	return n
}

// Encode returns the record's 8-byte value.
func (r BlockRecord) Encode() uint64 {
	v := uint64(r.Stream)<<61 | uint64(r.Start)<<32 | uint64(r.Frames)<<16 | uint64(r.Link)
	if r.Fragment {
		v |= 1 << 60
	}
	return v
}

// DecodeBlockRecord parses a record's 8-byte value.
func DecodeBlockRecord(v uint64) (BlockRecord, error) {
	r := BlockRecord{
		Stream:   Stream(v >> 61),
		Fragment: v>>60&1 == 1,
		Start:    uint32(v >> 32 & MaxStartIndex),
		Frames:   uint16(v >> 16),
		Link:     uint16(v),
	}
	if r.Stream >= NumStreams || r.Frames == 0 {
		return r, fmt.Errorf("%w: block record %#016x", ErrCorrupt, v)
	}
	return r, nil
}

// EncodeRecords returns the block records back to back, 8 bytes each.
func EncodeRecords(recs []BlockRecord) []byte {
	b := make([]byte, 0, len(recs)*BlockRecordSize)
	for _, r := range recs {
		b = binary.BigEndian.AppendUint64(b, r.Encode())
	}
	return b
}

// DecodeRecords parses block records from raw, 8 bytes each.
func DecodeRecords(raw []byte) ([]BlockRecord, error) {
	recs := make([]BlockRecord, len(raw)/BlockRecordSize)
	for i := range recs {
		r, err := DecodeBlockRecord(binary.BigEndian.Uint64(raw[i*BlockRecordSize:]))
		if err != nil {
			return nil, fmt.Errorf("block %d: %w", i, err)
		}
		recs[i] = r
	}
	return recs, nil
}

// FrameFlags are the flag bits of a frame record: bit 0 sync sample,
// bit 1 reference picture (nal_ref_idc != 0), bits 2-3 coding type (0 I,
// 1 P, 2 B).
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

// FrameRecord is the stored description of one picture, 16 bytes,
// big-endian, everything needed to rebuild an MP4 sample from its bytes:
//
//	0   8  decode time (high 48 bits, track timescale) | flags (low 16 bits)
//	8   4  composition offset, signed (presentation minus decode time)
//	12  4  size in bytes
type FrameRecord struct {
	DTS   uint64 // decode time, track timescale; < 2^48
	Flags FrameFlags
	CTO   int32 // composition offset
	Size  uint32
}

// Encode writes the record's 16 bytes to the start of b.
func (f FrameRecord) Encode(b []byte) {
	binary.BigEndian.PutUint64(b, f.DTS<<16|uint64(f.Flags))
	binary.BigEndian.PutUint32(b[8:], uint32(f.CTO))
	binary.BigEndian.PutUint32(b[12:], f.Size)
}

// DecodeFrameRecord parses a record from the start of b.
func DecodeFrameRecord(b []byte) FrameRecord {
	v := binary.BigEndian.Uint64(b)
	return FrameRecord{
		DTS:   v >> 16,
		Flags: FrameFlags(v),
		CTO:   int32(binary.BigEndian.Uint32(b[8:])),
		Size:  binary.BigEndian.Uint32(b[12:]),
	}
}

// CheckBlockSize accepts a multiple of 4 KiB from 4 KiB to 64 MiB: whole
// pages, so O_DIRECT accepts every block, and at least one header.
func CheckBlockSize(s int) error {
	if s < 4096 || s > 64<<20 || s%4096 != 0 {
		return fmt.Errorf("block size %d is not a multiple of 4 KiB in [4 KiB, 64 MiB]", s)
	}
	return nil
}

// BlocksFor is the number of S-byte blocks that n bytes occupy.
func BlocksFor(n, s int64) int64 { return (n + s - 1) / s }

// IndexLayout gives the index's regions, in blocks of S: the header in
// block 0, the block records from block 1, then each stream's frame
// records, every region zero-padded to a block boundary.
type IndexLayout struct {
	RecordStart int64
	FrameStart  [NumStreams]int64
	Total       int64
}

// LayoutOf returns the index regions h describes.
func LayoutOf(h *Header) IndexLayout {
	s := int64(h.BlockSize)
	l := IndexLayout{RecordStart: 1}
	next := 1 + BlocksFor(int64(h.Blocks)*BlockRecordSize, s)
	for st := range NumStreams {
		l.FrameStart[st] = next
		next += BlocksFor(int64(h.Frames[st])*FrameRecordSize, s)
	}
	l.Total = next
	return l
}
