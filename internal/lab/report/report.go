// Package report writes the experiments' Markdown reports and the SVG
// figures beside them: one builder for every simulator (strata-lab sim).
package report

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// A Figure is an SVG written beside a report.
type Figure struct {
	File string
	SVG  []byte
}

// Write writes report.md and its figures into dir.
func Write(dir, markdown string, figs []Figure) error {
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

// Markdown builds a Markdown document.
type Markdown struct{ strings.Builder }

// P writes a paragraph.
func (m *Markdown) P(format string, args ...any) {
	fmt.Fprintf(m, format, args...)
	m.WriteString("\n\n")
}

// H writes a heading of the given level.
func (m *Markdown) H(level int, title string) {
	m.WriteString(strings.Repeat("#", level) + " " + title + "\n\n")
}

// Table writes a table.
func (m *Markdown) Table(head []string, rows [][]string) {
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

// Img links an image.
func (m *Markdown) Img(file, alt string) { m.P("![%s](%s)", alt, file) }
