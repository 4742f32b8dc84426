// Package h264 reads from an H.264 access unit what frame grouping needs:
// the picture's coding type (I, P or B) and whether other pictures may
// reference it, taken from the slice headers and NAL unit headers rather
// than from container flags, which encoders set inconsistently.
package h264

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/Eyevinn/mp4ff/avc"
)

// ErrMalformed reports an access unit that cannot be parsed.
var ErrMalformed = errors.New("h264: malformed access unit")

// Type is a picture's coding type.
type Type uint8

// Picture coding types.
const (
	I Type = iota // every slice is intra (I or SI)
	P             // no B slice, at least one P or SP slice
	B             // at least one B slice
)

func (t Type) String() string {
	switch t {
	case I:
		return "I"
	case P:
		return "P"
	case B:
		return "B"
	}
	return fmt.Sprintf("Type(%d)", uint8(t))
}

// Picture describes one coded picture (one MP4 sample).
type Picture struct {
	Type Type
	// Ref reports nal_ref_idc != 0 on the picture's slices: the picture
	// is used for reference (H.264 §7.4.1), so dropping it breaks the
	// decoding of pictures that follow. In a B-pyramid the middle B
	// pictures are references.
	Ref bool
	// IDR reports an instantaneous decoding refresh picture (NAL type 5).
	IDR bool
}

// NAL unit types that carry a slice header (H.264 Table 7-1): non-IDR
// slice, data partition A, IDR slice.
const (
	nalSlice      = 1
	nalPartitionA = 2
	nalIDR        = 5
)

// Classify parses the length-prefixed NAL units of an MP4 sample
// (lengthSize bytes per length, 1, 2 or 4) and returns the picture's type
// and reference flag. The type is the least independent of its slices' types:
// one B slice makes a B picture, one P slice a P picture. A sample
// without any slice is an error.
func Classify(sample []byte, lengthSize int) (Picture, error) {
	if lengthSize != 1 && lengthSize != 2 && lengthSize != 4 {
		return Picture{}, fmt.Errorf("%w: NAL length size %d", ErrMalformed, lengthSize)
	}
	var pic Picture
	slices := 0
	for len(sample) > 0 {
		nalu, rest, err := nextNALU(sample, lengthSize)
		if err != nil {
			return Picture{}, err
		}
		sample = rest
		ok, err := addSlice(&pic, nalu)
		if err != nil {
			return Picture{}, err
		}
		if ok {
			slices++
		}
	}
	if slices == 0 {
		return Picture{}, fmt.Errorf("%w: no slice NAL unit", ErrMalformed)
	}
	return pic, nil
}

// nextNALU splits the first length-prefixed NAL unit off b.
func nextNALU(b []byte, lengthSize int) (nalu, rest []byte, err error) {
	if len(b) < lengthSize {
		return nil, nil, fmt.Errorf("%w: truncated NAL length", ErrMalformed)
	}
	var n uint64
	switch lengthSize {
	case 1:
		n = uint64(b[0])
	case 2:
		n = uint64(binary.BigEndian.Uint16(b))
	default:
		n = uint64(binary.BigEndian.Uint32(b))
	}
	b = b[lengthSize:]
	if n == 0 || n > uint64(len(b)) {
		return nil, nil, fmt.Errorf("%w: NAL length %d with %d bytes left", ErrMalformed, n, len(b))
	}
	return b[:n], b[n:], nil
}

// addSlice folds one NAL unit into pic if it is a slice, and reports
// whether it was. Types are ordered I < P < B, so the picture keeps the
// largest.
func addSlice(pic *Picture, nalu []byte) (bool, error) {
	typ := nalu[0] & 0x1f
	if typ != nalSlice && typ != nalPartitionA && typ != nalIDR {
		return false, nil
	}
	st, err := avc.GetSliceTypeFromNALU(nalu)
	if err != nil {
		return false, fmt.Errorf("%w: slice header: %w", ErrMalformed, err)
	}
	t := sliceKind(st)
	pic.Type = max(pic.Type, t)
	pic.Ref = pic.Ref || nalu[0]>>5&3 != 0
	pic.IDR = pic.IDR || typ == nalIDR
	return true, nil
}

// sliceKind maps slice_type mod 5 to a picture type: SI counts as I and
// SP as P.
func sliceKind(st avc.SliceType) Type {
	switch st {
	case avc.SLICE_I, avc.SLICE_SI:
		return I
	case avc.SLICE_B:
		return B
	}
	return P
}
