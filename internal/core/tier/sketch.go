package tier

// sketch is a count-min sketch of recent requests with aging, TinyLFU's
// frequency estimator (Einziger, Friedman and Manes, "TinyLFU: a highly
// efficient cache admission policy", ACM TOS 2017): four rows of 4-bit
// saturating counters (kept one a byte), indexed by double hashing of the
// key. Every window additions all counters are halved, so an estimate
// is a frequency over the last few windows and a title that stopped being
// watched fades out.
type sketch struct {
	rows   [sketchRows][]uint8
	mask   uint64
	adds   int   // additions since the last halving
	window int   // additions between halvings
	resets int64 // halvings so far
	total  int64 // additions so far

	groups   *groupSketch  // BlockReinsert's group counts; nil otherwise
	sessions *sessionTable // BlockReinsert's in-order viewers; nil when off
	// sessionsOff leaves the session table out of scores while set:
	// BlockReinsert's admission without Options.SessionAdmission.
	sessionsOff bool
	shrink      float64                  // weight of the group's rate in score
	oracle      func(key string) float64 // Options.ScoreOracle
}

const (
	sketchRows = 4
	sketchMax  = 15 // TinyLFU's 4-bit counters
)

// newSketch returns a sketch of at least width counters a row (rounded up
// to a power of two) that halves every window additions.
func newSketch(width, window int) *sketch {
	w := 1
	for w < width {
		w <<= 1
	}
	s := &sketch{mask: uint64(w - 1), window: max(window, 1)}
	for i := range s.rows {
		s.rows[i] = make([]uint8, w)
	}
	return s
}

// hashKey is FNV-1a, 64 bits: deterministic across runs and processes,
// which the simulator's reproducibility needs (hash/maphash is seeded at
// random).
func hashKey(key string) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(key); i++ {
		h ^= uint64(key[i])
		h *= 1099511628211
	}
	return h
}

// slot is the counter index of row i for hash h.
func (s *sketch) slot(h uint64, i int) uint64 {
	lo, hi := h&0xffffffff, h>>32|1
	return (lo + uint64(i)*hi + uint64(i*i)) & s.mask
}

// add counts one request for key: conservative update, only the counters
// at the current minimum grow, which keeps collisions from inflating
// estimates.
func (s *sketch) add(key string) {
	h := hashKey(key)
	m := s.estimateHash(h)
	if s.groups != nil {
		g := s.groups.group(key)
		gh := hashKey(g)
		s.groups.add(gh, m == 0)
		if s.sessions != nil && s.sessions.observe(gh, ordinal(key, g), s.total) {
			s.sessions.readReqs++
			if m > 0 {
				s.sessions.readRepeats++
			}
		}
	}
	if m < sketchMax {
		for i := range s.rows {
			if c := &s.rows[i][s.slot(h, i)]; *c == m {
				*c++
			}
		}
	}
	s.adds++
	s.total++
	if s.adds >= s.window {
		s.halve()
	}
}

// estimate is key's estimated number of recent requests.
func (s *sketch) estimate(key string) uint8 { return s.estimateHash(hashKey(key)) }

func (s *sketch) estimateHash(h uint64) uint8 {
	m := uint8(sketchMax)
	for i := range s.rows {
		m = min(m, s.rows[i][s.slot(h, i)])
	}
	return m
}

// score is key's estimated recent requests as the policies compare them:
// the sketch's estimate or, with groups, that estimate shrunk toward the
// group's requests per segment.
func (s *sketch) score(key string) float64 {
	if s.oracle != nil {
		return s.oracle(key)
	}
	return s.scoreHash(s.hashOf(key))
}

// scoreSeg is score for a segment on flash, whose hashes it keeps.
func (s *sketch) scoreSeg(seg *Segment) float64 {
	if s.oracle != nil {
		return s.oracle(seg.Key)
	}
	return s.scoreHash(seg.hash(s.hashOf))
}

// scoreHash is score for a key whose hashes are known.
func (s *sketch) scoreHash(h keyHash) float64 {
	e := float64(s.estimateHash(h.key))
	if s.groups == nil {
		return e
	}
	rate := s.groups.rateHash(h.group)
	if s.sessions != nil && s.sessions.readThrough(h.group) {
		if r, ok := s.sessions.readRate(s.groups.rateHashRatio(h.group, true)); ok {
			rate = r
		}
	}
	return (1-s.shrink)*e + s.shrink*min(rate, sketchMax) + s.sessionValue(h)
}

// sessionValue is the requests per window the viewers reading key's group
// in order will make for it (session.go); 0 without a session table.
func (s *sketch) sessionValue(h keyHash) float64 {
	if s.sessions == nil || s.sessionsOff || s.oracle != nil {
		return 0
	}
	return s.sessions.value(h.group, h.ord, s.total, float64(s.window))
}

// keyHash is a key's hash, its group's and its ordinal in the group
// (session.go): what scoring a key costs to compute, kept with the
// segments that are scored again and again.
type keyHash struct {
	key, group uint64
	ord        int32
}

// hashOf is key's hashes; its group's by the groups' function
// (Options.Group) when there are groups.
func (s *sketch) hashOf(key string) keyHash {
	if s.groups == nil {
		return keyHash{key: hashKey(key), ord: -1}
	}
	g := s.groups.group(key)
	return keyHash{hashKey(key), hashKey(g), ordinal(key, g)}
}

// halve ages every counter (TinyLFU's reset).
func (s *sketch) halve() {
	for i := range s.rows {
		for j, c := range s.rows[i] {
			s.rows[i][j] = c >> 1
		}
	}
	if s.groups != nil {
		s.groups.halve()
	}
	if s.sessions != nil {
		s.sessions.readReqs /= 2
		s.sessions.readRepeats /= 2
	}
	s.adds /= 2
	s.resets++
}
