package plot

import (
	"bytes"
	"encoding/xml"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var (
	update   = flag.Bool("update", false, "rewrite the golden files in testdata/")
	examples = flag.String("examples", "", "also write the golden charts to this directory")
)

// goldenCase is a representative chart kept in testdata/<name>.svg.
type goldenCase struct {
	name   string
	render func() []byte
}

var nan = math.NaN()

var goldenCases = []goldenCase{
	{"lines", func() []byte {
		sizes := []float64{16, 32, 64, 128, 192, 256}
		return Chart{Title: "Byte hit ratio vs. SSD size", XLabel: "SSD size (GB)", YLabel: "byte hit ratio",
			YMin: new(0.0), YMax: new(1.0)}.Lines([]Series{
			{Name: "FlashStream", X: sizes, Y: []float64{0.41, 0.55, 0.68, 0.79, 0.84, 0.87}},
			{Name: "flashcache", X: sizes, Y: []float64{0.30, 0.43, 0.57, 0.69, 0.75, 0.79}},
			{Name: "ZFS L2ARC", X: sizes, Y: []float64{0.22, 0.31, 0.45, 0.58, 0.66, 0.71}},
			{Name: "Belady (bound)", X: sizes, Y: []float64{0.52, 0.66, 0.78, 0.88, 0.92, 0.95}},
		})
	}},
	{"lines_log", func() []byte {
		bs := []float64{4096, 16384, 65536, 262144, 1 << 20, 4 << 20}
		return Chart{Title: "Read latency by block size", XLabel: "block size (bytes)", YLabel: "p99 latency (ms)",
			XLog: true, YLog: true}.Lines([]Series{
			{Name: "SSD A (Intel X25-M)", X: bs, Y: []float64{0.21, 0.35, 0.9, 3.1, 11.5, 44}},
			{Name: "SSD B (OCZ Core V2)", X: bs, Y: []float64{2.5, 3.1, 4.8, nan, 21, 80}},
			{Name: "HDD", X: bs, Y: []float64{8.1, 8.3, 9.2, 12.5, 25, 70}},
		})
	}},
	{"lines_dense", func() []byte {
		var a, b Series
		a.Name, b.Name = "requests/s", "evictions/s <smoothed & clipped>"
		for i := range 300 {
			t := float64(i)
			a.X, a.Y = append(a.X, t), append(a.Y, 1500+900*math.Sin(t/25)+float64(i%7)*40)
			b.X, b.Y = append(b.X, t), append(b.Y, 200+150*math.Cos(t/40))
		}
		return Chart{Title: "Load over time", XLabel: "time (s)", YLabel: "rate (1/s)", Width: 720, Height: 360}.Lines([]Series{a, b})
	}},
	{"bars", func() []byte {
		return Chart{Title: "Max concurrent streams (§5, Fig. 7)", YLabel: "streams"}.Bars([]Bar{
			{Label: "Uniform", Values: []float64{410, 295, 251}},
			{Label: "Zipf 0.8", Values: []float64{980, 720, 600}},
			{Label: "Zipf 1.0", Values: []float64{1460, 1120, 905}},
			{Label: "Trace", Values: []float64{1210, nan, 802}},
		}, []string{"FlashStream", "flashcache", "ZFS L2ARC"})
	}},
	{"bars_slanted", func() []byte {
		return Chart{Title: "Change in energy per GB served", YLabel: "Δ energy (%)", Width: 520}.Bars([]Bar{
			{Label: "FlashStream (4 MiB blocks)", Values: []float64{-38.5}},
			{Label: "flashcache (write-back)", Values: []float64{-12.25}},
			{Label: "ZFS L2ARC", Values: []float64{4.5}},
			{Label: "RAM only", Values: []float64{0}},
			{Label: "HDD only, no cache at all", Values: []float64{21}},
		}, nil)
	}},
	{"bars_many", func() []byte {
		var groups []Bar
		for i, l := range []string{"4K", "16K", "64K", "256K", "1M", "4M"} {
			var vs []float64
			for s := range 7 {
				vs = append(vs, math.Round(1000*math.Pow(1.7, float64(i))*float64(s+1)/3)/10)
			}
			groups = append(groups, Bar{Label: l, Values: vs})
		}
		return Chart{Title: "Throughput by block size", XLabel: "block size", YLabel: "MB/s", YLog: true}.Bars(groups,
			[]string{"s1", "s2", "s3", "s4", "s5", "s6", "s7"})
	}},
	{"bars_along", func() []byte {
		var groups []Bar
		for i := range 12 {
			groups = append(groups, Bar{Label: "workload " + string(rune('A'+i)),
				Values: []float64{float64(1000 + i*537), float64(800 + i*311), 123456.7 / float64(i+1)}})
		}
		return Chart{Title: "Bytes by workload", YLabel: "bytes"}.Bars(groups, []string{"read", "write", "other"})
	}},
	{"lines_clipped", func() []byte {
		x := []float64{1, 2, 3, 4, 5, 6}
		return Chart{Title: "Fixed range clips; missing points break lines", YMin: new(0.0), YMax: new(5.0)}.Lines([]Series{
			{Name: "up", X: x, Y: []float64{1, 4, 20, -8, 5, 1e9}},
			{Name: "gaps", X: x, Y: []float64{-1, nan, 2, 2, math.Inf(1), 3}},
		})
	}},
	{"small", func() []byte {
		x := []float64{1, 2, 3, 4, 5, 6}
		return Chart{Title: "Small chart with a long title that must be cut", XLabel: "x", YLabel: "y", Width: 240, Height: 160}.Lines([]Series{
			{Name: "alpha", X: x, Y: []float64{1, 4, 2, 8, 5, 7}},
			{Name: "beta", X: x, Y: []float64{3, 3, 3, 3, 3, 3}},
		})
	}},
	{"scatter", func() []byte {
		var a, b Series
		a.Name, b.Name = "hits", "misses"
		for i := range 60 {
			x := float64(i*37%101) / 10
			a.X, a.Y = append(a.X, x), append(a.Y, 0.02*x*x+float64(i%5)/10)
			b.X, b.Y = append(b.X, x+0.05), append(b.Y, 2-0.1*x+float64(i%3)/8)
		}
		return Chart{Title: "Popularity vs. reuse distance", XLabel: "reuse distance (GB)", YLabel: "requests/h"}.Scatter([]Series{a, b})
	}},
	{"step", func() []byte {
		x := []float64{0, 1, 2, 5, 10, 20, 50, 100}
		return Chart{Title: "Deadline misses (CDF)", XLabel: "lateness (ms)", YLabel: "fraction of requests",
			YMin: new(0.0), YMax: new(1.0)}.Step([]Series{
			{Name: "FlashStream", X: x, Y: []float64{0.50, 0.70, 0.80, 0.90, 0.95, 0.98, 0.995, 1}},
			{Name: "flashcache", X: x, Y: []float64{0.20, 0.35, 0.50, 0.65, 0.80, 0.90, 0.97, 1}},
		})
	}},
	{"many_series", func() []byte {
		var ss []Series
		for i := range 10 {
			s := Series{Name: "policy " + string(rune('A'+i))}
			for x := range 8 {
				s.X = append(s.X, float64(x))
				s.Y = append(s.Y, float64(i)+math.Sqrt(float64(x))*(1+float64(i)/5))
			}
			ss = append(ss, s)
		}
		return Chart{Title: "Ten series: colors, markers and dashes", XLabel: "x", YLabel: "y"}.Lines(ss)
	}},
	{"empty", func() []byte {
		return Chart{Title: "Nothing measured yet", XLabel: "x", YLabel: "y"}.Lines([]Series{{Name: "a"}, {Name: "b", X: []float64{nan}, Y: []float64{1}}})
	}},
	{"single_point", func() []byte {
		return Chart{Title: "One point, zero range"}.Lines([]Series{{Name: "only", X: []float64{3}, Y: []float64{7}}})
	}},
}

func TestGolden(t *testing.T) {
	for _, gc := range goldenCases {
		t.Run(gc.name, func(t *testing.T) {
			got := gc.render()
			checkSVG(t, got)
			if !bytes.Equal(got, gc.render()) {
				t.Fatal("two renderings differ")
			}
			if *examples != "" {
				writeFile(t, filepath.Join(*examples, gc.name+".svg"), got)
			}
			path := filepath.Join("testdata", gc.name+".svg")
			if *update {
				writeFile(t, path, got)
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run go test -update)", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("%s differs from the rendering; run go test -update and review the diff", path)
			}
		})
	}
}

func writeFile(t *testing.T, path string, b []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// checkSVG fails t unless b is well-formed XML with an svg root and no
// non-finite numbers in its attributes.
func checkSVG(t testing.TB, b []byte) {
	t.Helper()
	if err := parseSVG(b); err != nil {
		t.Fatalf("%v\n%s", err, b)
	}
}

// parseSVG checks that b parses as XML, its root is an SVG element and no
// attribute holds NaN or Inf.
func parseSVG(b []byte) error {
	d := xml.NewDecoder(bytes.NewReader(b))
	root := ""
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
		se, ok := tok.(xml.StartElement)
		if !ok {
			continue
		}
		if root == "" {
			root = se.Name.Space + " " + se.Name.Local
		}
		for _, a := range se.Attr {
			if strings.Contains(a.Value, "NaN") || strings.Contains(a.Value, "Inf") {
				return fmt.Errorf("<%s %s=%q>", se.Name.Local, a.Name.Local, a.Value)
			}
		}
	}
	if root != "http://www.w3.org/2000/svg svg" {
		return errors.New("root element is " + root)
	}
	return nil
}

func TestEscaping(t *testing.T) {
	nasty := `<b>&"quotes" 'x' ]]> -- ` + "\x00\x1b\xff"
	svg := Chart{Title: nasty, XLabel: nasty, YLabel: nasty}.Lines([]Series{{Name: nasty, X: []float64{1, 2}, Y: []float64{1, 2}}})
	checkSVG(t, svg)
	svg = Chart{Title: nasty}.Bars([]Bar{{Label: nasty, Values: []float64{1}}}, []string{nasty})
	checkSVG(t, svg)
	if strings.Contains(string(svg), "<b>") {
		t.Error("markup in a title was not escaped")
	}
}

func TestSizeClamped(t *testing.T) {
	for _, c := range []Chart{{Width: -5, Height: 1}, {Width: 1 << 30, Height: 1 << 30}, {Width: 1}} {
		svg := c.Lines([]Series{{X: []float64{1, 2}, Y: []float64{3, 4}}})
		checkSVG(t, svg)
		if len(svg) > 1<<20 {
			t.Errorf("%+v: %d bytes", c, len(svg))
		}
	}
}
