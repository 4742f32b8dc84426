package des

import (
	"math/rand/v2"
	"strconv"
	"time"

	"github.com/strata-media/strata/internal/workload"
)

// Catalog is a dataset laid out on the capacity disk: every segment's tier
// key, size and disk offset, titles in order, each title's segments
// contiguous (as files written once on an empty file system).
type Catalog struct {
	Keys     []string
	Sizes    []int64
	Offsets  []int64
	Duration time.Duration // segment play-out time: the deadline

	titleFirst []int32 // first segment of each title's renditions
	titleRends [][]int32
	total      int64
}

// NewCatalog lays d out over a disk of diskSize bytes. When the dataset is
// smaller than the disk (a scaled-down run) titles are spread evenly over
// it, so seek distances stay those of a full disk.
func NewCatalog(d *workload.Dataset, diskSize int64) *Catalog {
	c := &Catalog{Duration: d.SegmentDuration}
	for _, t := range d.Titles {
		c.addTitle(d, t)
	}
	c.spread(diskSize)
	return c
}

func (c *Catalog) addTitle(d *workload.Dataset, t workload.Title) {
	c.titleFirst = append(c.titleFirst, int32(len(c.Keys)))
	var rends []int32
	for _, r := range t.Renditions {
		rends = append(rends, int32(len(c.Keys)))
		for n := 1; n <= r.Segments; n++ {
			size := d.SegmentSize(t.ID, r, n)
			c.Keys = append(c.Keys, "v/"+t.ID+"/"+r.ID+"/"+strconv.Itoa(n)+".m4s")
			c.Sizes = append(c.Sizes, size)
			c.Offsets = append(c.Offsets, c.total)
			c.total += size
		}
		rends = append(rends, int32(len(c.Keys)))
	}
	c.titleRends = append(c.titleRends, rends)
}

// spread scales title start offsets so the data spans the whole disk.
func (c *Catalog) spread(diskSize int64) {
	if c.total >= diskSize || c.total == 0 {
		return
	}
	gap := float64(diskSize-c.total) / float64(len(c.titleFirst))
	for t, first := range c.titleFirst {
		shift := int64(gap * float64(t))
		end := int32(len(c.Keys))
		if t+1 < len(c.titleFirst) {
			end = c.titleFirst[t+1]
		}
		for i := first; i < end; i++ {
			c.Offsets[i] += shift &^ 4095
		}
	}
}

// Titles is the number of titles.
func (c *Catalog) Titles() int { return len(c.titleFirst) }

// Segments is the number of segments.
func (c *Catalog) Segments() int { return len(c.Keys) }

// TotalBytes is the size of the dataset.
func (c *Catalog) TotalBytes() int64 { return c.total }

// Pick returns a segment of title t: a rendition and a segment uniformly
// (FlashStream §5.1: a CDN server sees each segment of a title with equal
// probability).
func (c *Catalog) Pick(t int, r *rand.Rand) int {
	rends := c.titleRends[t]
	k := r.IntN(len(rends) / 2)
	lo, hi := rends[2*k], rends[2*k+1]
	return int(lo) + r.IntN(int(hi-lo))
}

// Rendition returns the segments [lo, hi) of one rendition of title t,
// chosen uniformly: what a viewer who plays the title through reads, in
// order.
func (c *Catalog) Rendition(t int, r *rand.Rand) (lo, hi int) {
	rends := c.titleRends[t]
	k := r.IntN(len(rends) / 2)
	return int(rends[2*k]), int(rends[2*k+1])
}

// PickProbs returns, for every segment, the probability that Pick(t, ·)
// returns it given title t: one over the title's renditions times one over
// the rendition's segments (zero for segments of other titles).
func (c *Catalog) PickProbs(t int) (first int, probs []float64) {
	rends := c.titleRends[t]
	lo, hi := rends[0], rends[len(rends)-1]
	probs = make([]float64, hi-lo)
	n := float64(len(rends) / 2)
	for k := 0; k < len(rends); k += 2 {
		a, b := rends[k], rends[k+1]
		for i := a; i < b; i++ {
			probs[i-lo] = 1 / n / float64(b-a)
		}
	}
	return int(lo), probs
}
