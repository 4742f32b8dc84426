package loadgen

import (
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/strata-media/strata/internal/bytesize"
)

// The text form of reports and searches, which strata bench prints and
// the lab's tools reuse.

// Summary is the trial's outcome on one line.
func (t Trial) Summary() string {
	verdict := "clean"
	if !t.Clean {
		verdict = "MISSES"
	}
	errs := strconv.Itoa(t.Errors) + " errors"
	if len(t.ErrorKinds) > 0 {
		var kinds []string
		for _, k := range slices.Sorted(maps.Keys(t.ErrorKinds)) {
			kinds = append(kinds, fmt.Sprintf("%s %d", k, t.ErrorKinds[k]))
		}
		errs += ": " + strings.Join(kinds, ", ")
	}
	return fmt.Sprintf("%s, %d of %d missed (%s), p99 %.1f ms, %.1f req/s done",
		verdict, t.Misses, t.Requests, errs, t.P99Ms, t.ThroughputRPS)
}

// WriteText writes the report as a table (strata bench without --json).
func (r Report) WriteText(w io.Writer) {
	fmt.Fprintf(w, "bench %s: %s req/s open-loop for %s (warmup %s), titles by %s over %d titles, seed %d\n",
		r.URL, plain(r.RateRPS), seconds(r.DurationS), seconds(r.WarmupS), r.Popularity, r.CatalogTitles, r.Seed)
	if r.Viewers > 0 {
		fmt.Fprintf(w, "  from %d viewers, each watching a title's rendition from its first segment to its last\n", r.Viewers)
	}
	if r.Interrupted {
		fmt.Fprintln(w, "  interrupted: the report covers the run so far")
	}
	fmt.Fprintf(w, "  requests    %d due, %d completed, %d errors (%d dropped at --max-inflight)\n", r.Requests, r.Completed, r.Errors, r.Dropped)
	fmt.Fprintf(w, "  misses      %d (%.3f%%): %d late, %d errors\n", r.Misses, 100*r.MissRatio, r.Late, r.Errors)
	fmt.Fprintf(w, "  throughput  %.1f req/s, %.2f MB/s\n", r.ThroughputRPS, r.MBPerS)
	fmt.Fprintf(w, "  latency ms  p50 %.1f  p90 %.1f  p99 %.1f  p99.9 %.1f  max %.1f (exact, over completed requests)\n",
		r.P50Ms, r.P90Ms, r.P99Ms, r.P999Ms, r.MaxMs)
	printKinds(w, r.ErrorKinds)
	printTop(w, r)
	printServer(w, r.Server)
}

func seconds(s float64) string {
	return (time.Duration(s * float64(time.Second))).Round(time.Millisecond).String()
}

// printKinds prints error counts by kind.
func printKinds(w io.Writer, kinds map[string]int) {
	for _, k := range slices.Sorted(maps.Keys(kinds)) {
		fmt.Fprintf(w, "  error       %s: %d\n", k, kinds[k])
	}
}

// printTop prints the share of requests of the most popular titles.
func printTop(w io.Writer, r Report) {
	if r.Requests == 0 {
		return
	}
	var parts []string
	for _, t := range r.Titles[:min(3, len(r.Titles))] {
		parts = append(parts, fmt.Sprintf("%s %.1f%%", t.ID, 100*float64(t.Requests)/float64(r.Requests)))
	}
	fmt.Fprintf(w, "  top titles  %s\n", strings.Join(parts, ", "))
}

// printServer prints the server's counters that changed over the run.
func printServer(w io.Writer, server map[string]float64) {
	if server == nil {
		fmt.Fprintln(w, "  server      no /stats")
		return
	}
	unchanged := 0
	for _, k := range slices.Sorted(maps.Keys(server)) {
		if server[k] == 0 {
			unchanged++
			continue
		}
		fmt.Fprintf(w, "  server      %-28s %s\n", k, delta(k, server[k]))
	}
	fmt.Fprintf(w, "  server      %d other /stats values unchanged\n", unchanged)
}

// delta writes the change v of the /stats value named key with its sign,
// in plain decimals (never an exponent: "+580753860", not
// "+5.8075386e+08"), and the unit its name gives: bytes with their size
// in binary units too ("+580753860 B (553.9 MiB)"), seconds and
// milliseconds.
func delta(key string, v float64) string {
	sign := "+"
	if v < 0 {
		sign, v = "-", -v
	}
	s := sign + plain(v)
	name := key[strings.LastIndexByte(key, '.')+1:]
	switch {
	case strings.Contains(name, "bytes") && v == math.Trunc(v) && v < 1<<62:
		s += " B (" + bytesize.Format(int64(v)) + ")"
	case strings.HasSuffix(name, "_ms"):
		s += " ms"
	case strings.HasSuffix(name, "_s") || strings.HasSuffix(name, "seconds"):
		s += " s"
	}
	return s
}

// plain writes v >= 0 in plain decimals, at most 6 after the point.
func plain(v float64) string {
	s := strconv.FormatFloat(v, 'f', -1, 64)
	if dot := strings.IndexByte(s, '.'); dot >= 0 && len(s)-dot-1 > 6 {
		s = strings.TrimSuffix(strings.TrimRight(strconv.FormatFloat(v, 'f', 6, 64), "0"), ".")
	}
	return s
}

// WriteText writes a find-max search of cfg as a table (strata bench
// --find-max without --json).
func (m MaxResult) WriteText(w io.Writer, cfg Config) {
	state := "converged"
	if !m.Converged {
		state = "not converged"
	}
	fmt.Fprintf(w, "find-max %s: %s (%d trials of %s, %s)\n", cfg.URL, maxVerdict(m), len(m.Trials), cfg.Duration, state)
	fmt.Fprintf(w, "  %10s %9s %7s %7s %10s %8s  %s\n", "rate req/s", "requests", "errors", "misses", "miss ratio", "p99 ms", "result")
	for _, t := range m.Trials {
		verdict := "clean"
		if !t.Clean {
			verdict = "misses"
		}
		if t.Confirm {
			verdict += " (confirming run)"
		}
		fmt.Fprintf(w, "  %10.1f %9d %7d %7d %10.4f %8.1f  %s\n", t.RateRPS, t.Requests, t.Errors, t.Misses, t.MissRatio, t.P99Ms, verdict)
	}
}

// maxVerdict states a search's answer.
func maxVerdict(m MaxResult) string {
	switch {
	case m.MaxRPS == 0 && m.FailRPS == 0:
		return "no trial ran"
	case m.MaxRPS == 0:
		return fmt.Sprintf("every rate missed, down to %.1f req/s", m.FailRPS)
	case m.FailRPS == 0:
		return fmt.Sprintf("no misses up to %.1f req/s", m.MaxRPS)
	case m.FailRPS < m.MaxRPS: // every confirming run missed
		return fmt.Sprintf("%.1f req/s with 0%% misses in the short trials, not held by a longer run down to %.1f", m.MaxRPS, m.FailRPS)
	case m.Confirmed:
		return fmt.Sprintf("highest rate with 0%% misses %.1f req/s, held by a longer run (lowest with misses %.1f)", m.MaxRPS, m.FailRPS)
	}
	return fmt.Sprintf("highest rate with 0%% misses %.1f req/s (lowest with misses %.1f)", m.MaxRPS, m.FailRPS)
}
