package vodsim

import (
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"github.com/strata-media/strata/internal/lab/sim/des"
	"github.com/strata-media/strata/internal/quantile"
	"github.com/strata-media/strata/internal/storage/model"
)

// deviceConfig is VoD §4's combined workload on one SSD model: 1 MB random
// reads and 1 MB sequential writes at once (Figs. 7-8, xdd, 20 minutes).
type deviceConfig struct {
	// Preset names the SSD model (model.NewPreset).
	Preset string
	// Capacity scales the drive (same geometry, fewer blocks); 0 keeps it.
	Capacity int64
	// Duration is how long the workload runs (§4.2: 20 minutes).
	Duration time.Duration
	// Readers is the number of 1 MB random reads kept outstanding.
	Readers int
	// Writers is the number of 1 MB sequential writes kept outstanding.
	Writers int
	// ReadRate and WriteRate, when set, pace the reads and writes instead
	// (open loop, bytes/s): a VoD server's streams and copies arrive at
	// their rates, so a drive idles between them and its background
	// garbage collection can run there.
	ReadRate, WriteRate float64
	// Aging preconditions the drive before the run.
	Aging model.Aging
	Seed  uint64
}

// deviceResult is one drive's time series and read-throughput statistics.
type deviceResult struct {
	Device    string    `json:"device"`
	Mapping   string    `json:"mapping"`
	ReadMBps  []float64 `json:"read_mbps"`  // per second (Fig. 7)
	WriteMBps []float64 `json:"write_mbps"` // per second
	ReadMean  float64   `json:"read_mean"`  // Fig. 8
	ReadStd   float64   `json:"read_std"`
	WriteMean float64   `json:"write_mean"`
	// ReadP99ms and ReadMaxMs are the 99th percentile and the largest
	// read latency, ms.
	ReadP99ms float64 `json:"read_p99_ms"`
	ReadMaxMs float64 `json:"read_max_ms"`
	WAF       float64 `json:"waf"`
	GCCopies  int64   `json:"gc_copies"`
	Erases    int64   `json:"erases"`
}

// runDevice runs the combined workload of VoD §4.2 on one SSD model.
func runDevice(c deviceConfig) (deviceResult, error) {
	ssd, err := newSSD(c.Preset, c.Capacity)
	if err != nil {
		return deviceResult{}, err
	}
	age(ssd, c.Aging)
	l := &des.Loop{}
	d := des.NewDisk(l, ssd)
	w := &deviceLoad{l: l, d: d, size: mb, rng: rand.New(rand.NewPCG(c.Seed, 0xde71)), end: c.Duration,
		read: make([]float64, int(c.Duration/time.Second)), write: make([]float64, int(c.Duration/time.Second))}
	if c.ReadRate > 0 || c.WriteRate > 0 {
		w.paced(c.ReadRate, c.WriteRate)
	} else {
		w.closed(c.Readers, c.Writers)
	}
	l.RunUntil(c.Duration)
	return w.result(ssd), nil
}

func newSSD(preset string, capacity int64) (*model.SSD, error) {
	m, err := model.NewPreset(preset)
	if err != nil {
		return nil, err
	}
	ssd, ok := m.(*model.SSD)
	if !ok {
		return nil, fmt.Errorf("vodsim: preset %q is not an SSD", preset)
	}
	if capacity <= 0 {
		return ssd, nil
	}
	return model.NewSSD(ssd.Params().WithCapacity(capacity))
}

// age preconditions ssd (model.SSD.Age clears its scratch counters
// itself, so the first background collection is not charged leftovers).
func age(ssd *model.SSD, a model.Aging) { ssd.Age(a) }

// deviceLoad keeps closed-loop readers and writers busy on one device.
type deviceLoad struct {
	l           *des.Loop
	d           *des.Disk
	size        int64
	rng         *rand.Rand
	end         time.Duration
	read, write []float64 // bytes completed per second
	wpos        int64     // the sequential writes' frontier
	lat         []time.Duration
}

// closed keeps readers reads and writers writes outstanding (xdd).
func (w *deviceLoad) closed(readers, writers int) {
	var read, write func()
	read = func() { w.readOne(read) }
	write = func() { w.writeOne(write) }
	for range readers {
		read()
	}
	for range writers {
		write()
	}
}

// paced issues reads and writes at fixed rates whatever the device does.
func (w *deviceLoad) paced(readRate, writeRate float64) {
	every := func(rate float64, fn func()) {
		if rate > 0 {
			period := time.Duration(float64(w.size) / rate * float64(time.Second))
			w.l.Every(period, func() bool { return w.l.Now() < w.end }, fn)
		}
	}
	every(readRate, func() { w.readOne(func() {}) })
	every(writeRate, func() { w.writeOne(func() {}) })
}

// readOne reads 1 MB at a random aligned offset, then calls next.
func (w *deviceLoad) readOne(next func()) {
	slots := w.d.Model().Size() / w.size
	start := w.l.Now()
	w.d.Read(w.rng.Int64N(slots)*w.size, w.size, func() {
		w.lat = append(w.lat, w.l.Now()-start)
		w.count(w.read)
		next()
	})
}

// writeOne writes the next 1 MB of one sequential frontier that wraps at
// the end of the device, then calls next.
func (w *deviceLoad) writeOne(next func()) {
	if w.wpos+w.size > w.d.Model().Size() {
		w.wpos = 0
	}
	off := w.wpos
	w.wpos += w.size
	w.d.Write(off, w.size, 0, func() {
		w.count(w.write)
		next()
	})
}

func (w *deviceLoad) count(series []float64) {
	if s := int(w.l.Now() / time.Second); s < len(series) {
		series[s] += float64(w.size)
	}
}

func (w *deviceLoad) result(ssd *model.SSD) deviceResult {
	p := ssd.Params()
	r := deviceResult{Device: p.Name, Mapping: mappingName(p.Mapping, p.BackgroundGC)}
	for i := range w.read {
		r.ReadMBps = append(r.ReadMBps, mbps(w.read[i]))
		r.WriteMBps = append(r.WriteMBps, mbps(w.write[i]))
	}
	r.ReadMean, r.ReadStd = meanStd(r.ReadMBps)
	r.WriteMean, _ = meanStd(r.WriteMBps)
	r.ReadP99ms = quantile.Of(w.lat, 0.99).Seconds() * 1000
	r.ReadMaxMs = quantile.Of(w.lat, 1).Seconds() * 1000
	st := ssd.Stats()
	r.WAF, r.GCCopies, r.Erases = st.WAF(), st.GCCopies, st.Erases
	return r
}

func mappingName(m model.Mapping, bg bool) string {
	if m == model.LogBlock {
		return "coarse (log-block)"
	}
	if bg {
		return "page-mapped, background GC"
	}
	return "page-mapped"
}

func meanStd(xs []float64) (mean, std float64) {
	if len(xs) == 0 {
		return 0, 0
	}
	for _, x := range xs {
		mean += x
	}
	mean /= float64(len(xs))
	for _, x := range xs {
		std += (x - mean) * (x - mean)
	}
	return mean, math.Sqrt(std / float64(len(xs)))
}
