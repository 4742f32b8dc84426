package framegroup

import "fmt"

// Stream is one of the five groups pictures are stored in (FG §III.1,
// Fig. 7).
type Stream uint8

// The five streams, in the order the index stores their frame records and
// the packer flushes their last blocks.
const (
	IOdd Stream = iota
	IEven
	P
	BOdd
	BEven
	NumStreams = 5
)

var streamNames = [NumStreams]string{"I-odd", "I-even", "P", "B-odd", "B-even"}

// String returns the paper's name of the stream, e.g. "I-odd".
func (s Stream) String() string {
	if s < NumStreams {
		return streamNames[s]
	}
	return fmt.Sprintf("Stream(%d)", uint8(s))
}

// Kind is a picture's coding type as stored in frame records.
type Kind uint8

// Coding types.
const (
	KindI Kind = iota
	KindP
	KindB
)

// Level is a play level of FG Fig. 1, 1 (all frames) to 5 (odd I frames
// only).
type Level int

// The play levels.
const (
	L1 Level = 1 + iota
	L2
	L3
	L4
	L5
)

// Levels lists the play levels.
var Levels = []Level{L1, L2, L3, L4, L5}

// Valid reports whether l is one of L1 to L5.
func (l Level) Valid() bool { return l >= L1 && l <= L5 }

// String returns "L1" to "L5".
func (l Level) String() string { return fmt.Sprintf("L%d", int(l)) }

// ParseLevel parses "L1" to "L5" (or "1" to "5").
func ParseLevel(s string) (Level, error) {
	if len(s) == 2 && (s[0] == 'L' || s[0] == 'l') {
		s = s[1:]
	}
	if len(s) == 1 && s[0] >= '1' && s[0] <= '5' {
		return Level(s[0] - '0'), nil
	}
	return 0, fmt.Errorf("%w: play level %q is not L1 to L5", ErrInvalid, s)
}

// Includes reports whether level l delivers stream s: L1 everything, L2
// drops BEven, L3 all non-reference B, L4 everything but I, L5 keeps only
// IOdd (FG Fig. 1).
func (l Level) Includes(s Stream) bool {
	switch l {
	case L1:
		return s < NumStreams
	case L2:
		return s <= BOdd
	case L3:
		return s <= P
	case L4:
		return s <= IEven
	case L5:
		return s == IOdd
	}
	return false
}

// Streams lists the streams level l reads (FG §III.1: Play Level 2 reads
// the I-odd, I-even, P and B-odd blocks; Play Level 5 only I-odd blocks).
func (l Level) Streams() []Stream {
	var out []Stream
	for s := range Stream(NumStreams) {
		if l.Includes(s) {
			out = append(out, s)
		}
	}
	return out
}

// IntraOnly reports whether level l holds only I pictures (L4, L5): a
// trick-play track of independently decodable samples.
func (l Level) IntraOnly() bool { return l == L4 || l == L5 }

// A Grouper assigns pictures, fed in decoding order, to streams. The zero
// value is ready to use.
//
// The rule, from the bitstream rather than from container flags:
//   - an I picture (every slice I or SI) goes to IOdd or IEven by its
//     number among I pictures (1, 3, 5... odd);
//   - a P picture, and a B picture that is a reference (nal_ref_idc != 0,
//     as the middle pictures of a B-pyramid are), goes to P: dropping a
//     reference B would break the pictures predicted from it, so it is
//     kept wherever P pictures are (L1 to L3);
//   - a non-reference B picture goes to BOdd or BEven by its number among
//     non-reference B pictures. Nothing references it, so L2 and L3 can
//     drop it.
type Grouper struct {
	intra, nonRefB int // pictures numbered so far, per kind
}

// Assign returns the stream of the next picture in decoding order.
func (g *Grouper) Assign(k Kind, ref bool) Stream {
	switch {
	case k == KindI:
		g.intra++
		return oddEven(g.intra, IOdd, IEven)
	case k == KindB && !ref:
		g.nonRefB++
		return oddEven(g.nonRefB, BOdd, BEven)
	}
	return P
}

func oddEven(n int, odd, even Stream) Stream {
	if n%2 == 1 {
		return odd
	}
	return even
}
