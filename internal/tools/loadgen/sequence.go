package loadgen

import (
	"math/rand/v2"
	"strconv"

	"github.com/strata-media/strata/internal/ident"
	"github.com/strata-media/strata/internal/storage/origin"
)

// Sequence returns the segments of the first n requests that a run with
// popularity law and seed draws over titles (the catalog in GET /videos
// order), without a server: the same draws, in the same order, as Run
// makes (a request dropped at the in-flight bound still draws its
// segment). Popularity does not shift (no ReleaseEvery), and each request
// is drawn on its own (no Viewers). It lets an
// offline replay (strata-lab sim peers) see exactly what strata bench asked.
func Sequence(titles []origin.Title, law Law, seed uint64, n int) ([]ident.Object, error) {
	if law.IsZero() {
		law = Theta(DefaultTheta)
	}
	if seed == 0 {
		seed = DefaultSeed
	}
	p, err := planFor("", titles, law)
	if err != nil {
		return nil, err
	}
	rng := rand.New(rand.NewPCG(seed, pcgStream))
	out := make([]ident.Object, n)
	for k := range out {
		rank, rd, seg := p.draw(rng, 0)
		out[k] = ident.Object{Video: p.targets[rank].id, Rendition: rd.ID, Name: strconv.Itoa(seg) + ".m4s"}
	}
	return out, nil
}
