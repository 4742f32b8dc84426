package plot

import (
	"encoding/binary"
	"flag"
	"math"
	"math/rand/v2"
	"testing"
	"time"
)

var seed = flag.Uint64("seed", 0, "seed of TestRandomCharts (0: time-based)")

// TestRandomCharts renders charts of hostile random data (NaN, ±Inf, huge
// and tiny magnitudes, negatives on log axes, empty and ragged slices,
// odd sizes and fixed ranges) and checks that each is well-formed SVG with
// finite coordinates. The seed is logged; -seed replays a run.
func TestRandomCharts(t *testing.T) {
	s := *seed
	if s == 0 {
		s = uint64(time.Now().UnixNano())
	}
	t.Logf("seed %d", s)
	r := rand.New(rand.NewPCG(s, s))
	for range 200 {
		c := randomChart(r)
		series := randomSeries(r)
		checkRendering(t, c, series)
	}
}

// checkRendering renders series with every chart type of c and checks
// the output.
func checkRendering(t testing.TB, c Chart, series []Series) {
	t.Helper()
	var groups []Bar
	var names []string
	for _, s := range series {
		groups = append(groups, Bar{Label: s.Name, Values: s.Y})
		names = append(names, s.Name)
	}
	for _, svg := range [][]byte{c.Lines(series), c.Scatter(series), c.Step(series), c.Bars(groups, names)} {
		checkSVG(t, svg)
		if len(svg) > 4<<20 {
			t.Fatalf("%d bytes of SVG for %+v", len(svg), c)
		}
	}
}

func randomChart(r *rand.Rand) Chart {
	c := Chart{XLog: r.IntN(3) == 0, YLog: r.IntN(3) == 0}
	if r.IntN(2) == 0 {
		c.Title, c.XLabel, c.YLabel = "title", "x axis", "y axis"
	}
	if r.IntN(4) == 0 {
		c.Width, c.Height = r.IntN(2000)-100, r.IntN(1500)-100
	}
	if r.IntN(4) == 0 {
		c.YMin = new(randomValue(r))
	}
	if r.IntN(4) == 0 {
		c.YMax = new(randomValue(r))
	}
	return c
}

func randomSeries(r *rand.Rand) []Series {
	ss := make([]Series, r.IntN(12))
	for i := range ss {
		ss[i].Name = []string{"", "a", "a rather long series name <with> & markup"}[r.IntN(3)]
		n := r.IntN(60)
		if r.IntN(10) == 0 {
			n = 2000
		}
		for range n {
			ss[i].X = append(ss[i].X, randomValue(r))
			ss[i].Y = append(ss[i].Y, randomValue(r))
		}
		ss[i].Y = ss[i].Y[:r.IntN(len(ss[i].Y)+1)] // ragged
	}
	return ss
}

// randomValue returns mostly ordinary numbers, with the edge cases often.
func randomValue(r *rand.Rand) float64 {
	special := []float64{math.NaN(), math.Inf(1), math.Inf(-1), 0, math.Copysign(0, -1),
		math.MaxFloat64, -math.MaxFloat64, math.SmallestNonzeroFloat64, 1e300, 1e-300, 1, 7}
	switch r.IntN(4) {
	case 0:
		return special[r.IntN(len(special))]
	case 1:
		return r.NormFloat64() * math.Pow(10, float64(r.IntN(640)-320))
	}
	return r.NormFloat64()*10 + 20
}

// FuzzCharts renders charts of arbitrary values and text.
func FuzzCharts(f *testing.F) {
	f.Add("t", []byte{}, false, false)
	f.Add("<&>", binary.LittleEndian.AppendUint64(nil, math.Float64bits(math.NaN())), true, true)
	f.Add("x", binary.LittleEndian.AppendUint64(binary.LittleEndian.AppendUint64(nil, 0x7fefffffffffffff), 1), false, true)
	f.Fuzz(func(t *testing.T, text string, raw []byte, xlog, ylog bool) {
		var s Series
		for i := 0; i+16 <= len(raw) && i < 1<<14; i += 16 {
			s.X = append(s.X, math.Float64frombits(binary.LittleEndian.Uint64(raw[i:])))
			s.Y = append(s.Y, math.Float64frombits(binary.LittleEndian.Uint64(raw[i+8:])))
		}
		s.Name = text
		c := Chart{Title: text, XLabel: text, YLabel: text, XLog: xlog, YLog: ylog}
		checkRendering(t, c, []Series{s, {Name: text, X: s.Y, Y: s.X}})
	})
}
