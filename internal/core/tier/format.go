package tier

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
)

// Errors of the on-flash format. They are wrapped with %w.
var (
	// ErrCorrupt reports bytes that fail a checksum or a consistency check.
	ErrCorrupt = errors.New("tier: corrupt record")
	// ErrNoRecord reports the absence of a record where one may be: zeros,
	// another cache's block, or a block never written.
	ErrNoRecord = errors.New("tier: no record")
	// ErrGeometry reports a super record whose geometry differs from the
	// configured one.
	ErrGeometry = errors.New("tier: flash geometry mismatch")
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

func crc(b []byte) uint32 { return crc32.Checksum(b, castagnoli) }

// FormatVersion is the version of the on-flash format written by this code.
const FormatVersion = 1

// MetaBlocks is the number of blocks at the start of the device reserved for
// the super record and the invalidation table, written alternately so that a
// torn metadata write never loses the previous table.
const MetaBlocks = 2

// MaxKeyLen is the longest key the cache stores.
const MaxKeyLen = 1024

const (
	superMagic   = "STRATAFS"
	superLen     = 64
	blockMagic   = "STRB"
	blockHdrLen  = 48
	recordHdrLen = 48
	recordChunk  = 1 // record type: a chunk of a segment
)

// Super is the super record at the start of each metadata block.
//
// Metadata block layout (blocks 0 and 1; the valid one with the higher Seq
// wins), little endian:
//
//	off len  field
//	  0   8  magic "STRATAFS"
//	  8   2  format version (1)
//	 10   2  super record length (64)
//	 12   4  device alignment in bytes
//	 16   8  block size in bytes (the optimal block size)
//	 24   4  block count, metadata blocks included
//	 28   4  metadata block count (2)
//	 32   8  format id: random at format time; data blocks carry it too,
//	         so blocks of an earlier format are never taken for ours
//	 40   8  metadata sequence number, +1 per metadata write
//	 48   8  generation floor: every generation issued so far is below it
//	 56   4  invalidation table length in bytes (T)
//	 60   4  CRC32C of bytes 0..59
//	 64   T  invalidation table: entries of
//	           8  generation at which the prefix was invalidated
//	           2  prefix length P
//	           P  prefix bytes
//	 64+T 4  CRC32C of the table bytes
//
// The rest of the block is zero.
type Super struct {
	Alignment  uint32
	BlockSize  int64
	Blocks     uint32
	FormatID   uint64
	Seq        uint64
	GenFloor   uint64
	Invalidate []Invalidation
}

// An Invalidation says that every record whose key starts with Prefix and
// whose generation is below Gen is dead.
type Invalidation struct {
	Prefix string
	Gen    uint64
}

// metaTableCap is how many table bytes fit in a metadata block.
func metaTableCap(blockSize int64) int64 { return blockSize - superLen - 4 }

func tableLen(inv []Invalidation) int {
	n := 0
	for _, e := range inv {
		n += 10 + len(e.Prefix)
	}
	return n
}

// EncodeMeta writes s into buf, which must be a whole block of s.BlockSize
// bytes (zeroed by the caller or not: the tail is cleared).
func EncodeMeta(buf []byte, s *Super) error {
	tl := tableLen(s.Invalidate)
	if int64(tl) > metaTableCap(int64(len(buf))) {
		return fmt.Errorf("tier: invalidation table of %d bytes does not fit a %d byte block", tl, len(buf))
	}
	clear(buf)
	le := binary.LittleEndian
	copy(buf[0:8], superMagic)
	le.PutUint16(buf[8:], FormatVersion)
	le.PutUint16(buf[10:], superLen)
	le.PutUint32(buf[12:], s.Alignment)
	le.PutUint64(buf[16:], uint64(s.BlockSize))
	le.PutUint32(buf[24:], s.Blocks)
	le.PutUint32(buf[28:], MetaBlocks)
	le.PutUint64(buf[32:], s.FormatID)
	le.PutUint64(buf[40:], s.Seq)
	le.PutUint64(buf[48:], s.GenFloor)
	le.PutUint32(buf[56:], uint32(tl))
	le.PutUint32(buf[60:], crc(buf[:60]))
	p := buf[superLen:]
	for _, e := range s.Invalidate {
		le.PutUint64(p, e.Gen)
		le.PutUint16(p[8:], uint16(len(e.Prefix)))
		copy(p[10:], e.Prefix)
		p = p[10+len(e.Prefix):]
	}
	le.PutUint32(buf[superLen+tl:], crc(buf[superLen:superLen+tl]))
	return nil
}

// DecodeSuper decodes the super record at the start of buf (at least 64
// bytes) without its invalidation table.
func DecodeSuper(buf []byte) (*Super, error) {
	if len(buf) < superLen || string(buf[:8]) != superMagic {
		return nil, ErrNoRecord
	}
	le := binary.LittleEndian
	if crc(buf[:60]) != le.Uint32(buf[60:]) {
		return nil, fmt.Errorf("%w: super record checksum", ErrCorrupt)
	}
	if v := le.Uint16(buf[8:]); v != FormatVersion {
		return nil, fmt.Errorf("%w: format version %d, want %d", ErrCorrupt, v, FormatVersion)
	}
	if mb := le.Uint32(buf[28:]); mb != MetaBlocks {
		return nil, fmt.Errorf("%w: %d metadata blocks, want %d", ErrCorrupt, mb, MetaBlocks)
	}
	return &Super{
		Alignment: le.Uint32(buf[12:]),
		BlockSize: int64(le.Uint64(buf[16:])),
		Blocks:    le.Uint32(buf[24:]),
		FormatID:  le.Uint64(buf[32:]),
		Seq:       le.Uint64(buf[40:]),
		GenFloor:  le.Uint64(buf[48:]),
	}, nil
}

// DecodeMeta decodes a whole metadata block: the super record and the
// invalidation table.
func DecodeMeta(buf []byte) (*Super, error) {
	s, err := DecodeSuper(buf)
	if err != nil {
		return nil, err
	}
	le := binary.LittleEndian
	tl := int64(le.Uint32(buf[56:]))
	if tl > metaTableCap(int64(len(buf))) {
		return nil, fmt.Errorf("%w: invalidation table length %d", ErrCorrupt, tl)
	}
	table := buf[superLen : superLen+tl]
	if crc(table) != le.Uint32(buf[superLen+tl:]) {
		return nil, fmt.Errorf("%w: invalidation table checksum", ErrCorrupt)
	}
	s.Invalidate, err = decodeTable(table)
	return s, err
}

func decodeTable(p []byte) ([]Invalidation, error) {
	var out []Invalidation
	le := binary.LittleEndian
	for len(p) > 0 {
		if len(p) < 10 {
			return nil, fmt.Errorf("%w: truncated invalidation entry", ErrCorrupt)
		}
		gen, n := le.Uint64(p), int(le.Uint16(p[8:]))
		if len(p) < 10+n {
			return nil, fmt.Errorf("%w: truncated invalidation prefix", ErrCorrupt)
		}
		out = append(out, Invalidation{Prefix: string(p[10 : 10+n]), Gen: gen})
		p = p[10+n:]
	}
	return out, nil
}

// BlockHeader starts every data block.
//
// Data block layout (blocks 2 .. count-1), little endian:
//
//	off len  field
//	  0   4  magic "STRB"
//	  4   2  format version (1)
//	  6   2  header length (48)
//	  8   8  format id (must equal the super record's)
//	 16   8  generation of this block write (unique, increasing)
//	 24   4  block number (must equal the block's position)
//	 28   4  length in bytes of the records that follow the header
//	 32   4  record count
//	 36   8  reserved, zero
//	 44   4  CRC32C of bytes 0..43
//	 48   .  records, back to back; the rest of the block is zero
//
// Record layout, one per chunk of a segment:
//
//	off len  field
//	  0   1  type (1 = chunk)
//	  1   1  flags, zero
//	  2   2  key length K (1..1024)
//	  4   4  chunk sequence number (0-based)
//	  8   4  number of chunks of the segment
//	 12   4  chunk data length L
//	 16   8  segment length in bytes (sum of its chunks)
//	 24   8  segment generation: the generation of the block that holds
//	         chunk 0, shared by all chunks of one write of the segment
//	 32   8  block generation (must equal the header's: a record left over
//	         from the block's previous content by a torn write never matches)
//	 40   4  CRC32C of the data
//	 44   4  CRC32C of bytes 0..43 and the key
//	 48   K  key
//	 48+K L  data
type BlockHeader struct {
	FormatID   uint64
	Gen        uint64
	Block      uint32
	RecordsLen uint32
	Records    uint32
}

// RecordHeader describes one chunk record.
type RecordHeader struct {
	Key      string
	Seq      uint32 // chunk sequence number
	Chunks   uint32 // number of chunks of the segment
	Len      uint32 // chunk data length
	SegSize  int64
	SegGen   uint64
	BlockGen uint64
}

// RecordCapacity is the most data one record whose key is keyLen bytes
// long carries in a block of blockSize bytes: the block less its header,
// the record header and the key. An object of at most this size, alone in
// a block, is written as one record (the whole-file tier cuts files into
// pieces of this size).
func RecordCapacity(blockSize int64, keyLen int) int64 {
	return blockSize - blockHdrLen - recordLen(keyLen, 0)
}

// recordLen is the encoded length of a record with the given key and data
// lengths.
func recordLen(keyLen, dataLen int) int64 {
	return int64(recordHdrLen + keyLen + dataLen)
}

func encodeBlockHeader(buf []byte, h *BlockHeader) {
	le := binary.LittleEndian
	copy(buf[0:4], blockMagic)
	le.PutUint16(buf[4:], FormatVersion)
	le.PutUint16(buf[6:], blockHdrLen)
	le.PutUint64(buf[8:], h.FormatID)
	le.PutUint64(buf[16:], h.Gen)
	le.PutUint32(buf[24:], h.Block)
	le.PutUint32(buf[28:], h.RecordsLen)
	le.PutUint32(buf[32:], h.Records)
	clear(buf[36:44])
	le.PutUint32(buf[44:], crc(buf[:44]))
}

// DecodeBlockHeader decodes the header at the start of a data block. It
// returns ErrNoRecord for zeros or foreign bytes.
func DecodeBlockHeader(buf []byte) (*BlockHeader, error) {
	if len(buf) < blockHdrLen || string(buf[:4]) != blockMagic {
		return nil, ErrNoRecord
	}
	le := binary.LittleEndian
	if crc(buf[:44]) != le.Uint32(buf[44:]) {
		return nil, fmt.Errorf("%w: block header checksum", ErrCorrupt)
	}
	if v := le.Uint16(buf[4:]); v != FormatVersion {
		return nil, fmt.Errorf("%w: block format version %d", ErrCorrupt, v)
	}
	h := &BlockHeader{
		FormatID:   le.Uint64(buf[8:]),
		Gen:        le.Uint64(buf[16:]),
		Block:      le.Uint32(buf[24:]),
		RecordsLen: le.Uint32(buf[28:]),
		Records:    le.Uint32(buf[32:]),
	}
	if int64(h.RecordsLen) > int64(len(buf))-blockHdrLen {
		return nil, fmt.Errorf("%w: records length %d exceeds block", ErrCorrupt, h.RecordsLen)
	}
	return h, nil
}

// encodeRecord writes a record into buf, which must hold recordLen bytes,
// and returns the bytes written.
func encodeRecord(buf []byte, h *RecordHeader, data []byte) int {
	le := binary.LittleEndian
	k := len(h.Key)
	buf[0], buf[1] = recordChunk, 0
	le.PutUint16(buf[2:], uint16(k))
	le.PutUint32(buf[4:], h.Seq)
	le.PutUint32(buf[8:], h.Chunks)
	le.PutUint32(buf[12:], uint32(len(data)))
	le.PutUint64(buf[16:], uint64(h.SegSize))
	le.PutUint64(buf[24:], h.SegGen)
	le.PutUint64(buf[32:], h.BlockGen)
	le.PutUint32(buf[40:], crc(data))
	copy(buf[recordHdrLen:], h.Key)
	le.PutUint32(buf[44:], crc32.Update(crc(buf[:44]), castagnoli, buf[recordHdrLen:recordHdrLen+k]))
	copy(buf[recordHdrLen+k:], data)
	return recordHdrLen + k + len(data)
}

// DecodeRecordHeader decodes and verifies the header and key of the record
// at the start of buf. It does not look at the data.
func DecodeRecordHeader(buf []byte) (*RecordHeader, error) {
	if len(buf) < recordHdrLen {
		return nil, fmt.Errorf("%w: truncated record header", ErrCorrupt)
	}
	if buf[0] != recordChunk {
		return nil, fmt.Errorf("%w: record type %d", ErrCorrupt, buf[0])
	}
	le := binary.LittleEndian
	k := int(le.Uint16(buf[2:]))
	if k == 0 || k > MaxKeyLen || len(buf) < recordHdrLen+k {
		return nil, fmt.Errorf("%w: key length %d", ErrCorrupt, k)
	}
	if crc32.Update(crc(buf[:44]), castagnoli, buf[recordHdrLen:recordHdrLen+k]) != le.Uint32(buf[44:]) {
		return nil, fmt.Errorf("%w: record header checksum", ErrCorrupt)
	}
	h := &RecordHeader{
		Key:      string(buf[recordHdrLen : recordHdrLen+k]),
		Seq:      le.Uint32(buf[4:]),
		Chunks:   le.Uint32(buf[8:]),
		Len:      le.Uint32(buf[12:]),
		SegSize:  int64(le.Uint64(buf[16:])),
		SegGen:   le.Uint64(buf[24:]),
		BlockGen: le.Uint64(buf[32:]),
	}
	if h.Chunks == 0 || h.Seq >= h.Chunks || int64(h.Len) > h.SegSize || h.SegGen > h.BlockGen {
		return nil, fmt.Errorf("%w: inconsistent record header", ErrCorrupt)
	}
	return h, nil
}

// DecodeRecord decodes and verifies the whole record at the start of buf and
// returns its header and data (aliasing buf).
func DecodeRecord(buf []byte) (*RecordHeader, []byte, error) {
	h, err := DecodeRecordHeader(buf)
	if err != nil {
		return nil, nil, err
	}
	start := recordHdrLen + len(h.Key)
	end := int64(start) + int64(h.Len)
	if end > int64(len(buf)) {
		return h, nil, fmt.Errorf("%w: record data truncated", ErrCorrupt)
	}
	data := buf[start:end]
	if crc(data) != binary.LittleEndian.Uint32(buf[40:]) {
		return h, nil, fmt.Errorf("%w: record data checksum of %q chunk %d", ErrCorrupt, h.Key, h.Seq)
	}
	return h, data, nil
}

// BlockRecord is a record found in a block, with its position.
type BlockRecord struct {
	RecordHeader
	Off int64 // offset of the record within the block
}

// BlockContents is what a scan finds in one data block.
type BlockContents struct {
	Block   uint32
	Header  *BlockHeader  // nil when the block holds no valid header
	Records []BlockRecord // records that verified
	Corrupt int           // records that failed verification, including any unreadable tail
	Err     error         // why the header or a record was rejected, if one was
}

// DecodeBlock decodes and verifies every record of a data block read whole
// from position block. Records that fail their checksums, or that belong to
// a different generation than the header (left over by a torn write), are
// counted as corrupt and skipped. A block of another format id, or with no
// header, has no records.
func DecodeBlock(buf []byte, block uint32, formatID uint64) BlockContents {
	bc := BlockContents{Block: block}
	h, err := DecodeBlockHeader(buf)
	switch {
	case errors.Is(err, ErrNoRecord):
		return bc
	case err != nil:
		bc.Err, bc.Corrupt = err, 1
		return bc
	case h.FormatID != formatID:
		return bc
	case h.Block != block:
		bc.Err, bc.Corrupt = fmt.Errorf("%w: block %d holds header of block %d", ErrCorrupt, block, h.Block), 1
		return bc
	}
	bc.Header = h
	decodeRecords(&bc, buf[:blockHdrLen+int64(h.RecordsLen)])
	return bc
}

func decodeRecords(bc *BlockContents, buf []byte) {
	h := bc.Header
	off := int64(blockHdrLen)
	for n := uint32(0); n < h.Records; n++ {
		rh, _, err := DecodeRecord(buf[min(off, int64(len(buf))):])
		if rh == nil {
			// The header is unreadable, so the next record's position is
			// unknown: everything from here on is lost.
			bc.Corrupt += int(h.Records - n)
			bc.Err = err
			return
		}
		if err == nil && rh.BlockGen != h.Gen {
			err = fmt.Errorf("%w: record of generation %d in block of generation %d", ErrCorrupt, rh.BlockGen, h.Gen)
		}
		if err != nil {
			bc.Corrupt++
			bc.Err = err
		} else {
			bc.Records = append(bc.Records, BlockRecord{RecordHeader: *rh, Off: off})
		}
		off += recordLen(len(rh.Key), int(rh.Len))
	}
}
