package framesim

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/strata-media/strata/internal/lab/sim/des"
)

// errConfig reports a run that cannot be set up.
var errConfig = errors.New("framesim: bad configuration")

// A Layout is how titles are stored.
type Layout int

// The layouts compared.
const (
	// Grouped is the paper's method: frames grouped by type (FG §III).
	Grouped Layout = iota
	// conventional stores frames in play order (FG §IV).
	conventional
)

// String returns "grouped" or "conventional".
func (l Layout) String() string { return [...]string{"grouped", "conventional"}[l] }

// A catalog is the stored titles, shared read-only by runs.
type catalog struct {
	Video  videoOptions
	Titles []*Title
}

// newCatalog draws n titles with lengths and frame sizes from seed.
func newCatalog(o videoOptions, n int, seed uint64) *catalog {
	o.EnsureDefaults()
	rng := rand.New(rand.NewPCG(seed, 0xca7a1))
	c := &catalog{Video: o}
	for range n {
		c.Titles = append(c.Titles, newTitle(newFrames(o, o.RandomGOPs(rng), rng)))
	}
	return c
}

// RunOptions configure one simulated server.
type RunOptions struct {
	Device Device
	Layout Layout
	// Block is S in bytes; 0 means Device.Block.
	Block int64
	// WriteBlocks is the conventional write buffer in blocks of S. FG §IV:
	// 640 KB and 1,280 KB for S = 128 and 256 KB, so 5.
	WriteBlocks int64
	// Users is the number of concurrent users (FG §IV: 20, 50, 80).
	Users int
	Mix   Mix
	// Session is how long a player keeps one play request before it stops
	// and starts another at a random title and position. FG §IV: "the
	// service time of each media operation is five minutes".
	Session time.Duration
	// Warmup precedes the measured window of length Measure.
	Warmup, Measure time.Duration
	// QueueDepth is the commands the drive holds at once (see hostQueue).
	// Default 1.
	QueueDepth int
	Catalog    *catalog
	// Seed drives the users' choices; the same seed gives both layouts the
	// same choices.
	Seed uint64
}

// ensureDefaults fills in the paper's values.
func (o *RunOptions) ensureDefaults() error {
	if o.Block <= 0 {
		o.Block = o.Device.Block
	}
	if o.WriteBlocks <= 0 {
		o.WriteBlocks = 5
	}
	if o.Session <= 0 {
		o.Session = 5 * time.Minute
	}
	if o.QueueDepth <= 0 {
		o.QueueDepth = 1
	}
	switch {
	case o.Catalog == nil || len(o.Catalog.Titles) == 0:
		return fmt.Errorf("%w: no catalog", errConfig)
	case o.Users <= 0 || o.Measure <= 0:
		return fmt.Errorf("%w: need users and a measured window", errConfig)
	case o.Block < 4<<10:
		return fmt.Errorf("%w: block %d below 4 KiB", errConfig, o.Block)
	}
	return nil
}

// A Result is one run's measurements over the measured window. Rates are
// MB/s (10^6 bytes). "Useful" bytes are frames delivered to players and
// frames written by uploaders: FG §IV's total throughput, "the total read
// and write data rate of a disk to serve all user requests", counting what
// serves requests and not the skipped frames, padding and metadata that
// also cross the interface.
type Result struct {
	Device     string  `json:"device"`
	Layout     string  `json:"layout"`
	Mix        string  `json:"mix"`
	Users      int     `json:"users"`
	BlockKiB   int64   `json:"block_kib"`
	QueueDepth int     `json:"queue_depth"`
	Total      float64 `json:"total_mb_s"`
	Read       float64 `json:"read_mb_s"`
	Write      float64 `json:"write_mb_s"`
	// Disk is every byte the drive moved, useful or not.
	Disk float64 `json:"disk_mb_s"`
	// ByOp is the useful rate of the users doing each op (write, L1-L5).
	ByOp     [numOps]float64 `json:"by_op_mb_s"`
	Requests int64           `json:"requests"`
}

// run simulates one server.
func run(o RunOptions) (Result, error) {
	if err := o.ensureDefaults(); err != nil {
		return Result{}, err
	}
	s, err := newServer(o)
	if err != nil {
		return Result{}, err
	}
	for u, op := range o.Mix.Assign(o.Users) {
		s.startUser(u, op)
	}
	s.loop.RunUntil(o.Warmup + o.Measure)
	return s.result(), nil
}

// server is one simulated media server: the drive, the catalog laid out
// on it, and the upload area after it.
type server struct {
	o       RunOptions
	loop    *des.Loop
	q       *hostQueue
	files   []file
	base    []int64 // byte offset of each catalog file
	upStart int64   // start of the upload area
	upNext  int64
	useful  [numOps]int64
	raw     int64
	reqs    int64
}

// allocAlign aligns files to 4 MiB, a multiple of the SSD models' mapping
// units (2 MiB for the SLC drives).
const allocAlign = 4 << 20

func alignUp(n int64) int64 { return (n + allocAlign - 1) / allocAlign * allocAlign }

func newServer(o RunOptions) (*server, error) {
	s := &server{o: o, loop: &des.Loop{}}
	disk, err := newDrive(s.loop, o.Device)
	if err != nil {
		return nil, err
	}
	s.q = &hostQueue{disk: disk, depth: o.QueueDepth}
	var at int64
	for _, t := range o.Catalog.Titles {
		f := s.layOut(t)
		s.files = append(s.files, f)
		s.base = append(s.base, at)
		at = alignUp(at + f.Blocks()*o.Block)
	}
	s.upStart, s.upNext = at, at
	if at > o.Device.Span/2 {
		return nil, fmt.Errorf("%w: catalog of %d bytes fills more than half of %s's %d", errConfig, at, o.Device.Name, o.Device.Span)
	}
	return s, nil
}

// layOut stores t in the run's layout.
func (s *server) layOut(t *Title) file {
	if s.o.Layout == Grouped {
		return newGroupedFile(t, s.o.Block)
	}
	return newConventionalFile(t, s.o.Block, s.o.WriteBlocks)
}

// alloc reserves n bytes in the upload area, wrapping to its start (the
// oldest uploads are overwritten).
func (s *server) alloc(n int64) int64 {
	if s.upNext+n > s.o.Device.Span {
		s.upNext = s.upStart
	}
	at := s.upNext
	s.upNext = alignUp(at + n)
	return at
}

// io submits a request and counts it when it completes in the window.
func (s *server) io(write bool, off, n int64, done func()) {
	s.q.submit(ioReq{write: write, off: off, n: n, done: func() {
		if s.measuring() {
			s.raw += n
			s.reqs++
		}
		done()
	}})
}

func (s *server) measuring() bool { return s.loop.Now() >= s.o.Warmup }

// credit counts useful bytes of op.
func (s *server) credit(op Op, n int64) {
	if s.measuring() {
		s.useful[op] += n
	}
}

func (s *server) result() Result {
	o := s.o
	sec := o.Measure.Seconds()
	r := Result{Device: o.Device.Name, Layout: o.Layout.String(), Mix: o.Mix.Name, Users: o.Users,
		BlockKiB: o.Block >> 10, QueueDepth: o.QueueDepth, Disk: float64(s.raw) / 1e6 / sec, Requests: s.reqs}
	for op, n := range s.useful {
		r.ByOp[op] = float64(n) / 1e6 / sec
		if Op(op) == opWrite {
			r.Write += r.ByOp[op]
		} else {
			r.Read += r.ByOp[op]
		}
	}
	r.Total = r.Read + r.Write
	return r
}
