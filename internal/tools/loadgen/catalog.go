package loadgen

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/strata-media/strata/internal/storage/origin"
	"github.com/strata-media/strata/internal/workload"
)

// maxCatalogBytes bounds the catalog document read from the server.
const maxCatalogBytes = 64 << 20

// catalogTimeout bounds fetching the catalog.
const catalogTimeout = 30 * time.Second

// catalog is the document GET /videos returns.
type catalog struct {
	Titles []origin.Title `json:"titles"`
}

// A target is one requestable title, in catalog (popularity rank) order.
type target struct {
	id         string
	deadline   time.Duration
	renditions []origin.Rendition // only those with segments
}

// A plan is the workload of a run: what can be requested and how likely.
type plan struct {
	base    string
	targets []target
	zipf    *workload.Zipf
}

// A request is one drawn segment request.
type request struct {
	rank     int // index into plan.targets
	url      string
	deadline time.Duration
}

// newPlan reads the catalog at catalogURL (base/videos unless
// Config.Catalog) and builds the workload over it, of the server at
// base.
func newPlan(ctx context.Context, client *http.Client, base, catalogURL string, law Law) (*plan, error) {
	titles, err := fetchCatalog(ctx, client, catalogURL)
	if err != nil {
		return nil, err
	}
	p, err := planFor(base, titles, law)
	if err != nil {
		return nil, fmt.Errorf("%w (at %s)", err, catalogURL)
	}
	return p, nil
}

// planFor builds the workload over titles, skipping titles without
// segments.
func planFor(base string, titles []origin.Title, law Law) (*plan, error) {
	p := &plan{base: base}
	for _, t := range titles {
		if tg, ok := targetFor(t); ok {
			p.targets = append(p.targets, tg)
		}
	}
	if len(p.targets) == 0 {
		return nil, fmt.Errorf("%w: %d titles, none with a segment", ErrEmptyCatalog, len(titles))
	}
	z, err := law.sampler(len(p.targets))
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrConfig, err)
	}
	p.zipf = z
	return p, nil
}

// targetFor keeps t's renditions with segments and its deadline.
func targetFor(t origin.Title) (target, bool) {
	tg := target{id: t.ID, deadline: DefaultDeadline}
	if t.SegmentDuration > 0 {
		tg.deadline = time.Duration(t.SegmentDuration * float64(time.Second))
	}
	for _, r := range t.Renditions {
		if r.Segments > 0 {
			tg.renditions = append(tg.renditions, r)
		}
	}
	return tg, len(tg.renditions) > 0
}

// pick draws one request: title by the law, rendition and segment
// uniformly (FlashStream §5.1).
func (p *plan) pick(r *rand.Rand) request { return p.pickShifted(r, 0) }

// pickShifted draws one request after released new releases: each release
// takes the catalog's last title not yet released to the top of the
// popularity ranking and moves every other title one rank down (a new title
// of a VoD catalogue), so the i-th most popular title is catalog title
// (i - released) mod n.
func (p *plan) pickShifted(r *rand.Rand, released int) request {
	rank, rd, n := p.draw(r, released)
	t := &p.targets[rank]
	return request{rank: rank, url: p.segmentURL(t.id, rd.ID, n), deadline: t.deadline}
}

// draw draws the title's rank, the rendition and the segment number of
// one request after released new releases (see pickShifted).
func (p *plan) draw(r *rand.Rand, released int) (rank int, rd *origin.Rendition, n int) {
	nt := len(p.targets)
	rank = ((p.zipf.Draw(r)-released)%nt + nt) % nt
	t := &p.targets[rank]
	rd = &t.renditions[r.IntN(len(t.renditions))]
	return rank, rd, rd.StartNumber + r.IntN(rd.Segments)
}

// segmentURL is the URL of segment n of a title's rendition.
func (p *plan) segmentURL(title, rendition string, n int) string {
	return p.base + "/videos/" + url.PathEscape(title) + "/" + url.PathEscape(rendition) + "/" + strconv.Itoa(n) + ".m4s"
}

// fetchCatalog reads GET u, the catalog document.
func fetchCatalog(ctx context.Context, client *http.Client, u string) ([]origin.Title, error) {
	ctx, cancel := context.WithTimeout(ctx, catalogTimeout)
	defer cancel()
	body, err := getBody(ctx, client, u, maxCatalogBytes)
	if err != nil {
		return nil, err
	}
	var c catalog
	if err := json.Unmarshal(body, &c); err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrCatalog, u, err)
	}
	return c.Titles, nil
}

// getBody GETs u and returns its body, at most limit bytes. A transport
// failure wraps ErrUnreachable; a non-200 status wraps ErrCatalog.
func getBody(ctx context.Context, client *http.Client, u string, limit int64) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadURL, err)
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrUnreachable, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<16))
		return nil, fmt.Errorf("%w: GET %s: %s", ErrCatalog, u, resp.Status)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, limit))
	if err != nil {
		return nil, fmt.Errorf("%w: GET %s: %w", ErrUnreachable, u, err)
	}
	return body, nil
}
