package model

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// TestSSDPresetsTables checks the presets against the device tables they
// were built from: FlashStream Table 2 (4 KB random reads and writes of SSD
// A and B) and the vendors' sequential rates. Drives are scaled down to
// 4 GiB (same geometry and timing) and filled first.
func TestSSDPresetsTables(t *testing.T) {
	cases := []struct {
		p                SSDParams
		rr4k, seqW, seqR float64 // MB/s
		rw4kLo, rw4kHi   float64 // MB/s, 4 KB random writes on the filled drive
	}{
		// Table 2: 14.8 MB/s reads, 0.02 MB/s writes; spec 98 / 170 MB/s.
		{OCZCoreV2(), 14.8, 98, 170, 0.01, 0.05},
		// Table 2: 15.5 MB/s reads, 3.25 MB/s writes; spec 70 / 250 MB/s.
		{IntelX25MG1(), 15.5, 70, 250, 1.5, 6},
		// FG Table 1: 80 MB/s write, 100 MB/s read.
		{MtronMSDSATA3025(), 0, 80, 100, 0, 1},
		{SamsungMCBQE32(), 0, 80, 100, 0, 1},
		{SamsungSLC64(), 0, 80, 100, 0, 1},
		{VoDLowEnd(), 0, 93, 160, 0.01, 0.05},
	}
	for _, c := range cases {
		t.Run(c.p.Name, func(t *testing.T) {
			s := newSSD(t, c.p.WithCapacity(4<<30))
			s.Fill(0, s.Size())
			d := newDriver(s, 1)
			seqW, _ := d.run(Write, 1<<20, 200, false, s.Size())
			within(t, "sequential 1 MiB writes MB/s", seqW, c.seqW, 0.05)
			seqR, _ := d.run(Read, 1<<20, 200, false, s.Size())
			within(t, "sequential 1 MiB reads MB/s", seqR, c.seqR, 0.06)
			if c.rr4k > 0 {
				rr, _ := d.run(Read, 4096, 2000, true, s.Size())
				within(t, "4 KiB random reads MB/s", rr, c.rr4k, 0.05)
			}
			if rw, _ := d.run(Write, 4096, 400, true, s.Size()); rw < c.rw4kLo || rw > c.rw4kHi {
				t.Errorf("4 KiB random writes: %.3f MB/s, want %.3f-%.3f", rw, c.rw4kLo, c.rw4kHi)
			}
		})
	}
}

// TestDesnoyersWAF validates the page-mapped FTL with greedy collection
// against Desnoyers' analytic WAF for uniformly random single-page writes,
// over-provisioning as a fraction of the user capacity (see DesnoyersWAF).
func TestDesnoyersWAF(t *testing.T) {
	for _, op := range []float64{0.07, 0.20, 0.28} {
		p := smallSSD(op, 128, 1)
		p.Capacity = 512 << 20
		s := newSSD(t, p)
		s.Fill(0, p.Capacity)
		pages := p.Capacity / p.PageSize
		rng := rand.New(rand.NewPCG(1, 2))
		s.Age(Aging{Overwrite: 4, Seed: 3}) // reach the steady state
		before := s.Stats()
		d := newDriver(s, 4)
		for range 4 * pages {
			d.now = s.Submit(d.now, Request{Op: Write, Offset: rng.Int64N(pages) * p.PageSize, Length: p.PageSize})
		}
		got, want := s.Stats().Sub(before).WAF(), DesnoyersWAF(op)
		t.Logf("op %.0f%%: simulated WAF %.2f, Desnoyers %.2f", op*100, got, want)
		within(t, "WAF", got, want, 0.10)
	}
}

func TestLambertW0(t *testing.T) {
	for _, x := range []float64{-1 / 2.718281828459045, -0.3, -0.01, 0, 0.5, 1, 10, 1e6} {
		w := LambertW0(x)
		if got := w * exp(w); abs64(got-x) > 1e-12*(1+abs64(x)) {
			t.Errorf("W0(%g) = %g: w e^w = %g", x, w, got)
		}
	}
	within(t, "Desnoyers WAF at 7%", DesnoyersWAF(0.07), 7.8, 0.01)
	within(t, "Desnoyers WAF at 20%", DesnoyersWAF(0.20), 3.2, 0.01)
	within(t, "Desnoyers WAF at 28%", DesnoyersWAF(0.28), 2.5, 0.01)
}

// TestRandomWritesDegrade checks that a page-mapped drive's 4 KiB random
// writes slow down as garbage collection starts copying, with WAF > 1.
func TestRandomWritesDegrade(t *testing.T) {
	s := newSSD(t, smallSSD(0.07, 64, 4))
	s.Fill(0, s.Size())
	d := newDriver(s, 5)
	fresh, _ := d.run(Write, 4096, 2000, true, s.Size())
	s.Age(Aging{Overwrite: 3, Seed: 6})
	before := s.Stats()
	aged, _ := d.run(Write, 4096, 20000, true, s.Size())
	waf := s.Stats().Sub(before).WAF()
	t.Logf("fresh %.2f MB/s, aged %.2f MB/s, WAF %.2f", fresh, aged, waf)
	if aged > fresh/3 || waf < 3 {
		t.Errorf("aged random writes %.2f MB/s vs fresh %.2f MB/s, WAF %.2f: want a collapse with WAF > 3", aged, fresh, waf)
	}
}

// lifetimeWorkload writes 16 KiB files into random free slots of a small
// page-mapped drive, half of them short-lived (deleted after 6% of the
// slots' worth of writes) and half long-lived (after 154%), so about 80%
// of the space is live. Deleted files are trimmed if trim is set; with
// separate, each lifetime class has its own stream (MS §3).
func lifetimeWorkload(t *testing.T, separate, trim bool) Stats {
	p := smallSSD(0.07, 64, 2)
	p.Streams = 3
	s := newSSD(t, p)
	const file = 16 << 10
	slots := s.Size() / file
	free := make([]int64, slots)
	for i := range free {
		free[i] = int64(i)
	}
	rng := rand.New(rand.NewPCG(7, 8))
	var now time.Duration
	deaths := map[int64][]int64{} // step -> slots freed then
	for step := range 8 * slots {
		for _, slot := range deaths[step] {
			if trim {
				now = s.Submit(now, Request{Op: Trim, Offset: slot * file, Length: file})
			}
			free = append(free, slot)
		}
		delete(deaths, step)
		k := rng.IntN(len(free))
		slot := free[k]
		free[k] = free[len(free)-1]
		free = free[:len(free)-1]
		life, stream := slots*6/100, 1
		if rng.IntN(2) == 0 {
			life, stream = slots*154/100, 2
		}
		if !separate {
			stream = 0
		}
		now = s.Submit(now, Request{Op: Write, Offset: slot * file, Length: file, Stream: stream})
		deaths[step+life] = append(deaths[step+life], slot)
	}
	return s.Stats()
}

// TestTrimReducesGC: without TRIM the drive keeps deleted files as valid
// data and copies them.
func TestTrimReducesGC(t *testing.T) {
	without, with := lifetimeWorkload(t, false, false), lifetimeWorkload(t, false, true)
	t.Logf("GC copies without TRIM %d (WAF %.2f), with TRIM %d (WAF %.2f)", without.GCCopies, without.WAF(), with.GCCopies, with.WAF())
	if with.GCCopies >= without.GCCopies/2 {
		t.Errorf("TRIM left %d GC copies, want well under %d", with.GCCopies, without.GCCopies)
	}
}

// TestStreamsReduceWAF: with one stream, short- and long-lived files share
// blocks and the long-lived ones are copied when the short-lived die; a
// stream per lifetime lets whole blocks die together.
func TestStreamsReduceWAF(t *testing.T) {
	one, sep := lifetimeWorkload(t, false, true), lifetimeWorkload(t, true, true)
	t.Logf("WAF one stream %.2f, a stream per lifetime %.2f (short %.2f, long %.2f)",
		one.WAF(), sep.WAF(), sep.Streams[1].WAF(), sep.Streams[2].WAF())
	if sep.GCCopies >= one.GCCopies/4 {
		t.Errorf("separate streams copied %d pages, want well under a quarter of one stream's %d", sep.GCCopies, one.GCCopies)
	}
}

// TestLogBlockMerges checks the three BAST merges and their cost.
func TestLogBlockMerges(t *testing.T) {
	p := OCZCoreV2().WithCapacity(1 << 30)
	s := newSSD(t, p)
	s.Fill(0, p.Capacity)
	unit := p.UnitSize()
	var now time.Duration
	write := func(off, n int64) { now = s.Submit(now, Request{Op: Write, Offset: off, Length: n}) }
	for off := int64(0); off < unit; off += unit / 4 { // in order: a switch
		write(off, unit/4)
	}
	write(3*unit, unit/2)                     // in order, then evicted: partial merge
	for i := range int64(2*p.LogBlocks + 1) { // small writes to many units: full merges
		write(5*unit+i*unit+4096, 4096)
	}
	st := s.Stats()
	if st.SwitchMerges != 1 || st.PartialMerges != 1 || st.FullMerges != int64(p.LogBlocks)+1 {
		t.Errorf("merges switch/partial/full = %d/%d/%d", st.SwitchMerges, st.PartialMerges, st.FullMerges)
	}
	upp := unit / p.PageSize
	if want := upp/2 + st.FullMerges*upp; st.GCCopies != want {
		t.Errorf("copies = %d, want %d", st.GCCopies, want)
	}
}

// TestReadsOverlapWrites checks per-die timelines: a small read to a die
// the long write does not use finishes before the write.
func TestReadsOverlapWrites(t *testing.T) {
	p := smallSSD(0.2, 64, 4)
	s := newSSD(t, p)
	s.Fill(0, p.Capacity)
	w := s.Submit(0, Request{Op: Write, Offset: 0, Length: 3 * p.PageSize}) // dies 0-2
	r := s.Submit(0, Request{Op: Read, Offset: 3 * p.PageSize, Length: p.PageSize})
	if r >= w {
		t.Errorf("read done at %v, not before the write at %v", r, w)
	}
}

// TestBackgroundGC checks that idle time refills the free pools and that
// the work is not host busy time.
func TestBackgroundGC(t *testing.T) {
	p := smallSSD(0.1, 64, 2)
	p.BackgroundGC, p.IdleDelay, p.HighWater = true, time.Millisecond, 8
	s := newSSD(t, p)
	s.Fill(0, p.Capacity)
	s.Age(Aging{Overwrite: 1, Seed: 1})
	busy := s.Busy(time.Hour)
	s.Submit(time.Hour, Request{Op: Read, Offset: 0, Length: 4096})
	for d := range p.dies() {
		if f := s.ftl.freeBlocks(d); f < p.HighWater {
			t.Errorf("die %d has %d free blocks after an idle hour, want >= %d", d, f, p.HighWater)
		}
	}
	if s.Stats().GCCopies == 0 {
		t.Error("no background copies")
	}
	if got := s.Busy(time.Hour); got != busy {
		t.Errorf("busy grew by %v while idle", got-busy)
	}
}

// TestAgeIsSilent checks that aging changes the state but not the stats or
// the clock.
func TestAgeIsSilent(t *testing.T) {
	s := newSSD(t, smallSSD(0.1, 64, 2))
	s.Age(Aging{Fill: 1, Overwrite: 2, WriteSize: 8192, Seed: 1})
	if st := s.Stats(); st.HostWrites != 0 || st.GCCopies != 0 {
		t.Errorf("aging counted: %+v", st)
	}
	if got := s.Submit(0, Request{Op: Read, Offset: 0, Length: 4096}); got > time.Millisecond {
		t.Errorf("first read after aging took %v", got)
	}
}

func TestSSDDeterministic(t *testing.T) {
	run := func() []time.Duration {
		s := newSSD(t, smallSSD(0.07, 64, 4))
		s.Fill(0, s.Size())
		_, lat := newDriver(s, 11).run(Write, 16384, 3000, true, s.Size())
		return lat
	}
	if !equalDurations(run(), run()) {
		t.Fatal("same requests gave different latencies")
	}
}

func TestSSDInvalidParams(t *testing.T) {
	p := smallSSD(0.001, 64, 4)
	if _, err := NewSSD(p); err == nil {
		t.Error("accepted a drive without room for its reserve")
	}
	p = OCZCoreV2()
	p.OverProvision = 0
	if _, err := NewSSD(p); err == nil {
		t.Error("accepted a log-block drive without spare units")
	}
	p = OCZCoreV2()
	p.UnpacedGC = true
	if _, err := NewSSD(p); err == nil {
		t.Error("accepted UnpacedGC on a log-block drive")
	}
	p = smallSSD(0.07, 64, 4)
	p.ProgramPage = 0
	if _, err := NewSSD(p); err == nil {
		t.Error("accepted a zero program time")
	}
}

// ProgramRate is the slowest of flash programming, buses and host link.
func TestProgramRate(t *testing.T) {
	p := Samsung840ProStreams() // flash-bound: 32 dies x 2 planes x 8 KiB / 1.3 ms
	within(t, "840 Pro program rate", p.ProgramRate(), 32*2*8192/1.3e-3, 1e-9)
	p.HostWriteRate = 100e6
	within(t, "host-bound program rate", p.ProgramRate(), 100e6, 1e-9)
	p.ChannelRate = 1e6
	within(t, "bus-bound program rate", p.ProgramRate(), 8e6, 1e-9)
}

func TestPresetsBuild(t *testing.T) {
	for _, pr := range Presets() {
		if pr.Name == "samsung-840pro-streams" || pr.Name == "intel-x25m-g1" || pr.Name == "vod-high-end" {
			continue // full-size page-mapped maps take a few hundred MB; see the benchmarks
		}
		m, err := pr.New()
		if err != nil {
			t.Fatalf("%s: %v", pr.Name, err)
		}
		if m.Name() != pr.Name || m.Size() <= 0 {
			t.Errorf("%s: name %q size %d", pr.Name, m.Name(), m.Size())
		}
	}
	if _, err := NewPreset("no-such-drive"); err == nil {
		t.Error("NewPreset accepted an unknown name")
	}
}

// TestUnpacedGCStalls: without pacing the same random writes copy about as
// many pages, but the copies land on a few writes that wait for whole
// victims, so the worst latency grows while the median falls.
func TestUnpacedGCStalls(t *testing.T) {
	run := func(unpaced bool) (Stats, time.Duration, time.Duration) {
		p := smallSSD(0.07, 64, 4)
		p.UnpacedGC, p.BackgroundGC = unpaced, false
		s := newSSD(t, p)
		s.Fill(0, s.Size())
		s.Age(Aging{Overwrite: 2, Seed: 6})
		before := s.Stats()
		_, lat := newDriver(s, 5).run(Write, 4096, 20000, true, s.Size())
		slices.Sort(lat)
		return s.Stats().Sub(before), lat[len(lat)/2], lat[len(lat)-1]
	}
	paced, pMed, pMax := run(false)
	unpaced, uMed, uMax := run(true)
	t.Logf("paced WAF %.2f median %v max %v; unpaced WAF %.2f median %v max %v", paced.WAF(), pMed, pMax, unpaced.WAF(), uMed, uMax)
	within(t, "unpaced WAF", unpaced.WAF(), paced.WAF(), 0.15)
	if uMax < 3*pMax || uMed > pMed {
		t.Errorf("unpaced: median %v, max %v; paced: median %v, max %v: want stalls on few writes", uMed, uMax, pMed, pMax)
	}
}
