package framesim

import (
	"math/rand/v2"
	"time"

	"github.com/strata-media/strata/internal/core/framegroup"
)

// startUser starts user u doing op for the whole run. Each user has its
// own random streams, drawn the same way under either layout.
func (s *server) startUser(u int, op Op) {
	seed := s.o.Seed*1_000_003 + uint64(u)
	if op == opWrite {
		w := &writer{s: s, rng: rand.New(rand.NewPCG(seed, 0x3717e))}
		w.step()
		return
	}
	p := &player{s: s, lv: op.Level(),
		sessions: rand.New(rand.NewPCG(seed, 0x5e55)),
		titles:   rand.New(rand.NewPCG(seed, 0x7171e))}
	// Sessions start staggered: the first one ends at a uniform time in
	// (0, Session], later ones every Session.
	p.sessionEnd = time.Duration(p.sessions.Int64N(int64(s.o.Session))) + 1
	p.open(p.sessions.IntN(len(s.files)), true)
	p.step()
}

// A player plays at one level, one block at a time. When its session ends
// it stops, dropping what it read ahead, and starts over at a random title
// and GOP; at the end of a title it goes on with another from its start.
type player struct {
	s          *server
	lv         framegroup.Level
	sessions   *rand.Rand // session starts
	titles     *rand.Rand // the title after one that ended
	sessionEnd time.Duration
	title      int
	cur        cursor
}

// open starts title i, at a random GOP if random, else at its start.
func (p *player) open(i int, random bool) {
	t := p.s.o.Catalog.Titles[i]
	from := 0
	if random {
		gop := p.s.o.Catalog.Video.GOP
		from = p.sessions.IntN(len(t.Frames)/gop) * gop
	}
	p.title, p.cur = i, p.s.files[i].cursor(t, p.lv, from)
}

// step issues the player's next read.
func (p *player) step() {
	if now := p.s.loop.Now(); now >= p.sessionEnd {
		for p.sessionEnd <= now {
			p.sessionEnd += p.s.o.Session
		}
		p.open(p.sessions.IntN(len(p.s.files)), true)
	}
	blk, ok := p.cur.next()
	for !ok {
		p.open(p.titles.IntN(len(p.s.files)), false)
		blk, ok = p.cur.next()
	}
	S := p.s.o.Block
	p.s.io(false, p.s.base[p.title]+blk*S, S, func() {
		p.s.credit(Op(p.lv), p.cur.done())
		p.step()
	})
}

// A writer uploads titles back to back, each of a random length (FG
// §III.2: 5 to 20 minutes), through the layout's buffers: each write is
// issued as soon as the previous one completes (FG §IV's writer thread
// with its buffer always full).
type writer struct {
	s   *server
	rng *rand.Rand
	ws  []write
	i   int
	at  int64 // byte offset of the current upload
}

// upload draws the next title and reserves room for it.
func (w *writer) upload() {
	v := w.s.o.Catalog.Video
	f := w.s.layOut(newTitle(newFrames(v, v.RandomGOPs(w.rng), w.rng)))
	w.ws, w.i = f.writes(), 0
	w.at = w.s.alloc(f.Blocks() * w.s.o.Block)
}

// step issues the writer's next write.
func (w *writer) step() {
	if w.i == len(w.ws) {
		w.upload()
	}
	x := w.ws[w.i]
	w.i++
	S := w.s.o.Block
	w.s.io(true, w.at+x.at*S, x.n*S, func() {
		w.s.credit(opWrite, x.useful)
		w.step()
	})
}
