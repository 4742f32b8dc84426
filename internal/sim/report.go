package sim

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// A Figure is an SVG written beside a report.
type Figure struct {
	File string
	SVG  []byte
}

// WriteReport writes report.md and its figures into dir.
func WriteReport(dir, markdown string, figs []Figure) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for _, f := range figs {
		if err := os.WriteFile(filepath.Join(dir, f.File), f.SVG, 0o644); err != nil {
			return err
		}
	}
	return os.WriteFile(filepath.Join(dir, "report.md"), []byte(markdown), 0o644)
}

// md builds Markdown.
type md struct{ strings.Builder }

func (m *md) p(format string, args ...any) {
	fmt.Fprintf(m, format, args...)
	m.WriteString("\n\n")
}

func (m *md) h(level int, title string) {
	m.WriteString(strings.Repeat("#", level) + " " + title + "\n\n")
}

// table writes a Markdown table.
func (m *md) table(head []string, rows [][]string) {
	m.WriteString("| " + strings.Join(head, " | ") + " |\n|")
	for range head {
		m.WriteString("---|")
	}
	m.WriteString("\n")
	for _, r := range rows {
		m.WriteString("| " + strings.Join(r, " | ") + " |\n")
	}
	m.WriteString("\n")
}

func (m *md) img(file, alt string) { m.p("![%s](%s)", alt, file) }

// f formats a float compactly.
func f(v float64, prec int) string { return fmt.Sprintf("%.*f", prec, v) }

func pct(v float64) string { return fmt.Sprintf("%.1f%%", 100*v) }

var _ = io.Discard
