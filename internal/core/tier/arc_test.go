package tier

import (
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"
)

var arcSeed = flag.Uint64("arc.seed", 0, "seed for the randomized ARC tests (0: from the clock)")

// dump prints p and the four lists, MRU end first, with their bytes.
func (a *ARC) dump() string {
	var b strings.Builder
	fmt.Fprintf(&b, "c=%d p=%d", a.c, a.p)
	for i, l := range a.lists() {
		fmt.Fprintf(&b, "\n%s %d:", arcListNames[i], sumItems(l))
		for _, it := range l {
			fmt.Fprintf(&b, " %s(%d)", it.key, it.size)
		}
	}
	return b.String()
}

var arcListNames = [4]string{"t1", "t2", "b1", "b2"}

// lists returns T1, T2, B1 and B2, MRU end first.
func (a *ARC) lists() [4][]refItem {
	var out [4][]refItem
	for i, l := range []*arcList{&a.t1, &a.t2} {
		for e := l.root.next; e != &l.root; e = e.next {
			out[i] = append(out[i], refItem{e.Key, e.Size})
		}
	}
	for i, l := range []*ghostList{&a.b1, &a.b2} {
		for g := l.root.next; g != &l.root; g = g.next {
			out[2+i] = append(out[2+i], refItem{g.key, g.size})
		}
	}
	return out
}

// check verifies the ARC's invariants from its lists, not its counters:
// byte and length counters, the maps, every key in at most one list,
// T1+T2 <= c, T1+B1 <= c, T1+T2+B1+B2 <= 2c and 0 <= p <= c.
func (a *ARC) check() error {
	ls := a.lists()
	var sums [4]int64
	seen := make(map[string]string)
	for i, l := range ls {
		sums[i] = sumItems(l)
		for _, it := range l {
			if prev, dup := seen[it.key]; dup {
				return fmt.Errorf("arc: %q in %s and %s", it.key, prev, arcListNames[i])
			}
			seen[it.key] = arcListNames[i]
		}
	}
	return errors.Join(a.checkCounters(ls, sums), a.checkBounds(sums))
}

func (a *ARC) checkCounters(ls [4][]refItem, sums [4]int64) error {
	counted := [4]int64{a.t1.bytes, a.t2.bytes, a.b1.bytes, a.b2.bytes}
	lens := [4]int{a.t1.len, a.t2.len, a.b1.len, a.b2.len}
	for i := range ls {
		if counted[i] != sums[i] || lens[i] != len(ls[i]) {
			return fmt.Errorf("arc: %s holds %d bytes in %d, counts %d in %d",
				arcListNames[i], sums[i], len(ls[i]), counted[i], lens[i])
		}
	}
	if len(a.home) != len(ls[0])+len(ls[1]) || len(a.ghosts) != len(ls[2])+len(ls[3]) {
		return fmt.Errorf("arc: %d homes, %d ghosts for lists of %d %d %d %d",
			len(a.home), len(a.ghosts), len(ls[0]), len(ls[1]), len(ls[2]), len(ls[3]))
	}
	for k, g := range a.ghosts {
		if g.key != k || (g.list != &a.b1 && g.list != &a.b2) {
			return fmt.Errorf("arc: ghost %q filed under %q", g.key, k)
		}
	}
	return nil
}

func (a *ARC) checkBounds(s [4]int64) error {
	t1, t2, b1, b2 := s[0], s[1], s[2], s[3]
	if t1+t2 > a.c || t1+b1 > a.c || t1+t2+b1+b2 > 2*a.c || a.p < 0 || a.p > a.c {
		return fmt.Errorf("arc: c=%d p=%d t1=%d t2=%d b1=%d b2=%d out of bounds", a.c, a.p, t1, t2, b1, b2)
	}
	return nil
}

func sumItems(l []refItem) (n int64) {
	for _, it := range l {
		n += it.size
	}
	return n
}

// refARC is the reference ARC for the randomized tests: slices, linear
// searches and recomputed sums, written from the paper's case analysis in
// bytes and driven the way RAMPool drives a policy.
type refARC struct {
	c, p int64
	l    [4][]refItem // T1, T2, B1, B2, MRU first
}

type refItem struct {
	key  string
	size int64
}

const (
	refT1 = iota
	refT2
	refB1
	refB2
)

func (r *refARC) find(key string) (list, i int) {
	for li, l := range r.l {
		if i := slices.IndexFunc(l, func(it refItem) bool { return it.key == key }); i >= 0 {
			return li, i
		}
	}
	return -1, -1
}

func (r *refARC) take(li, i int) refItem {
	it := r.l[li][i]
	r.l[li] = slices.Delete(r.l[li], i, i+1)
	return it
}

func (r *refARC) pushFront(li int, it refItem) {
	r.l[li] = slices.Insert(r.l[li], 0, it)
}

// insert is RAMPool.Insert over ARC: replace a resident copy, adapt p on a
// ghost hit, REPLACE until the entry fits, enter T1 or T2, trim the ghosts.
func (r *refARC) insert(key string, size int64) bool {
	if size > r.c {
		return false
	}
	r.remove(key)
	li, _ := r.find(key)
	if li == refB1 || li == refB2 {
		r.adapt(li, size)
	}
	for sumItems(r.l[refT1])+sumItems(r.l[refT2])+size > r.c {
		r.replace(li == refB2)
	}
	dest := refT1
	if li == refB1 || li == refB2 {
		dest = refT2
		if gl, gi := r.find(key); gl >= 0 {
			r.take(gl, gi)
		}
	}
	r.pushFront(dest, refItem{key, size})
	r.trim()
	return true
}

func (r *refARC) adapt(li int, size int64) {
	b1, b2 := sumItems(r.l[refB1]), sumItems(r.l[refB2])
	if li == refB1 {
		d := size
		if b1 < b2 {
			d = size * (b2 / b1)
		}
		r.p = min(r.c, r.p+d)
		return
	}
	d := size
	if b2 < b1 {
		d = size * (b1 / b2)
	}
	r.p = max(0, r.p-d)
}

func (r *refARC) replace(b2hit bool) {
	t1 := sumItems(r.l[refT1])
	fromT1 := len(r.l[refT1]) > 0 &&
		(len(r.l[refT2]) == 0 || t1 > r.p || (b2hit && t1 == r.p))
	src, ghost := refT2, refB2
	if fromT1 {
		src, ghost = refT1, refB1
	}
	r.pushFront(ghost, r.take(src, len(r.l[src])-1))
}

func (r *refARC) trim() {
	s := func(li int) int64 { return sumItems(r.l[li]) }
	for s(refT1)+s(refB1) > r.c && len(r.l[refB1]) > 0 {
		r.take(refB1, len(r.l[refB1])-1)
	}
	for s(refT1)+s(refT2)+s(refB1)+s(refB2) > 2*r.c && len(r.l[refB2]) > 0 {
		r.take(refB2, len(r.l[refB2])-1)
	}
}

func (r *refARC) touch(key string) {
	li, i := r.find(key)
	if li != refT1 && li != refT2 {
		panic("refARC: touch of " + key + ", not resident")
	}
	r.pushFront(refT2, r.take(li, i))
}

// remove drops a resident key without a ghost.
func (r *refARC) remove(key string) {
	if li, i := r.find(key); li == refT1 || li == refT2 {
		r.take(li, i)
	}
}

func arcRNG(t *testing.T) *rand.Rand {
	seed := *arcSeed
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	t.Logf("seed %d (rerun with -arc.seed=%d)", seed, seed)
	return rand.New(rand.NewPCG(seed, 0x415243))
}

// TestARCRandom drives Caches built on ARC with random requests,
// replacements, invalidations, monitor passes and block writes, and after
// every step compares the ARC with refARC and checks both the ARC's
// invariants and Cache.Check.
func TestARCRandom(t *testing.T) {
	rng := arcRNG(t)
	for trial := range 60 {
		s := newARCSim(t, rng)
		for step := range 1500 {
			op := s.step()
			if err := s.verify(); err != nil {
				t.Fatalf("trial %d step %d (%s): %v\narc: %s", trial, step, op, err, s.arc.dump())
			}
		}
	}
}

// arcSim is one randomized run: a Cache on ARC and the reference.
type arcSim struct {
	t     *testing.T
	rng   *rand.Rand
	c     *Cache
	arc   *ARC
	ref   *refARC
	keys  []string
	sizes map[string]int64
	now   time.Duration
}

func newARCSim(t *testing.T, rng *rand.Rand) *arcSim {
	budget := 40 + rng.Int64N(400)
	s := &arcSim{t: t, rng: rng, arc: NewARC(budget), ref: &refARC{c: budget, p: budget / 2},
		sizes: make(map[string]int64)}
	for i := range 8 + rng.IntN(80) {
		k := fmt.Sprintf("t%d/s%d", i%5, i)
		s.keys = append(s.keys, k)
		s.sizes[k] = 1 + rng.Int64N(budget/3)
		if rng.IntN(50) == 0 {
			s.sizes[k] = budget + 1 // never cached
		}
	}
	opts := Options{RAMBytes: budget, RAMPolicy: s.arc, BlockSize: 4096, Alignment: 512,
		MonitorRoomBytes: rng.Int64N(budget), Inclusive: rng.IntN(2) == 0}
	if rng.IntN(3) > 0 {
		opts.DeviceSize = opts.BlockSize * (MetaBlocks + 2 + rng.Int64N(6))
	}
	c, _, err := New(opts, 1)
	if err != nil {
		t.Fatal(err)
	}
	s.c = c
	return s
}

func (s *arcSim) step() string {
	s.now += time.Millisecond
	key := s.keys[s.rng.IntN(len(s.keys))]
	switch r := s.rng.IntN(100); {
	case r < 65:
		return s.request(key)
	case r < 72:
		s.insert(key)
		return "replace " + key
	case r < 75:
		return s.invalidate(key)
	case r < 88:
		s.c.Monitor(s.now)
		return "monitor"
	default:
		return s.write()
	}
}

// request looks key up as a client would, inserting it after a miss (and,
// inclusive like ZFS's L2ARC, after a flash hit).
func (s *arcSim) request(key string) string {
	pooled := s.c.InRAM(key)
	l := s.c.Lookup(key, s.now)
	switch {
	case pooled:
		s.ref.touch(key)
		return "hit " + key
	case l.Tier == Miss || (l.Tier == SSD && s.c.Options().Inclusive):
		s.insert(key)
		return "miss " + key
	}
	return "pending " + key
}

func (s *arcSim) insert(key string) {
	_, onFlash := s.c.FlashSegment(key)
	refused := onFlash && !s.c.Options().Inclusive
	ok := s.c.Insert(key, s.sizes[key], nil, s.c.Token(), s.now)
	if refused {
		if ok {
			s.t.Fatalf("insert of %s, on flash, accepted", key)
		}
		return
	}
	if want := s.ref.insert(key, s.sizes[key]); ok != want {
		s.t.Fatalf("insert %s: cache %t, reference %t", key, ok, want)
	}
}

func (s *arcSim) invalidate(key string) string {
	prefix := key
	if s.rng.IntN(3) == 0 {
		prefix = key[:strings.IndexByte(key, '/')+1]
	}
	mw, err := s.c.Invalidate(prefix, s.now)
	if err != nil {
		s.t.Fatal(err)
	}
	if mw != nil {
		s.c.MetaDone(mw, nil)
	}
	for _, k := range s.keys {
		if covers(prefix, k) {
			s.ref.remove(k)
		}
	}
	return "invalidate " + prefix
}

func (s *arcSim) write() string {
	w := s.c.Feed(s.now, Signals{Now: s.now})
	if w == nil {
		return "feed: none"
	}
	var err error
	if s.rng.IntN(10) == 0 {
		err = errors.New("injected")
	}
	s.c.WriteDone(w, err, s.now)
	return fmt.Sprintf("write block %d, err %v", w.Block, err)
}

func (s *arcSim) verify() error {
	got, want := s.arc.lists(), s.ref.l
	for i := range got {
		if !slices.Equal(got[i], want[i]) {
			return fmt.Errorf("%s = %v, reference %v", arcListNames[i], got[i], want[i])
		}
	}
	if p := s.arc.Sizes().P; p != s.ref.p {
		return fmt.Errorf("p = %d, reference %d", p, s.ref.p)
	}
	return errors.Join(s.arc.check(), s.c.Check())
}

// TestARCWalkTailIsEvictionOrder checks that WalkTail yields the entries in
// the order that evicting them one by one, for inserts that are not ghost
// hits, removes them.
func TestARCWalkTailIsEvictionOrder(t *testing.T) {
	rng := arcRNG(t)
	for trial := range 200 {
		budget := 20 + rng.Int64N(300)
		a := NewARC(budget)
		pool := NewRAMPool(budget, a)
		for range rng.IntN(400) {
			k := fmt.Sprintf("k%d", rng.IntN(40))
			if _, hit := pool.Get(k); !hit {
				pool.Insert(&Entry{Key: k, Size: 1 + rng.Int64N(budget/4)})
			}
		}
		var walked, evicted []string
		a.WalkTail(func(e *Entry) bool { walked = append(walked, e.Key); return true })
		for v := a.Victim(); v != nil; v = a.Victim() {
			evicted = append(evicted, v.Key)
			pool.Remove(v)
		}
		if !slices.Equal(walked, evicted) {
			t.Fatalf("trial %d: walked %v, evicted %v", trial, walked, evicted)
		}
		if err := a.check(); err != nil {
			t.Fatalf("trial %d: %v", trial, err)
		}
	}
}

// TestARCInsertWithoutAdmitting drives the policy without a pool: Insert
// finds the ghost hit itself.
func TestARCInsertWithoutAdmitting(t *testing.T) {
	a := NewARC(100)
	a.Insert(&Entry{Key: "a", Size: 30})
	a.Remove(a.Victim()) // an eviction: a becomes a B1 ghost
	a.Insert(&Entry{Key: "b", Size: 10})
	a.Remove(a.t1.back()) // an explicit removal: no ghost for b
	a.Insert(&Entry{Key: "a", Size: 30})
	want := ARCSizes{C: 100, P: 80, MFU: 30}
	if got := a.Sizes(); got != want {
		t.Fatalf("sizes %+v, want %+v", got, want)
	}
	if err := a.check(); err != nil {
		t.Fatal(err)
	}
}

func TestARCScaledCaps(t *testing.T) {
	for _, tc := range []struct{ size, mult, limit, want int64 }{
		{10, 3, 100, 30},
		{10, 30, 100, 100},
		{0, 5, 100, 0},
		{1 << 40, 1 << 40, 1 << 50, 1 << 50}, // would overflow
	} {
		if got := scaled(tc.size, tc.mult, tc.limit); got != tc.want {
			t.Errorf("scaled(%d, %d, %d) = %d, want %d", tc.size, tc.mult, tc.limit, got, tc.want)
		}
	}
}
