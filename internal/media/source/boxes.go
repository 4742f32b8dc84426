package source

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"time"
)

// A Box is the header of one ISO BMFF box, as Boxes reads it.
type Box struct {
	Type   string // four characters
	Offset int64  // of the box's first byte in the file
	Header int64  // bytes of the header: 8, or 16 with a 64-bit size
	Size   int64  // of the whole box, header included
}

// End is the offset just past the box.
func (b Box) End() int64 { return b.Offset + b.Size }

// Limits of the box walks: a hostile file may declare any sizes, so the
// walks read headers only, and only so many.
const (
	// MaxBoxes bounds the boxes Boxes lists at one level.
	MaxBoxes = 1024
	// MaxMoov bounds the movie box Open decodes into memory, bytes: an
	// hour of 30 fps video takes about 2 MB of sample tables.
	MaxMoov = 64 << 20
)

// ErrBoxes reports a box structure Boxes cannot walk: a size smaller than
// its header, a box past the end, too many boxes.
var ErrBoxes = errors.New("source: bad box structure")

// Boxes lists the boxes between off and end of r by reading their headers
// only (8 or 16 bytes each, at most MaxBoxes of them): a box's body is
// never read, however large it says it is. A box that runs past end is
// an error, returned with the boxes before it.
func Boxes(r io.ReaderAt, off, end int64) ([]Box, error) {
	var boxes []Box
	for off < end {
		if len(boxes) == MaxBoxes {
			return boxes, fmt.Errorf("%w: more than %d boxes", ErrBoxes, MaxBoxes)
		}
		b, err := readBoxHeader(r, off, end)
		if err != nil {
			return boxes, err
		}
		boxes = append(boxes, b)
		off = b.End()
	}
	return boxes, nil
}

// readBoxHeader reads the header of the box at off, which must end by end.
func readBoxHeader(r io.ReaderAt, off, end int64) (Box, error) {
	var h [16]byte
	if end-off < 8 {
		return Box{}, fmt.Errorf("%w: %d stray bytes at %d", ErrBoxes, end-off, off)
	}
	if _, err := r.ReadAt(h[:8], off); err != nil {
		return Box{}, fmt.Errorf("%w: header at %d: %v", ErrBoxes, off, err)
	}
	b := Box{Type: string(h[4:8]), Offset: off, Header: 8, Size: int64(binary.BigEndian.Uint32(h[:4]))}
	switch b.Size {
	case 0: // to the end
		b.Size = end - off
	case 1: // a 64-bit size follows the type
		if end-off < 16 {
			return Box{}, fmt.Errorf("%w: truncated %q header at %d", ErrBoxes, b.Type, off)
		}
		if _, err := r.ReadAt(h[8:16], off+8); err != nil {
			return Box{}, fmt.Errorf("%w: header at %d: %v", ErrBoxes, off, err)
		}
		b.Header, b.Size = 16, int64(binary.BigEndian.Uint64(h[8:16]))
	}
	if b.Size < b.Header || b.Size > end-off {
		return Box{}, fmt.Errorf("%w: %q box at %d of %d bytes, %d available", ErrBoxes, b.Type, off, b.Size, end-off)
	}
	return b, nil
}

// Find returns the first box of type typ.
func Find(boxes []Box, typ string) (Box, bool) {
	for _, b := range boxes {
		if b.Type == typ {
			return b, true
		}
	}
	return Box{}, false
}

// Kinds of file Sniff tells apart by their first bytes.
const (
	KindUnknown  = ""
	KindMP4      = "mp4"
	KindMatroska = "matroska" // WebM and MKV: an EBML header
	KindMP3      = "mp3"
	KindOgg      = "ogg"
)

// Sniff names the kind of file whose first bytes are hdr (at least 8 for
// an MP4): an MP4 starts with a box of a known top-level type.
func Sniff(hdr []byte) string {
	switch {
	case len(hdr) >= 4 && string(hdr[:4]) == "\x1a\x45\xdf\xa3":
		return KindMatroska
	case len(hdr) >= 3 && string(hdr[:3]) == "ID3", len(hdr) >= 2 && hdr[0] == 0xFF && hdr[1]&0xE0 == 0xE0:
		return KindMP3
	case len(hdr) >= 4 && string(hdr[:4]) == "OggS":
		return KindOgg
	case len(hdr) >= 8 && topLevel[string(hdr[4:8])]:
		return KindMP4
	}
	return KindUnknown
}

// topLevel are the box types an MP4 file may start with.
var topLevel = map[string]bool{"ftyp": true, "moov": true, "mdat": true, "free": true, "skip": true,
	"wide": true, "styp": true, "pdin": true}

// Duration reads the play-out time of the MP4 file r of size bytes from
// its movie header (moov/mvhd), reading only box headers and the mvhd's
// first 32 bytes: a few KB whatever the file is. A file that is not an
// MP4 (by Sniff) or has no usable movie header is an error.
func Duration(r io.ReaderAt, size int64) (time.Duration, error) {
	var hdr [8]byte
	if n, _ := r.ReadAt(hdr[:], 0); Sniff(hdr[:n]) != KindMP4 {
		return 0, fmt.Errorf("%w: a %q file", ErrNotMP4, Sniff(hdr[:n]))
	}
	top, err := Boxes(r, 0, size)
	moov, ok := Find(top, "moov")
	if !ok {
		if err == nil {
			err = fmt.Errorf("%w: no moov box", ErrInvalid)
		}
		return 0, err
	}
	inner, err := Boxes(r, moov.Offset+moov.Header, moov.End())
	mvhd, ok := Find(inner, "mvhd")
	if !ok {
		if err == nil {
			err = fmt.Errorf("%w: no mvhd box", ErrInvalid)
		}
		return 0, err
	}
	return mvhdDuration(r, mvhd)
}

// mvhdDuration decodes the timescale and duration of a movie header: a
// full box (version, flags), then creation and modification times,
// timescale and duration, 32-bit in version 0 and 64-bit in version 1
// except the timescale.
func mvhdDuration(r io.ReaderAt, b Box) (time.Duration, error) {
	var p [32]byte
	n := min(b.Size-b.Header, int64(len(p)))
	if _, err := r.ReadAt(p[:n], b.Offset+b.Header); err != nil {
		return 0, fmt.Errorf("%w: mvhd: %v", ErrInvalid, err)
	}
	var scale, dur uint64
	switch {
	case n >= 20 && p[0] == 0:
		scale, dur = uint64(binary.BigEndian.Uint32(p[12:])), uint64(binary.BigEndian.Uint32(p[16:]))
	case n >= 32 && p[0] == 1:
		scale, dur = uint64(binary.BigEndian.Uint32(p[20:])), binary.BigEndian.Uint64(p[24:])
	default:
		return 0, fmt.Errorf("%w: mvhd of %d bytes, version %d", ErrInvalid, b.Size, p[0])
	}
	secs := float64(dur) / float64(scale)
	if scale == 0 || dur == 0 || dur == 1<<32-1 || dur == 1<<64-1 || secs > 1e7 {
		return 0, fmt.Errorf("%w: mvhd duration %d at timescale %d", ErrInvalid, dur, scale)
	}
	return time.Duration(secs * float64(time.Second)), nil
}
