package workload

import (
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"time"
)

// A Source is one video of the DASH dataset (FlashStream Table 4, Lederer
// et al. MMSys'12): its length and its five bitrates in kbit/s.
type Source struct {
	Name     string
	Length   time.Duration
	Bitrates [5]int
}

// DASHSources are the six sources of FlashStream Table 4.
var DASHSources = []Source{
	{"big-buck-bunny", 9*time.Minute + 46*time.Second, [5]int{200, 400, 700, 1500, 2000}},
	{"elephants-dream", 10*time.Minute + 54*time.Second, [5]int{200, 400, 700, 1500, 2000}},
	{"red-bull-playstreets", 97*time.Minute + 28*time.Second, [5]int{200, 400, 700, 1500, 2000}},
	{"the-swiss-account", 57*time.Minute + 34*time.Second, [5]int{200, 400, 700, 1500, 2000}},
	{"valkaama", 93*time.Minute + 5*time.Second, [5]int{200, 400, 700, 1400, 2000}},
	{"of-forest-and-men", 10*time.Minute + 53*time.Second, [5]int{200, 400, 700, 1400, 2000}},
}

// DefaultEfficiency scales nominal bitrates to mean encoded bytes. Table 4's
// nominal rates over FlashStream's 2000 titles give 665 GB, but §5.1 states
// the generated dataset was 545 GB: VBR encodes land below their target on
// average, so the mean segment carries 545/665 = 0.82 of the nominal bytes.
// This calibrates an input of the workload (the dataset) from the paper's
// own description of it, not any measured result.
const DefaultEfficiency = 0.82

// DefaultVBRSigma is the spread (sigma of a log-normal, mean 1) of segment
// sizes around their mean. The dataset's per-segment sizes are not in the
// paper; 0.35 gives the several-fold range between a rendition's smallest
// and largest 10 s segments that VBR H.264 shows.
const DefaultVBRSigma = 0.35

// A Rendition is one encoding of a title.
type Rendition struct {
	ID       string // e.g. "700k"
	Kbps     int    // nominal bitrate
	Segments int    // media segments, numbered from 1
}

// A Title is one video of a dataset.
type Title struct {
	ID         string
	Source     string
	Renditions []Rendition
}

// Dataset is a deterministic library of titles with VBR segment sizes: the
// same options always give the same titles and sizes, so the simulator and
// the synthetic capacity tier agree byte for byte.
type Dataset struct {
	Titles          []Title
	SegmentDuration time.Duration
	efficiency      float64
	sigma           float64
	seed            uint64
}

// DatasetOptions configure NewDataset.
type DatasetOptions struct {
	// Titles is the number of titles. Default 2000 (FlashStream §5.1).
	Titles int
	// AllRenditions gives every title the five renditions of its source;
	// otherwise each title is one source at one bitrate chosen uniformly
	// (FlashStream §5.1).
	AllRenditions bool
	// SegmentDuration defaults to 10 s (Table 4).
	SegmentDuration time.Duration
	// MaxLength, if positive, caps each title's length (for small demos).
	MaxLength time.Duration
	// Efficiency defaults to DefaultEfficiency.
	Efficiency float64
	// VBRSigma defaults to DefaultVBRSigma; negative means constant sizes.
	VBRSigma float64
	// Seed selects the library.
	Seed uint64
	// Prefix names titles Prefix + index; default "title-".
	Prefix string
}

func (o *DatasetOptions) ensureDefaults() {
	if o.Titles == 0 {
		o.Titles = 2000
	}
	if o.SegmentDuration == 0 {
		o.SegmentDuration = 10 * time.Second
	}
	if o.Efficiency == 0 {
		o.Efficiency = DefaultEfficiency
	}
	if o.VBRSigma == 0 {
		o.VBRSigma = DefaultVBRSigma
	}
	if o.Prefix == "" {
		o.Prefix = "title-"
	}
}

// NewDataset builds a library from the six DASH sources.
func NewDataset(o DatasetOptions) *Dataset {
	o.ensureDefaults()
	d := &Dataset{SegmentDuration: o.SegmentDuration, efficiency: o.Efficiency, sigma: max(o.VBRSigma, 0), seed: o.Seed}
	r := rand.New(rand.NewPCG(o.Seed, 0x44415348))
	for i := range o.Titles {
		src := DASHSources[r.IntN(len(DASHSources))]
		length := src.Length
		if o.MaxLength > 0 {
			length = min(length, o.MaxLength)
		}
		segs := int((length + o.SegmentDuration - 1) / o.SegmentDuration)
		t := Title{ID: fmt.Sprintf("%s%04d", o.Prefix, i), Source: src.Name}
		if o.AllRenditions {
			for _, k := range src.Bitrates {
				t.Renditions = append(t.Renditions, Rendition{ID: fmt.Sprintf("%dk", k), Kbps: k, Segments: segs})
			}
		} else {
			k := src.Bitrates[r.IntN(len(src.Bitrates))]
			t.Renditions = []Rendition{{ID: fmt.Sprintf("%dk", k), Kbps: k, Segments: segs}}
		}
		d.Titles = append(d.Titles, t)
	}
	return d
}

// SegmentSize is the size in bytes of segment n (1-based) of a rendition:
// the mean bitrate x duration x efficiency, times a log-normal VBR factor
// of mean 1 drawn from a hash of the ids, so it is the same in every run.
func (d *Dataset) SegmentSize(title string, r Rendition, n int) int64 {
	mean := float64(r.Kbps) * 1000 / 8 * d.SegmentDuration.Seconds() * d.efficiency
	if d.sigma == 0 {
		return max(int64(mean), 1)
	}
	h := fnv.New64a()
	fmt.Fprintf(h, "%s/%s/%d", title, r.ID, n)
	rr := rand.New(rand.NewPCG(h.Sum64(), d.seed))
	f := math.Exp(d.sigma*rr.NormFloat64() - d.sigma*d.sigma/2)
	return max(int64(mean*f), 1)
}

// TotalBytes is the size of the whole library.
func (d *Dataset) TotalBytes() int64 {
	var sum int64
	for _, t := range d.Titles {
		for _, r := range t.Renditions {
			for n := 1; n <= r.Segments; n++ {
				sum += d.SegmentSize(t.ID, r, n)
			}
		}
	}
	return sum
}
