package tier

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"
)

// TestDataDriven runs the golden files in testdata/. Each file is a script
// of commands against one Cache with no payload bytes:
//
//	new ram=<bytes> [block=<bytes>] [blocks=<n>] [policy=lru|lfu-mean|lfu-median|fifo|tinylfu|reinsert]
//	    [ring=<bytes>] [monitor=<fraction>] [monitor-bytes=<n>] [threshold=<u>] [inclusive]
//	    [ram-policy=lru|arc] [align] [flush-idle] [freq-window=<requests>]
//	    [reinsert-max=<n>] [reinsert-est=<n>] [reinsert-share=<f>] [shrink=<f>]
//	    [objective=requests|bytes]
//	insert key=<k> size=<bytes> [token=<t>]    prints what was evicted
//	stage key=<k> size=<bytes>                  queues an object for flash, bypassing RAM
//	lookup key=<k>                              prints where the key was found
//	monitor                                     prints what the monitor copied to the ring
//	feed [util=<u>] [reads=<n>]                 prints the planned block write
//	admission threshold=<u>                     replaces the admission policy (a reload)
//	flush                                       plans the partial block
//	done [fail]                                 completes the write in flight
//	rescue [fail=<k>]                           hands the write in flight's rescued segments to the core
//	                                            (as a driver does after reading them), k's read failing
//	invalidate prefix=<p>
//	state                                       prints RAM, ring, flash blocks
//	victim                                      prints the block policy's next victim
//	arc                                         prints the ARC's p and lists (ram-policy=arc)
//	freq key=<k>...                             prints tinylfu's estimates and its admission bar
//	stats
//	wear at=<seconds> written=<bytes> capacity=<bytes>
//	                                            samples the write rate (no cache needed)
//
// Regenerate with go test -run TestDataDriven -rewrite.
func TestDataDriven(t *testing.T) {
	datadriven.Walk(t, "testdata", func(t *testing.T, path string) {
		h := &harness{}
		datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
			out := h.run(t, d)
			if h.c != nil {
				if err := h.c.Check(); err != nil {
					t.Fatalf("%s: %v", d.Pos, err)
				}
			}
			return out
		})
	})
}

type harness struct {
	c    *Cache
	now  time.Duration
	w    *BlockWrite
	wear Wear
}

func (h *harness) run(t *testing.T, d *datadriven.TestData) string {
	h.now += time.Second
	switch d.Cmd {
	case "new":
		return h.cmdNew(t, d)
	case "insert":
		return h.cmdInsert(t, d)
	case "lookup":
		l := h.c.Lookup(arg(t, d, "key"), h.now)
		if l.Tier == SSD {
			return "ssd " + fmtChunks(l.Seg.Chunks)
		}
		return l.Tier.String()
	case "monitor":
		before := ringKeys(h.c.ring)
		h.c.Monitor(h.now)
		return "ring: " + strings.Join(ringKeys(h.c.ring)[len(before):], " ")
	case "feed":
		sig := Signals{Now: h.now, Utilization: argFloat(t, d, "util", 0), ReadsWaiting: argInt(t, d, "reads", 0)}
		return h.planned(h.c.Feed(h.now, sig))
	case "flush":
		return h.planned(h.c.Flush(h.now))
	case "admission":
		h.c.SetAdmission(Threshold{Max: argFloat(t, d, "threshold", 0)})
		return "ok"
	case "done":
		return h.cmdDone(d)
	case "rescue":
		if h.w == nil {
			return "no write in flight"
		}
		fail := ""
		if d.HasArg("fail") {
			fail = arg(t, d, "fail")
		}
		for _, s := range h.w.Rescue {
			h.c.Rescued(s.Key, nil, s.Key != fail)
		}
		planned, lost := h.c.Reinserted()
		return fmt.Sprintf("reinserted: planned %d, lost %d", planned, lost)
	case "invalidate":
		mw, err := h.c.Invalidate(arg(t, d, "prefix"), h.now)
		if err != nil {
			return err.Error()
		}
		h.c.MetaDone(mw, nil)
		return fmt.Sprintf("meta slot=%d seq=%d table=%v", mw.Slot, mw.Super.Seq, mw.Super.Invalidate)
	case "state":
		return h.c.dump()
	case "victim":
		if b := h.c.ix.policy.victim(); b != nil {
			return fmt.Sprintf("block %d", b.num)
		}
		return "none"
	case "stage":
		if !h.c.Stage(arg(t, d, "key"), int64(argInt(t, d, "size", 0)), nil, 1) {
			return "not staged"
		}
		return "ring: " + strings.Join(ringKeys(h.c.ring), " ")
	case "wear":
		return h.cmdWear(t, d)
	case "stats":
		return fmt.Sprintf("%+v", h.c.Stats())
	case "arc":
		return h.c.ram.policy.(*ARC).dump()
	case "freq":
		return h.c.dumpFreq(d)
	}
	t.Fatalf("unknown command %q", d.Cmd)
	return ""
}

func (h *harness) cmdNew(t *testing.T, d *datadriven.TestData) string {
	opts := Options{
		RAMBytes:         int64(argInt(t, d, "ram", 0)),
		BlockSize:        int64(argInt(t, d, "block", 8192)),
		RingBytes:        int64(argInt(t, d, "ring", 0)),
		MonitorRoom:      argFloat(t, d, "monitor", 0),
		MonitorRoomBytes: int64(argInt(t, d, "monitor-bytes", 0)),
		Alignment:        512,
		Inclusive:        d.HasArg("inclusive"),
		AlignObjects:     d.HasArg("align"),
		FlushIdle:        d.HasArg("flush-idle"),
		FreqWindow:       argInt(t, d, "freq-window", 0),
		ReinsertMax:      argInt(t, d, "reinsert-max", 0),
		ReinsertMinEst:   argInt(t, d, "reinsert-est", 0),
		ReinsertShare:    argFloat(t, d, "reinsert-share", 0),
		GroupShrink:      argFloat(t, d, "shrink", 0),
	}
	opts.RAMPolicy = ramPolicy(t, d, opts.RAMBytes)
	opts.DeviceSize = opts.BlockSize * int64(argInt(t, d, "blocks", 0))
	if d.HasArg("policy") {
		p, err := ParseBlockPolicy(arg(t, d, "policy"))
		if err != nil {
			t.Fatal(err)
		}
		opts.BlockPolicy = p
	}
	if d.HasArg("objective") {
		o, err := ParseObjective(arg(t, d, "objective"))
		if err != nil {
			t.Fatal(err)
		}
		opts.Objective = o
	}
	if d.HasArg("threshold") {
		opts.Admission = Threshold{Max: argFloat(t, d, "threshold", 0)}
	}
	c, _, err := New(opts, 7)
	if err != nil {
		return err.Error()
	}
	c.pruneAbove = 0 // show pruning on every metadata write
	h.c, h.w = c, nil
	return ""
}

// ramPolicy returns the RAM policy that ram-policy names, nil for the
// default.
func ramPolicy(t *testing.T, d *datadriven.TestData, budget int64) RAMPolicy {
	if !d.HasArg("ram-policy") {
		return nil
	}
	switch s := arg(t, d, "ram-policy"); s {
	case "lru":
		return nil
	case "arc":
		return NewARC(budget)
	default:
		t.Fatalf("unknown RAM policy %q", s)
		return nil
	}
}

func (h *harness) cmdInsert(t *testing.T, d *datadriven.TestData) string {
	key := arg(t, d, "key")
	tok := h.c.inv.epoch
	if d.HasArg("token") {
		tok = Token(argInt(t, d, "token", 0))
	}
	before := slices.Clone(h.ramKeys())
	ok := h.c.Insert(key, int64(argInt(t, d, "size", 0)), nil, tok, h.now)
	if !ok {
		return "not inserted"
	}
	var gone []string
	for _, k := range before {
		if _, in := h.c.ram.Peek(k); !in {
			gone = append(gone, k)
		}
	}
	if len(gone) == 0 {
		return "ok"
	}
	return "evicted: " + strings.Join(gone, " ")
}

func (h *harness) cmdWear(t *testing.T, d *datadriven.TestData) string {
	now := time.Duration(argInt(t, d, "at", 0)) * time.Second
	written := uint64(argInt(t, d, "written", 0))
	sampled := h.wear.Sample(now, written)
	class, known := h.wear.Class(int64(argInt(t, d, "capacity", 0)))
	if !known {
		return fmt.Sprintf("sampled=%t rate=%.0f class=none", sampled, h.wear.Rate())
	}
	avg := h.wear.AverageRate(now, written)
	return fmt.Sprintf("sampled=%t rate=%.0f average=%.0f class=%s", sampled, h.wear.Rate(), avg, class)
}

func (h *harness) cmdDone(d *datadriven.TestData) string {
	if h.w == nil {
		return "no write in flight"
	}
	var err error
	if d.HasArg("fail") {
		err = fmt.Errorf("injected")
	}
	before := h.c.ix.Segments()
	h.c.WriteDone(h.w, err, h.now)
	h.w = nil
	return fmt.Sprintf("segments on flash: %d -> %d", before, h.c.ix.Segments())
}

func (h *harness) planned(w *BlockWrite) string {
	if w == nil {
		return "no write"
	}
	h.w = w
	var b strings.Builder
	fmt.Fprintf(&b, "write block=%d gen=%d used=%d victim=%t", w.Block, w.Gen, w.Used, w.Victim)
	for _, r := range w.Records {
		fmt.Fprintf(&b, "\n  %s %d/%d len=%d off=%d seggen=%d", r.Key, r.Seq, r.Chunks, r.Len, r.Off, r.SegGen)
	}
	for _, s := range w.Rescue {
		fmt.Fprintf(&b, "\n  rescue %s from %s", s.Key, fmtChunks(s.Chunks))
	}
	return b.String()
}

func (h *harness) ramKeys() []string {
	var keys []string
	h.c.ram.policy.WalkTail(func(e *Entry) bool {
		keys = append(keys, e.Key)
		return true
	})
	return keys
}

func ringKeys(r *Ring) []string {
	var keys []string
	for _, it := range r.items[r.head:] {
		keys = append(keys, it.Key)
	}
	return keys
}

func fmtChunks(cs []Chunk) string {
	var parts []string
	for _, c := range cs {
		parts = append(parts, fmt.Sprintf("b%d@%d+%d", c.Block, c.Off, c.Len))
	}
	return strings.Join(parts, " ")
}

// dump prints the cache's state: RAM from head to tail with the monitor
// room marked, the ring, and the flash blocks by number with their segments.
func (c *Cache) dump() string {
	var b strings.Builder
	var ram []string
	room := monitorRoomLen(c.ram.Len(), c.opts.MonitorRoom)
	c.ram.policy.WalkTail(func(e *Entry) bool {
		s := fmt.Sprintf("%s(%d)", e.Key, e.Size)
		if room > 0 {
			s += "*"
			room--
		}
		ram = append(ram, s)
		return true
	})
	slices.Reverse(ram)
	fmt.Fprintf(&b, "ram %d/%d: %s\n", c.ram.Used(), c.ram.Budget(), strings.Join(ram, " "))
	fmt.Fprintf(&b, "ring %d/%d: %s\n", c.ring.Used(), c.ring.Capacity(), strings.Join(ringKeys(c.ring), " "))
	if len(c.rescue.items) > 0 {
		var rs []string
		for _, it := range c.rescue.items {
			s := it.Key
			if it.waiting {
				s += "(waiting)"
			}
			rs = append(rs, s)
		}
		fmt.Fprintf(&b, "rescue: %s\n", strings.Join(rs, " "))
	}
	nums := make([]uint32, 0, len(c.ix.blocks))
	for n := range c.ix.blocks {
		nums = append(nums, n)
	}
	slices.Sort(nums)
	for _, n := range nums {
		bl := c.ix.blocks[n]
		var segs []string
		for _, s := range bl.segs {
			segs = append(segs, fmt.Sprintf("%s#%d", s.Key, s.count))
		}
		fmt.Fprintf(&b, "block %d gen=%d: %s\n", n, bl.gen, strings.Join(segs, " "))
	}
	fmt.Fprintf(&b, "free blocks: %d", c.ix.FreeBlocks())
	return b.String()
}

// dumpFreq prints BlockTinyLFU's estimates of the keys of a freq command,
// the halvings so far, the block values from the LRU end and the
// admission bar.
func (c *Cache) dumpFreq(d *datadriven.TestData) string {
	var b strings.Builder
	for _, a := range d.CmdArgs {
		for _, k := range a.Vals {
			if c.freq.groups != nil {
				fmt.Fprintf(&b, "%s=%d(score %.3g) ", k, c.freq.estimate(k), c.freq.score(k))
			} else {
				fmt.Fprintf(&b, "%s=%d ", k, c.freq.estimate(k))
			}
		}
	}
	p := c.ix.policy.(*tinyLFUPolicy)
	fmt.Fprintf(&b, "halvings=%d\nblocks from the LRU end:", c.freq.resets)
	if c.opts.BlockPolicy == BlockReinsert {
		b.WriteString(" (score lost per KiB freed)")
	}
	for bl := p.lru.l.root.prev; bl != &p.lru.l.root; bl = bl.prev {
		v := p.value(bl)
		if c.opts.BlockPolicy == BlockReinsert {
			v *= 1024
		}
		fmt.Fprintf(&b, " %d=%.3g", bl.num, v)
	}
	if c.opts.BlockPolicy == BlockReinsert {
		b.WriteString("\nadmission: per byte over what the victim loses")
	} else if bar, ok := p.bar(); ok && c.ix.free.len() == 0 {
		fmt.Fprintf(&b, "\nadmission bar: %.3g", bar)
	} else {
		b.WriteString("\nadmission: open (free blocks)")
	}
	fmt.Fprintf(&b, "\nfiltered: %d", c.filtered)
	return b.String()
}

func arg(t *testing.T, d *datadriven.TestData, key string) string {
	var s string
	d.ScanArgs(t, key, &s)
	return s
}

func argInt(t *testing.T, d *datadriven.TestData, key string, def int) int {
	if !d.HasArg(key) {
		return def
	}
	var v int
	d.ScanArgs(t, key, &v)
	return v
}

func argFloat(t *testing.T, d *datadriven.TestData, key string, def float64) float64 {
	if !d.HasArg(key) {
		return def
	}
	var s string
	d.ScanArgs(t, key, &s)
	var v float64
	if _, err := fmt.Sscan(s, &v); err != nil {
		t.Fatal(err)
	}
	return v
}
