package plot_test

import (
	"os"
	"path/filepath"

	"github.com/strata-media/strata/internal/lab/plot"
)

// A report writes each chart beside report.md and links it as an image.
func Example() {
	dir := os.TempDir()
	sizes := []float64{16, 64, 256}
	lines := plot.Chart{Title: "Hit ratio", XLabel: "SSD size (GB)", YLabel: "hit ratio", YMin: new(0.0)}.Lines([]plot.Series{
		{Name: "FlashStream", X: sizes, Y: []float64{0.41, 0.68, 0.87}},
		{Name: "flashcache", X: sizes, Y: []float64{0.30, 0.57, 0.79}},
	})
	bars := plot.Chart{Title: "Max streams", YLabel: "streams"}.Bars([]plot.Bar{
		{Label: "Zipf 0.8", Values: []float64{980, 720}},
		{Label: "Zipf 1.0", Values: []float64{1460, 1120}},
	}, []string{"FlashStream", "flashcache"})
	_ = os.WriteFile(filepath.Join(dir, "hit-ratio.svg"), lines, 0o644)
	_ = os.WriteFile(filepath.Join(dir, "max-streams.svg"), bars, 0o644)
}
