package torture

import (
	"context"
	"errors"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"
)

// A tally is what one worker's load did.
type tally struct {
	acked   counts
	refused int64
}

func (a *tally) add(b tally) {
	a.acked.Files += b.acked.Files
	a.acked.Images += b.acked.Images
	a.acked.ImageDeletes += b.acked.ImageDeletes
	a.acked.Videos += b.acked.Videos
	a.acked.Invalidations += b.acked.Invalidations
	a.refused += b.refused
}

// load runs the workers against the running server for run, then kills it
// with SIGKILL while they are still sending. A finding stops the load at
// once (and kills the server too).
func (t *torture) load(ctx context.Context, c *client, run time.Duration, cycle int) (tally, error) {
	var (
		killed atomic.Bool
		wg     sync.WaitGroup
		mu     sync.Mutex
		total  tally
		first  error
	)
	failed := make(chan struct{})
	var once sync.Once
	for w := range t.opts.Workers {
		rng := rand.New(rand.NewPCG(t.opts.Seed, uint64(cycle)<<8|uint64(w)))
		wg.Go(func() {
			var tl tally
			err := t.work(c, w, rng, &killed, &tl)
			mu.Lock()
			defer mu.Unlock()
			total.add(tl)
			if err != nil && first == nil {
				first = err
				once.Do(func() { close(failed) })
			}
		})
	}
	select {
	case <-time.After(run):
	case <-failed:
	case <-ctx.Done():
	}
	killed.Store(true)
	t.srv.kill() // SIGKILL, mid-load
	wg.Wait()
	if first == nil {
		first = ctx.Err()
	}
	return total, first
}

// work is one worker's loop: random operations on the synthetic library
// and on the worker's own ids until the kill. A request cut by the kill
// ends it quietly; one cut before the kill is a finding (the server died
// or hung up).
func (t *torture) work(c *client, w int, rng *rand.Rand, killed *atomic.Bool, tl *tally) error {
	for !killed.Load() {
		err := t.step(c, w, rng, tl)
		if errors.Is(err, errCut) {
			if killed.Load() {
				return nil
			}
			return failf("the server stopped answering before the kill: %v", err)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// step runs one random operation. The mix: 34% segment reads, 6% reads
// of the own files, 6% reads of another worker's files (which may be
// uploading them: the read must find a whole version), 10% file uploads,
// 8% image reads, 7% image uploads, 3% image deletes, 8% title reads, 7%
// video uploads, 5% invalidations.
func (t *torture) step(c *client, w int, rng *rand.Rand, tl *tally) error {
	m := t.model
	r := rng.Float64()
	switch {
	case r < 0.34:
		return c.getSegment(t.src.segs[rng.IntN(len(t.src.segs))])
	case r < 0.40:
		e := m.pick(w, kindFile, rng.IntN(99))
		_, err := c.checkFile(e, e.overlapping())
		return err
	case r < 0.46:
		e := m.pick(rng.IntN(len(m.owned)), kindFile, rng.IntN(99))
		_, err := c.checkFile(e, e.overlapping())
		return err
	case r < 0.62:
		ok, err := c.putFile(m.pick(w, kindFile, rng.IntN(99)), rng.IntN(len(t.src.files)))
		return count(ok, err, &tl.acked.Files, &tl.refused)
	case r < 0.70:
		e := m.pick(w, kindImage, rng.IntN(99))
		_, err := c.checkImage(e, []int{e.current()}, rng.IntN(99))
		return err
	case r < 0.77:
		ok, err := c.putImage(m.pick(w, kindImage, rng.IntN(99)), rng.IntN(len(t.src.images)))
		return count(ok, err, &tl.acked.Images, &tl.refused)
	case r < 0.80:
		e := m.pick(w, kindImage, rng.IntN(99))
		if e.current() == absent {
			return nil
		}
		ok, err := c.deleteImage(e)
		return count(ok, err, &tl.acked.ImageDeletes, &tl.refused)
	case r < 0.88:
		e := m.pick(w, kindVideo, rng.IntN(99))
		_, err := c.checkVideo(e, []int{e.current()}, rng.IntN(99))
		return err
	case r < 0.95:
		n := rng.IntN(len(t.src.videos))
		ok, err := c.putVideo(m.pick(w, kindVideo, rng.IntN(99)), n, t.src.videos[n])
		return count(ok, err, &tl.acked.Videos, &tl.refused)
	default:
		s := t.src.segs[rng.IntN(len(t.src.segs))]
		code, b, err := c.do("POST", "/admin/invalidate/"+s.video, nil, true)
		if err == nil && code != 200 {
			err = failf("POST /admin/invalidate/%s: %d %s", s.video, code, b)
		}
		return count(err == nil, err, &tl.acked.Invalidations, &tl.refused)
	}
}

// count adds an acknowledged operation to acked, a refused one to refused.
func count(ok bool, err error, acked, refused *int64) error {
	switch {
	case err != nil:
	case ok:
		*acked++
	default:
		*refused++
	}
	return err
}
