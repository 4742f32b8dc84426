package origin

import (
	"bytes"
	"encoding/binary"
	"hash/fnv"
)

// Synthetic content is SplitMix64 in counter mode: byte b of an object is
// byte b%8 (little endian) of word(key, b/8), where key is derived from the
// seed and the object's path. Any byte range can thus be generated (and
// checked) on its own, and the fill loop carries no dependency from one
// word to the next but a counter, so it runs at memory speed: several
// GB/s, far above what a benchmark of the tiers needs. It is specified
// here rather than taken from math/rand, so the bytes are the same under
// every Go release. Statistical quality beyond "no two objects or offsets
// alike" does not matter.

// gamma is SplitMix64's increment, 2^64 / the golden ratio.
const gamma = 0x9e3779b97f4a7c15

// mix64 is SplitMix64's output function (Stafford's Mix13).
func mix64(z uint64) uint64 {
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// word returns 8-byte word i of the object with key.
func word(key, i uint64) uint64 { return mix64(key + (i+1)*gamma) }

// objectKey derives an object's key from the seed and its path.
func objectKey(seed uint64, path string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(path))
	return mix64(h.Sum64() ^ mix64(seed^0x5354524154410000)) // "STRATA"
}

// fill writes the bytes at offset off of the object with key into p.
func fill(p []byte, key uint64, off int64) {
	w := uint64(off) / 8
	if skip := int(off % 8); skip != 0 {
		b := wordBytes(key, w)
		n := copy(p, b[skip:])
		p, w = p[n:], w+1
	}
	full := len(p) &^ 7
	fillWords(p[:full], key+(w+1)*gamma)
	if full < len(p) {
		w += uint64(full / 8)
		b := wordBytes(key, w)
		copy(p[full:], b[:])
	}
}

// fillWords fills p, a whole number of words, starting from counter s.
func fillWords(p []byte, s uint64) {
	for i := 0; i+8 <= len(p); i += 8 {
		binary.LittleEndian.PutUint64(p[i:i+8], mix64(s))
		s += gamma
	}
}

func wordBytes(key, i uint64) [8]byte {
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], word(key, i))
	return b
}

// matches reports whether p holds the bytes at offset off of the object
// with key, generating them a page at a time.
func matches(p []byte, key uint64, off int64) bool {
	var buf [4096]byte
	for len(p) > 0 {
		n := min(len(p), len(buf))
		fill(buf[:n], key, off)
		if !bytes.Equal(buf[:n], p[:n]) {
			return false
		}
		p, off = p[n:], off+int64(n)
	}
	return true
}
