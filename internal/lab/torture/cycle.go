package torture

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// setup seeds the data directory, starts the first server and learns the
// reference bytes of each video source: it uploads source k as title
// ref<k>, reads the packaged files from the capacity directory, and checks
// that the server serves exactly those. The server keeps running for the
// first cycle.
func (t *torture) setup(ctx context.Context) error {
	if err := writeLibrary(t.data); err != nil {
		return err
	}
	if _, err := t.startServer(); err != nil {
		return err
	}
	if err := t.srv.ready(ctx); err != nil {
		return err
	}
	tok, err := os.ReadFile(filepath.Join(t.data, "admin.token"))
	if err != nil {
		return err
	}
	c := t.client(strings.TrimSpace(string(tok)))
	for k, v := range t.src.videos {
		e := &entry{kind: kindVideo, id: fmt.Sprintf("ref%d", k), cur: absent, pending: none}
		if ok, err := c.putVideo(e, k, v); !ok || err != nil {
			return fmt.Errorf("torture: uploading video source %d: refused (%v)", k, err)
		}
		ref, err := packagedFiles(filepath.Join(t.data, "videos", e.id))
		if err != nil {
			return err
		}
		t.model.videoRef = append(t.model.videoRef, ref)
		if _, err := c.checkVideo(e, []int{k}, -1); err != nil {
			return fmt.Errorf("torture: the packaged files of %s as served: %w", e.id, err)
		}
		e.cur = k
		t.model.refs = append(t.model.refs, e)
	}
	for p, h := range t.model.videoRef[0] {
		if strings.HasPrefix(p, "v/") && strings.HasSuffix(p, ".m4s") && t.model.videoRef[1][p] == h {
			return fmt.Errorf("torture: video sources 0 and 1 package %s identically: their pictures must differ", p)
		}
	}
	t.logf("torture: %s, seed %d, %d cycles; references: %d packaged files per video source, %d library segments",
		t.srv.url, t.opts.Seed, t.opts.Cycles, len(t.model.videoRef[0]), len(t.src.segs))
	return nil
}

// packagedFiles hashes the served files of a packaged title directory:
// everything but its hidden directories and its strata.json (which names
// the title, so differs between titles of one source).
func packagedFiles(dir string) (map[string]string, error) {
	ref := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if d.IsDir() && strings.HasPrefix(d.Name(), ".") {
			return filepath.SkipDir
		}
		if d.IsDir() || rel == "strata.json" {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		h := sha256.Sum256(b)
		ref[filepath.ToSlash(rel)] = hex.EncodeToString(h[:])
		return nil
	})
	return ref, err
}

func (t *torture) client(token string) *client {
	return &client{srv: t.srv, token: token, src: t.src, model: t.model}
}

// cycle n: the load for a random time, kill -9, fsck, sometimes a second
// kill during start-up and fsck again, restart, and the checks.
func (t *torture) cycle(ctx context.Context, n int) error {
	tok, err := os.ReadFile(filepath.Join(t.data, "admin.token"))
	if err != nil {
		return err
	}
	token := strings.TrimSpace(string(tok))
	c := t.client(token)
	run := t.opts.MinRun + time.Duration(t.rng.Int64N(int64(t.opts.MaxRun-t.opts.MinRun)+1))
	tl, err := t.load(ctx, c, run, n)
	t.srv = nil
	loadReqs := c.reqs.Load()
	t.sum.Requests += loadReqs
	t.sum.Bytes += c.bytes.Load()
	t.sum.Acked = addCounts(t.sum.Acked, tl.acked)
	t.sum.Refused += tl.refused
	if err != nil {
		return err
	}
	if t.opts.AfterKill != nil {
		if err := t.opts.AfterKill(t.data); err != nil {
			return err
		}
	}
	rep, err := t.fsck()
	if err != nil {
		return err
	}
	early := ""
	if t.rng.Float64() < t.opts.EarlyKill {
		if rep, err = t.killEarly(); err != nil {
			return err
		}
		early = ", killed again during start-up"
	}
	if _, err := t.startServer(); err != nil {
		return fmt.Errorf("%w: restart: %v", ErrFailed, err)
	}
	if err := t.srv.ready(ctx); err != nil {
		return fmt.Errorf("%w: restart: %v", ErrFailed, err)
	}
	c = t.client(token)
	st, err := t.srv.ssd()
	if err != nil {
		return err
	}
	if st.RecoveredSegments != int64(rep.Segments) || st.CorruptRecords != 0 {
		return failf("recovered %d segments (%d corrupt records); fsck found %d live", st.RecoveredSegments, st.CorruptRecords, rep.Segments)
	}
	objs, unacked, err := t.verify(c)
	t.sum.Bytes += c.bytes.Load()
	if err != nil {
		return err
	}
	after, err := t.srv.ssd()
	if err != nil {
		return err
	}
	// Every object was read once: a recovered segment not evicted since
	// was read from flash.
	hits, evicted := after.Hits-st.Hits, after.EvictedSegments-st.EvictedSegments
	if st.RecoveredSegments > evicted && hits == 0 {
		return failf("%d segments recovered, %d evicted since, and no flash hit while reading everything",
			st.RecoveredSegments, evicted)
	}
	t.sum.Recovered += st.RecoveredSegments
	t.sum.FlashHits += hits
	t.logf("cycle %d/%d: load %s (%d requests, %d acked, %d refused), kill -9%s; fsck clean (%d live segments, %d orphan records); "+
		"restart recovered %d; verified %d objects and %d library files, %d unacked settled, %d flash hits",
		n, t.opts.Cycles, run.Round(time.Millisecond), loadReqs, tl.acked.total(), tl.refused, early,
		rep.Segments, rep.OrphanRecords, st.RecoveredSegments, objs, len(t.src.segs), unacked, hits)
	return nil
}

// killEarly starts the server and kills it within its first 300 ms, in
// its recovery scan or just after, then checks the flash cache again.
func (t *torture) killEarly() (fsckReport, error) {
	if _, err := t.startServer(); err != nil {
		return fsckReport{}, fmt.Errorf("%w: restart: %v", ErrFailed, err)
	}
	time.Sleep(time.Duration(t.rng.Int64N(int64(300 * time.Millisecond))))
	t.stopServer()
	t.sum.EarlyKills++
	return t.fsck()
}

// verify checks every id against the model, settling the operations the
// kill cut, and every segment of the library. It returns the ids checked
// and the unacknowledged operations settled.
func (t *torture) verify(c *client) (int, int, error) {
	objs, unacked := 0, 0
	for _, e := range slices.Concat(t.model.all(), t.model.refs) {
		allowed := e.allowed()
		var got int
		var err error
		switch e.kind {
		case kindFile:
			got, err = c.checkFile(e, func() []int { return allowed })
		case kindImage:
			got, err = c.checkImage(e, allowed, -1)
		case kindVideo:
			got, err = c.checkVideo(e, allowed, -1)
		}
		if err != nil {
			return objs, unacked, fmt.Errorf("after the restart: %w", err)
		}
		if e.pending != none {
			unacked++
			t.sum.Unacked++
			if got == e.pending {
				t.sum.KeptUnacked++
			} else {
				t.sum.LostUnacked++
			}
		}
		e.cur, e.pending = got, none
		objs++
	}
	for _, s := range t.src.segs {
		if err := c.getSegment(s); err != nil {
			return objs, unacked, fmt.Errorf("after the restart: %w", err)
		}
	}
	t.sum.Verified += int64(objs + len(t.src.segs))
	return objs, unacked, nil
}

func addCounts(a, b counts) counts {
	return counts{a.Files + b.Files, a.Images + b.Images, a.ImageDeletes + b.ImageDeletes, a.Videos + b.Videos, a.Invalidations + b.Invalidations}
}
