package vod

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"
)

// TestLFUDataDriven runs testdata/lfu_*: scripts against one LFU[string].
//
//	new capacity=<bytes> [half-life=<dur>] [rate=<bytes/s>] [burst=<bytes>] [copies=<n>] [margin=<f>] [reserve=<bytes>]
//	tick d=<dur>                          advance the clock
//	request id=<f> size=<bytes> [n=<k>]   k requests; prints flash or miss
//	plan                                  prints the copy planned, or no
//	ready                                 prints the copy handed out
//	installed id=<f> | abort id=<f> | stage id=<f> size=<bytes>
//	acquire id=<f> | release id=<f> | drop id=<f>
//	state                                 files with state, count, readers
//
// The cache's invariants are checked after every command.
// Regenerate with go test -run DataDriven -rewrite.
func TestLFUDataDriven(t *testing.T) {
	datadriven.Walk(t, "testdata/lfu", func(t *testing.T, path string) {
		h := &lfuHarness{}
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

type lfuHarness struct {
	c   *LFU[string]
	now time.Duration
}

func (h *lfuHarness) run(t *testing.T, d *datadriven.TestData) string {
	id := argStr(d, "id", "")
	switch d.Cmd {
	case "new":
		return h.cmdNew(t, d)
	case "tick":
		h.now += argDur(t, d, "d", 0)
		return fmt.Sprintf("now %v", h.now)
	case "request":
		return h.cmdRequest(t, d, id)
	case "plan":
		return fmtPlan(h.c.Plan(h.now))
	case "ready":
		if f, n, ok := h.c.Ready(); ok {
			return fmt.Sprintf("start %s %d", f, n)
		}
		return "none"
	case "installed":
		return errOr(h.c.Installed(id), "ok")
	case "abort":
		return errOr(h.c.Abort(id), "ok")
	case "stage":
		return errOr(h.c.Stage(id, argInt(t, d, "size", 0)), "ok")
	case "acquire":
		return strconv.FormatBool(h.c.Acquire(id))
	case "release":
		freed, err := h.c.Release(id)
		return errOr(err, fmt.Sprintf("freed=%v", freed))
	case "drop":
		freed, err := h.c.Drop(id)
		return errOr(err, fmt.Sprintf("freed=%v", freed))
	case "state":
		return h.state()
	}
	t.Fatalf("%s: unknown command %q", d.Pos, d.Cmd)
	return ""
}

func (h *lfuHarness) cmdNew(t *testing.T, d *datadriven.TestData) string {
	o := LFUOptions{
		Capacity: argInt(t, d, "capacity", 0), HalfLife: argDur(t, d, "half-life", 0), Reserve: argInt(t, d, "reserve", 0),
		Budget:    WriteBudget{Rate: float64(argInt(t, d, "rate", 0)), Burst: argInt(t, d, "burst", 0)},
		MaxCopies: int(argInt(t, d, "copies", 0)), Margin: argFloat(t, d, "margin", 0),
	}
	c, err := NewLFU[string](o)
	if err != nil {
		return err.Error()
	}
	h.c, h.now = c, 0
	return "ok"
}

func (h *lfuHarness) cmdRequest(t *testing.T, d *datadriven.TestData, id string) string {
	n := max(argInt(t, d, "n", 1), 1)
	var hit bool
	for range n {
		hit = h.c.Request(h.now, id, argInt(t, d, "size", 0))
	}
	if hit {
		return "flash"
	}
	return "miss"
}

func fmtPlan(p Copy[string], ok bool) string {
	if !ok {
		return "no"
	}
	return fmt.Sprintf("copy %s size=%d freed=%v draining=%v", p.ID, p.Size, p.Freed, p.Draining)
}

func (h *lfuHarness) state() string {
	var ids []string
	for id := range h.c.files {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	var b strings.Builder
	for _, id := range ids {
		f := h.c.files[id]
		fmt.Fprintf(&b, "%s %v size=%d count=%.3f readers=%d\n", id, f.state, f.size, h.c.Count(h.now, id), f.pins)
	}
	fmt.Fprintf(&b, "used=%d committed=%d", h.c.Used(), h.c.Committed())
	return b.String()
}

// TestIntervalDataDriven runs testdata/interval_*: scripts against one
// IntervalCache[string]. Times are absolute.
//
//	new capacity=<bytes> [block=<bytes>] [arrival-only] [extra=<blocks>]
//	arrive id=<n> file=<f> at=<dur> rate=<bytes/s> [room=<n>]   prints the changes
//	switch id=<n> at=<dur>                                       prints whether it moved to RAM
//	end id=<n> at=<dur> | leave id=<n> at=<dur>                  prints the changes
//	buffer id=<n>                                                the buffer stream n follows with, or none
//	state                                                        intervals, RAM streams, blocks
func TestIntervalDataDriven(t *testing.T) {
	datadriven.Walk(t, "testdata/interval", func(t *testing.T, path string) {
		var c *IntervalCache[string]
		datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
			if d.Cmd == "new" {
				var err error
				c, err = NewIntervalCache[string](IntervalOptions{Capacity: argInt(t, d, "capacity", 0), BlockSize: argInt(t, d, "block", 0),
					ArrivalOnly: d.HasArg("arrival-only"), ExtraBlocks: argInt(t, d, "extra", 0)})
				return errOr(err, "ok")
			}
			out := runInterval(t, c, d)
			if err := c.Check(); err != nil {
				t.Fatalf("%s: %v", d.Pos, err)
			}
			return out
		})
	})
}

func runInterval(t *testing.T, c *IntervalCache[string], d *datadriven.TestData) string {
	id, at := StreamID(argInt(t, d, "id", 0)), argDur(t, d, "at", 0)
	switch d.Cmd {
	case "arrive":
		ch, err := c.Arrive(at, id, argStr(d, "file", ""), argInt(t, d, "rate", 0), int(argInt(t, d, "room", 0)))
		return errOr(err, fmtChanges(ch))
	case "switch":
		return strconv.FormatBool(c.Switch(at, id))
	case "end":
		ch, err := c.End(at, id)
		return errOr(err, fmtChanges(ch))
	case "leave":
		ch, err := c.Leave(at, id)
		return errOr(err, fmtChanges(ch))
	case "buffer":
		b, ok := c.Buffer(id)
		if !ok {
			return "none"
		}
		return fmt.Sprintf("preceder=%d blocks=%d writing=%v", b.Preceder, b.Blocks, b.Writing)
	case "state":
		return intervalState(c)
	}
	t.Fatalf("%s: unknown command %q", d.Pos, d.Cmd)
	return ""
}

func fmtChanges(ch Changes) string {
	var parts []string
	for _, s := range ch.Cached {
		parts = append(parts, fmt.Sprintf("cached %d switch-at=%v", s.Stream, s.At))
	}
	for _, s := range ch.ToDisk {
		parts = append(parts, fmt.Sprintf("to-disk %d", s))
	}
	if len(parts) == 0 {
		return "-"
	}
	return strings.Join(parts, "\n")
}

func intervalState(c *IntervalCache[string]) string {
	var lines []string
	for _, iv := range c.cached.Sorted() {
		lines = append(lines, fmt.Sprintf("cached %d->%d blocks=%d writing=%v", iv.pre.id, iv.fol.id, iv.blocks, iv.writing))
	}
	for _, iv := range c.waiting.Sorted() {
		lines = append(lines, fmt.Sprintf("waiting %d->%d blocks=%d", iv.pre.id, iv.fol.id, iv.blocks))
	}
	var ram []int
	for id, s := range c.streams {
		if s.onRAM {
			ram = append(ram, int(id))
		}
	}
	slices.Sort(ram)
	lines = append(lines, fmt.Sprintf("ram=%v used=%d write-rate=%d streams=%d", ram, c.Used(), c.WriteRate(), len(c.streams)))
	return strings.Join(lines, "\n")
}

func errOr(err error, ok string) string {
	if err != nil {
		return "error: " + err.Error()
	}
	return ok
}

func argStr(d *datadriven.TestData, key, def string) string {
	for _, a := range d.CmdArgs {
		if a.Key == key && len(a.Vals) > 0 {
			return a.Vals[0]
		}
	}
	return def
}

func argInt(t *testing.T, d *datadriven.TestData, key string, def int64) int64 {
	s := argStr(d, key, "")
	if s == "" {
		return def
	}
	mult := int64(1)
	for suf, m := range map[string]int64{"KiB": KB, "MiB": MB, "GiB": GB} {
		if strings.HasSuffix(s, suf) {
			s, mult = strings.TrimSuffix(s, suf), m
		}
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		t.Fatalf("%s: %s=%q: %v", d.Pos, key, s, err)
	}
	return v * mult
}

func argFloat(t *testing.T, d *datadriven.TestData, key string, def float64) float64 {
	s := argStr(d, key, "")
	if s == "" {
		return def
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		t.Fatalf("%s: %s=%q: %v", d.Pos, key, s, err)
	}
	return v
}

func argDur(t *testing.T, d *datadriven.TestData, key string, def time.Duration) time.Duration {
	s := argStr(d, key, "")
	if s == "" {
		return def
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		t.Fatalf("%s: %s=%q: %v", d.Pos, key, s, err)
	}
	return v
}
