package framesim

import (
	"github.com/strata-media/strata/internal/lab/sim/des"
	"github.com/strata-media/strata/internal/storage/model"
)

// A Device is one of the paper's three drives (FG Table 1) as a model,
// with the block size S the paper used on it.
type Device struct {
	Name string
	// Block is S (FG §IV: 128 KB on SSD1, 256 KB on SSD2, 512 KB on the
	// HDD for Fig. 14).
	Block int64
	// Span is the part of the drive the experiment uses (FG Table 1: 32 GB
	// of each).
	Span int64
	New  func() (model.Model, error)
}

// The paper's drives.
var (
	ssD1 = Device{Name: "SSD1", Block: 128 << 10, Span: 32e9,
		New: func() (model.Model, error) { return model.NewSSD(model.MtronMSDSATA3025()) }}
	ssD2 = Device{Name: "SSD2", Block: 256 << 10, Span: 32e9,
		New: func() (model.Model, error) { return model.NewSSD(model.SamsungMCBQE32()) }}
	hdd = Device{Name: "HDD", Block: 512 << 10, Span: 32e9,
		New: func() (model.Model, error) { return model.NewHDD(model.Barracuda7200dot10()) }}
)

// devices lists the paper's drives in the order the report shows them.
func devices() []Device { return []Device{ssD1, ssD2, hdd} }

// newDrive builds d's model in a loop, every SSD page of its span written
// once (a drive in service, not a fresh one whose unmapped pages read for
// free).
func newDrive(loop *des.Loop, d Device) (*des.Disk, error) {
	m, err := d.New()
	if err != nil {
		return nil, err
	}
	if f, ok := m.(model.Filler); ok {
		f.Fill(0, d.Span)
	}
	return des.NewDisk(loop, m), nil
}

// hostQueue is the host side of the drive: at most depth commands at the
// drive, the rest wait in arrival order. Depth 1 is a drive without
// command queueing, as the paper's analysis assumes (FG §II.2: the request
// size alone sets a drive's throughput, measured one request at a time).
type hostQueue struct {
	disk  *des.Disk
	depth int
	out   int
	wait  []ioReq
}

// ioReq is one command.
type ioReq struct {
	write  bool
	off, n int64
	done   func()
}

func (q *hostQueue) submit(r ioReq) {
	if q.out < q.depth {
		q.start(r)
		return
	}
	q.wait = append(q.wait, r)
}

// start hands r to the drive; when it completes, the next waiting command
// goes before r's owner submits again.
func (q *hostQueue) start(r ioReq) {
	q.out++
	fin := func() {
		q.out--
		if len(q.wait) > 0 {
			next := q.wait[0]
			q.wait = q.wait[1:]
			q.start(next)
		}
		r.done()
	}
	if r.write {
		q.disk.Write(r.off, r.n, 0, fin)
	} else {
		q.disk.Read(r.off, r.n, fin)
	}
}
