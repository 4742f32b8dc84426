package edge

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"net/http"
	"slices"
	"time"

	"github.com/strata-media/strata/internal/core/httpcache"
	"github.com/strata-media/strata/internal/core/tier"
)

// ErrCorrupt reports a tier object that does not decode as a record: a
// torn or damaged flash copy, or bytes of another kind of object.
var ErrCorrupt = errors.New("edge: corrupt record")

// A record is one tier object of the edge: a stored response's metadata
// and its body, or one slice of it.
type record struct {
	// entry is the stored response (RFC 9111 §3) as httpcache keeps it.
	// For slice 0 it describes the whole representation (status 200 and
	// the complete Content-Length for a sliced object); for later slices
	// only the validators and Date that Combinable compares.
	entry httpcache.Entry
	// id names one representation: every slice of it carries the same id,
	// and a refreshed entry (304) applies only to the record with its id.
	id uint64
	// offset is the position of body in the representation.
	offset int64
	// complete is the representation's length in bytes.
	complete int64
	// body is the bytes [offset, offset+len(body)).
	body []byte
}

const (
	recordMagic   = "SEC1"
	recordVersion = 1
	recordHdrLen  = 68
	recordSumLen  = 4
	flagHeuristic = 1 << 0
)

var (
	le         = binary.LittleEndian
	castagnoli = crc32.MakeTable(crc32.Castagnoli)
)

// encode returns the record's bytes, as the tier stores them:
//
//	off  size  field
//	0    4     magic "SEC1"
//	4    1     version (1)
//	5    1     flags (bit 0: heuristic lifetime)
//	6    2     status code
//	8    8     representation id
//	16   8     request time, Unix ns
//	24   8     response time, Unix ns
//	32   8     freshness lifetime, ns
//	40   8     offset of the body in the representation
//	48   8     complete length of the representation
//	56   4     variant (secondary key) length V
//	60   4     header block length H
//	64   4     body length B
//	68   V     variant
//	68+V H     header block: uvarint field count, then per field (sorted by
//	           name) uvarint-prefixed name, uvarint line count, and
//	           uvarint-prefixed lines
//	..   B     body
//	end  4     CRC-32C (Castagnoli) of every byte before it
func (r *record) encode() []byte {
	c := *r
	b := c.layout(len(r.body))
	copy(c.body, r.body)
	seal(b)
	return b
}

// layout returns the encoding of r with room for a body of n bytes, not
// yet written, and points r.body at that room: a fetch reads the body
// straight into the record the tier stores, with no copy. seal writes the
// checksum once the body is in place.
func (r *record) layout(n int) []byte {
	hdr := encodeHeader(r.entry.Header)
	pre := recordHdrLen + len(r.entry.Variant) + len(hdr)
	b := make([]byte, pre+n+recordSumLen)
	copy(b, recordMagic)
	b[4] = recordVersion
	if r.entry.Heuristic {
		b[5] |= flagHeuristic
	}
	le.PutUint16(b[6:], uint16(r.entry.Status))
	le.PutUint64(b[8:], r.id)
	le.PutUint64(b[16:], uint64(unixNano(r.entry.RequestTime)))
	le.PutUint64(b[24:], uint64(unixNano(r.entry.ResponseTime)))
	le.PutUint64(b[32:], uint64(r.entry.Lifetime))
	le.PutUint64(b[40:], uint64(r.offset))
	le.PutUint64(b[48:], uint64(r.complete))
	le.PutUint32(b[56:], uint32(len(r.entry.Variant)))
	le.PutUint32(b[60:], uint32(len(hdr)))
	le.PutUint32(b[64:], uint32(n))
	copy(b[recordHdrLen:], r.entry.Variant)
	copy(b[recordHdrLen+len(r.entry.Variant):], hdr)
	r.body = b[pre : pre+n : pre+n]
	return b
}

// seal writes the checksum of a record laid out by layout.
func seal(b []byte) {
	end := len(b) - recordSumLen
	le.PutUint32(b[end:], crc32.Checksum(b[:end], castagnoli))
}

// unixNano is t in Unix nanoseconds, 0 for the zero time.
func unixNano(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

func fromUnixNano(ns int64) time.Time {
	if ns == 0 {
		return time.Time{}
	}
	return time.Unix(0, ns).UTC()
}

// decodeRecord parses b as encode wrote it. The body aliases b.
func decodeRecord(b []byte) (*record, error) { return decodeRecordSum(b, true) }

// decodeStored parses the bytes the engine answered from tier t: a flash
// hit's were verified by the engine against the checksums of the flash
// records that hold them (every chunk, key and generation), as they were
// read into the buffer they lie in, so the record's own checksum is not
// computed again (on a flash hit it was a fifth of the edge's time);
// every other tier's bytes are checked.
func decodeStored(b []byte, t tier.Tier) (*record, error) { return decodeRecordSum(b, t != tier.SSD) }

// decodeRecordSum is decodeRecord, checking the record's checksum if sum
// is set (the header's fields and lengths are checked either way).
func decodeRecordSum(b []byte, sum bool) (*record, error) {
	if len(b) >= recordHdrLen+recordSumLen && string(b[:4]) == recordMagic && b[4] == recordVersion && sum {
		end := len(b) - recordSumLen
		if crc32.Checksum(b[:end], castagnoli) != le.Uint32(b[end:]) {
			return nil, fmt.Errorf("%w: checksum mismatch", ErrCorrupt)
		}
	}
	r, pre, err := decodeRecordHead(b, int64(len(b)))
	if err != nil {
		return nil, err
	}
	r.body = b[pre : len(b)-recordSumLen]
	return r, nil
}

// decodeRecordHead parses the header of a record of size bytes from b,
// its first bytes (the whole header at least: errShortHead, with pre,
// otherwise),
// without its checksum: the body, which it leaves nil, lies at [pre,
// size-recordSumLen) of the record.
func decodeRecordHead(b []byte, size int64) (r *record, pre int64, err error) {
	if len(b) < recordHdrLen || size < recordHdrLen+recordSumLen || string(b[:4]) != recordMagic {
		return nil, 0, fmt.Errorf("%w: no record header", ErrCorrupt)
	}
	if b[4] != recordVersion {
		return nil, 0, fmt.Errorf("%w: version %d", ErrCorrupt, b[4])
	}
	end := size - recordSumLen
	v, h, n := int64(le.Uint32(b[56:])), int64(le.Uint32(b[60:])), int64(le.Uint32(b[64:]))
	if recordHdrLen+v+h+n != end {
		return nil, 0, fmt.Errorf("%w: lengths %d+%d+%d do not add up", ErrCorrupt, v, h, n)
	}
	pre = recordHdrLen + v + h
	if int64(len(b)) < pre {
		return nil, pre, errShortHead
	}
	r = &record{
		id:       le.Uint64(b[8:]),
		offset:   int64(le.Uint64(b[40:])),
		complete: int64(le.Uint64(b[48:])),
	}
	r.entry.Status = int(le.Uint16(b[6:]))
	r.entry.Heuristic = b[5]&flagHeuristic != 0
	r.entry.RequestTime = fromUnixNano(int64(le.Uint64(b[16:])))
	r.entry.ResponseTime = fromUnixNano(int64(le.Uint64(b[24:])))
	r.entry.Lifetime = time.Duration(le.Uint64(b[32:]))
	p := b[recordHdrLen:pre]
	r.entry.Variant = string(p[:v])
	hdr, err := decodeHeader(p[v : v+h])
	if err != nil {
		return nil, 0, err
	}
	r.entry.Header = hdr
	if r.offset < 0 || r.complete < 0 || r.offset+n > r.complete {
		return nil, 0, fmt.Errorf("%w: body [%d,+%d) outside length %d", ErrCorrupt, r.offset, n, r.complete)
	}
	return r, pre, nil
}

// errShortHead reports a record's first bytes that do not hold its
// whole header.
var errShortHead = errors.New("edge: the record's header is longer than the bytes read")

// encodeHeader serializes h for the record's header block.
func encodeHeader(h http.Header) []byte {
	names := make([]string, 0, len(h))
	for name := range h {
		names = append(names, name)
	}
	slices.Sort(names)
	b := binary.AppendUvarint(nil, uint64(len(names)))
	for _, name := range names {
		b = appendString(b, name)
		b = binary.AppendUvarint(b, uint64(len(h[name])))
		for _, v := range h[name] {
			b = appendString(b, v)
		}
	}
	return b
}

func appendString(b []byte, s string) []byte {
	return append(binary.AppendUvarint(b, uint64(len(s))), s...)
}

// decodeHeader parses a header block.
func decodeHeader(b []byte) (http.Header, error) {
	d := decoder{b: b}
	n := d.uvarint()
	h := make(http.Header, min(n, 64))
	for i := uint64(0); i < n && d.err == nil; i++ {
		name := d.string()
		lines := d.uvarint()
		vals := make([]string, 0, min(lines, 16))
		for j := uint64(0); j < lines && d.err == nil; j++ {
			vals = append(vals, d.string())
		}
		h[name] = vals
	}
	if d.err == nil && len(d.b) != 0 {
		d.err = fmt.Errorf("%w: %d bytes after the header fields", ErrCorrupt, len(d.b))
	}
	return h, d.err
}

// decoder reads uvarints and strings, keeping the first error.
type decoder struct {
	b   []byte
	err error
}

func (d *decoder) uvarint() uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.err = fmt.Errorf("%w: bad varint in the header fields", ErrCorrupt)
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) string() string {
	n := d.uvarint()
	if d.err != nil {
		return ""
	}
	if n > uint64(len(d.b)) {
		d.err = fmt.Errorf("%w: string of %d bytes past the end", ErrCorrupt, n)
		return ""
	}
	s := string(d.b[:n])
	d.b = d.b[n:]
	return s
}
