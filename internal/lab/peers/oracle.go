package peers

import (
	"slices"
	"strconv"

	"github.com/strata-media/strata/internal/ident"
	"github.com/strata-media/strata/internal/lab/wanorigin"
	"github.com/strata-media/strata/internal/workload"
)

// oracleResult is the expected hit and byte hit ratio of a static cache
// that holds the segments of highest worth per byte, knowing the law.
type oracleResult struct {
	// Objective is "requests" (worth per byte: request probability /
	// size) or "bytes" (request probability alone).
	Objective    string
	HitRatio     float64
	ByteHitRatio float64
}

// Oracle returns, for each objective, the expected ratios of the best
// static cache of capacity bytes over the library lo under strata bench's
// law (titles by Zipf s over the catalog order, renditions and segments
// uniform): every segment's request probability is known, and the cache
// keeps the segments of highest worth per byte until full. No online
// policy beats it at steady state; the gap to it is what a policy has not
// learned, the gap above it (Belady) what only hindsight gives.
func Oracle(lo wanorigin.LibraryOptions, s float64, capacity int64) ([]oracleResult, error) {
	lib, err := wanorigin.NewLibrary(lo)
	if err != nil {
		return nil, err
	}
	titles := lib.Titles()
	z, err := workload.NewZipf(len(titles), s)
	if err != nil {
		return nil, err
	}
	type obj struct {
		p    float64
		size int64
	}
	var objs []obj
	var meanBytes float64
	for i, t := range titles {
		var rends []int
		for j, r := range t.Renditions {
			if r.Segments > 0 {
				rends = append(rends, j)
			}
		}
		for _, j := range rends {
			r := t.Renditions[j]
			p := z.P(i) / float64(len(rends)) / float64(r.Segments)
			for n := r.StartNumber; n < r.StartNumber+r.Segments; n++ {
				size, err := lib.Size(ident.Object{Video: t.ID, Rendition: r.ID, Name: strconv.Itoa(n) + ".m4s"})
				if err != nil {
					return nil, err
				}
				objs = append(objs, obj{p, size})
				meanBytes += p * float64(size)
			}
		}
	}
	var out []oracleResult
	for _, objective := range []string{"requests", "bytes"} {
		worth := func(o obj) float64 { return o.p / float64(max(o.size, 1)) }
		if objective == "bytes" {
			worth = func(o obj) float64 { return o.p }
		}
		slices.SortStableFunc(objs, func(a, b obj) int {
			wa, wb := worth(a), worth(b)
			switch {
			case wa > wb:
				return -1
			case wa < wb:
				return 1
			}
			return 0
		})
		r := oracleResult{Objective: objective}
		left := capacity
		for _, o := range objs {
			if o.size > left {
				continue
			}
			left -= o.size
			r.HitRatio += o.p
			r.ByteHitRatio += o.p * float64(o.size) / meanBytes
		}
		out = append(out, r)
	}
	return out, nil
}
