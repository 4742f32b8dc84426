package server

import (
	"bytes"
	"cmp"
	_ "embed"
	"html/template"
	"net/http"
	"slices"
	"time"

	"github.com/strata-media/strata/internal/bytesize"
	"github.com/strata-media/strata/internal/httpapi"
	"github.com/strata-media/strata/internal/node/engine"
	"github.com/strata-media/strata/internal/storage/origin"
)

//go:embed dashboard.html
var dashboardHTML string

// favicon is the icon browsers ask every page of the node for: three
// bars, RAM, flash and capacity (a 32x32 PNG in an ICO).
//
//go:embed favicon.ico
var favicon []byte

var dashboardTmpl = template.Must(template.New("dash").Funcs(template.FuncMap{"size": bytesize.Format, "playable": playable,
	"div": func(a float64, b uint64) float64 { return a / float64(b) }}).Parse(dashboardHTML))

// Dashboard is the module of the HTML page at GET /: live charts of the
// last hour of the node's counters (GET /stats/history), the tiers'
// counters and the first titles of the catalog. It also takes the
// progress reports of strata bench runs (POST /admin/bench), whose
// deadline misses it charts.
type Dashboard struct {
	eng     *engine.Engine
	origin  origin.Origin
	history *History
}

// NewDashboard returns the dashboard of eng over the capacity tier org.
func NewDashboard(eng *engine.Engine, org origin.Origin) *Dashboard {
	return &Dashboard{eng: eng, origin: org, history: NewHistory(eng)}
}

// History returns the samples the dashboard plots; the node calls its
// Sample every HistoryInterval.
func (s *Dashboard) History() *History { return s.history }

// Mount registers GET / (only the root path), GET /favicon.ico, GET
// /stats/history and POST /admin/bench.
func (s *Dashboard) Mount(m *httpapi.Mounter) {
	m.Handle("GET /{$}", http.HandlerFunc(s.serve))
	m.Handle("GET /favicon.ico", http.HandlerFunc(serveFavicon))
	m.HandleNode("GET /stats/history", http.HandlerFunc(s.history.serveHistory))
	m.HandleAdmin("POST /admin/bench", http.HandlerFunc(s.history.serveBenchReport))
}

func (s *Dashboard) serve(w http.ResponseWriter, r *http.Request) {
	st := s.eng.Stats()
	titles, _ := s.origin.Catalog(r.Context())
	// Playable (packaged) titles first, so --demo's are not lost among
	// the synthetic library.
	slices.SortStableFunc(titles, func(a, b origin.Title) int { return cmp.Compare(b2i(playable(b)), b2i(playable(a))) })
	list, more := titles, 0
	if len(list) > 20 {
		list, more = list[:20], len(titles)-20
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-cache")
	dashboardTmpl.Execute(w, map[string]any{
		"S": st, "Util": st.SSD.Utilization * 100, "Titles": len(titles), "List": list, "More": more,
		"Edge": s.history.edgeSample(),
	})
}

// playable reports whether a title can be watched: a packaged title,
// with a DASH manifest (the watch page plays those). A synthetic title
// lists manifests too, but its segments are load-test bytes.
func playable(t origin.Title) bool { return !t.Synthetic && slices.Contains(t.Files, "manifest.mpd") }

// faviconModified is the icon's Last-Modified: the build's, as far as a
// browser need know (the icon changes with the binary, if ever).
var faviconModified = time.Now()

// serveFavicon answers /favicon.ico, cached for a day, so that browsers
// find an icon rather than log a 404 for every page of the node.
func serveFavicon(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "image/x-icon")
	w.Header().Set("Cache-Control", "public, max-age=86400")
	http.ServeContent(w, r, "", faviconModified, bytes.NewReader(favicon))
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
