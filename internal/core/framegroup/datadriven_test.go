package framegroup

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"
)

// packHarness runs the commands of a script about one title at a time:
//
//	pack size=<S>                  input: one picture a line, "<stream> <bytes>",
//	                               in decoding order; prints the blocks as they close
//	records                        the layout's block records, links included
//	level L<n> [from=<i>]          the blocks LevelBlocks lists from decode index i
//	play L<n> [from=<i>]           the cursor's reads, each with the pictures
//	                               (decode indices) it completes
//	reload [block=<b> start=<n>] [block=<b> link=<n>]
//	                               NewLayout from the records, one changed;
//	                               prints each stream's blocks or the error
type packHarness struct {
	layout *Layout
	order  [NumStreams][]int64 // decode index of each stream's pictures
}

func (h *packHarness) run(t *testing.T, d *datadriven.TestData) string {
	switch d.Cmd {
	case "pack":
		return h.pack(t, d)
	case "records":
		var b strings.Builder
		for i, r := range h.layout.Records() {
			fmt.Fprintf(&b, "%d %s\n", i, fmtRecord(r))
		}
		return b.String()
	case "level":
		lv, from := levelArgs(t, d)
		return fmt.Sprintln(h.layout.LevelBlocks(lv, h.order, from))
	case "play":
		lv, from := levelArgs(t, d)
		return h.play(lv, from)
	case "reload":
		return h.reload(t, d)
	}
	t.Fatalf("%s: unknown command %q", d.Pos, d.Cmd)
	return ""
}

// TestPackDataDriven runs the scripts in testdata/ (see packHarness);
// go test -run DataDriven -rewrite regenerates their output.
func TestPackDataDriven(t *testing.T) {
	datadriven.Walk(t, "testdata", func(t *testing.T, path string) {
		datadriven.RunTest(t, path, new(packHarness).run)
	})
}

// pack lays out the pictures of d.Input and prints each block as the
// packer hands it over.
func (h *packHarness) pack(t *testing.T, d *datadriven.TestData) string {
	var size int
	d.ScanArgs(t, "size", &size)
	var b strings.Builder
	p := NewPacker(size, false, func(blk Block) error {
		fmt.Fprintf(&b, "close %d %s used=%d\n", blk.Number, blk.Stream, blk.Used)
		return nil
	})
	h.order = [NumStreams][]int64{}
	for i, line := range strings.Split(strings.TrimSpace(d.Input), "\n") {
		name, bytes, _ := strings.Cut(line, " ")
		st := parseStream(t, name)
		n, err := strconv.Atoi(bytes)
		if err != nil {
			t.Fatalf("%s: %q: %v", d.Pos, line, err)
		}
		if err := p.Add(st, n, nil); err != nil {
			fmt.Fprintf(&b, "picture %d: %v\n", i, err)
			continue
		}
		h.order[st] = append(h.order[st], int64(i))
	}
	if err := p.Finish(); err != nil {
		t.Fatal(err)
	}
	h.layout = p.Layout()
	return b.String()
}

// play runs a cursor to the end, one line a block read.
func (h *packHarness) play(lv Level, from int64) string {
	var b strings.Builder
	c := NewCursor(h.layout, lv, h.order, from)
	for {
		blk, ok := c.Next()
		if !ok {
			return b.String()
		}
		c.Done()
		fmt.Fprintf(&b, "read %d %s:", blk, h.layout.Record(blk).Stream)
		for st, j, ok := c.Pop(); ok; st, j, ok = c.Pop() {
			fmt.Fprintf(&b, " %d", h.order[st][j])
		}
		b.WriteString("\n")
	}
}

// reload rebuilds the layout from its records, one field of one record
// changed, and prints each stream's blocks.
func (h *packHarness) reload(t *testing.T, d *datadriven.TestData) string {
	recs := append([]BlockRecord(nil), h.layout.Records()...)
	var frames [NumStreams]uint32
	for st := range Stream(NumStreams) {
		frames[st] = uint32(h.layout.Frames(st))
	}
	if d.HasArg("block") {
		var blk int
		d.ScanArgs(t, "block", &blk)
		if d.HasArg("start") {
			d.ScanArgs(t, "start", &recs[blk].Start)
		}
		if d.HasArg("link") {
			d.ScanArgs(t, "link", &recs[blk].Link)
		}
	}
	l, err := NewLayout(h.layout.BlockSize(), recs, h.layout.First(), frames)
	if err != nil {
		return fmt.Sprintf("error: %v\n", err)
	}
	var b strings.Builder
	for st := range Stream(NumStreams) {
		fmt.Fprintf(&b, "%s %v\n", st, l.Stream(st))
	}
	return b.String()
}

func fmtRecord(r BlockRecord) string {
	frag := ""
	if r.Fragment {
		frag = " fragment"
	}
	return fmt.Sprintf("%s start=%d frames=%d link=%d%s", r.Stream, r.Start, r.Frames, r.Link, frag)
}

func levelArgs(t *testing.T, d *datadriven.TestData) (Level, int64) {
	lv, err := ParseLevel(d.CmdArgs[0].Key)
	if err != nil {
		t.Fatalf("%s: %v", d.Pos, err)
	}
	var from int64
	if d.HasArg("from") {
		d.ScanArgs(t, "from", &from)
	}
	return lv, from
}

func parseStream(t *testing.T, name string) Stream {
	for st := range Stream(NumStreams) {
		if st.String() == name {
			return st
		}
	}
	t.Fatalf("no stream %q", name)
	return 0
}
