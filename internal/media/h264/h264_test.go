package h264

import (
	"errors"
	"testing"
)

// nal builds a 4-byte length-prefixed NAL unit with header byte hdr and a
// slice header whose first_mb_in_slice is 0 and slice_type is st
// (Exp-Golomb: "1" then st+1 in bits).
func nal(hdr byte, st int) []byte {
	// ue(0) = "1"; ue(st) for st < 15 fits with the stop bit in one or
	// two bytes; pad with a 1 bit and zeros.
	bits := "1" + ue(st) + "1"
	for len(bits)%8 != 0 {
		bits += "0"
	}
	body := []byte{hdr}
	for i := 0; i < len(bits); i += 8 {
		var b byte
		for j := range 8 {
			b = b<<1 | (bits[i+j] - '0')
		}
		body = append(body, b)
	}
	body = append(body, 0xAA, 0xAA, 0xAA, 0xAA) // slice data: the reader looks ahead
	n := len(body)
	return append([]byte{0, 0, byte(n >> 8), byte(n)}, body...)
}

func ue(v int) string {
	v++
	s := ""
	for x := v; x > 0; x >>= 1 {
		s = string(rune('0'+x&1)) + s
	}
	for range len(s) - 1 {
		s = "0" + s
	}
	return s
}

func TestClassify(t *testing.T) {
	sei := []byte{0, 0, 0, 2, 0x06, 0x80}
	cases := []struct {
		name   string
		sample []byte
		want   Picture
	}{
		{"IDR", append(append([]byte{}, sei...), nal(0x65, 7)...), Picture{Type: I, Ref: true, IDR: true}},
		{"P ref", nal(0x41, 5), Picture{Type: P, Ref: true}},
		{"B non-ref", nal(0x01, 6), Picture{Type: B}},
		{"B ref (pyramid)", nal(0x21, 1), Picture{Type: B, Ref: true}},
		{"I then P slices", append(nal(0x41, 2), nal(0x41, 0)...), Picture{Type: P, Ref: true}},
		{"SI", nal(0x61, 4), Picture{Type: I, Ref: true}},
	}
	for _, c := range cases {
		got, err := Classify(c.sample, 4)
		if err != nil || got != c.want {
			t.Errorf("%s: got %+v, %v; want %+v", c.name, got, err, c.want)
		}
	}
	for _, bad := range [][]byte{nil, sei, {0, 0, 0, 9, 0x65}, {0, 0}} {
		if _, err := Classify(bad, 4); !errors.Is(err, ErrMalformed) {
			t.Errorf("%x: %v, want ErrMalformed", bad, err)
		}
	}
}

func FuzzClassify(f *testing.F) {
	f.Add(nal(0x65, 7), 4)
	f.Add(append(nal(0x01, 6), nal(0x21, 1)...), 4)
	f.Fuzz(func(t *testing.T, b []byte, n int) {
		Classify(b, n%5)
	})
}
