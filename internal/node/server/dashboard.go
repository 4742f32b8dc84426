package server

import (
	"cmp"
	"html/template"
	"net/http"
	"slices"

	"github.com/strata-media/strata/internal/bytesize"
	"github.com/strata-media/strata/internal/httpapi"
	"github.com/strata-media/strata/internal/node/engine"
	"github.com/strata-media/strata/internal/storage/origin"
)

var dashboardTmpl = template.Must(template.New("dash").Funcs(template.FuncMap{"size": bytesize.Format, "playable": playable}).Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Strata</title>
<style>body{font:15px/1.4 system-ui,sans-serif;margin:2em;max-width:60em}td,th{padding:.2em .8em;text-align:left}th{background:#eee}code{background:#f4f4f4;padding:0 .3em}</style>
</head><body>
<h1>Strata</h1>
<p>Media storage server: RAM &rarr; flash &rarr; capacity tier. <a href="/watch"><b>watch a title</b></a> &middot; <a href="/videos">catalog</a> &middot; <a href="/stats">stats</a> &middot; <a href="/metrics">metrics</a></p>
<h2>Tiers</h2>
<table>
<tr><th>tier</th><th>hits</th><th>misses</th><th>held</th></tr>
<tr><td>RAM</td><td>{{.S.RAM.Hits}}</td><td>{{.S.RAM.Misses}}</td><td>{{.S.RAM.Segments}} segments, {{size .S.RAM.Bytes}} of {{size .S.RAM.BudgetBytes}}</td></tr>
<tr><td>flash</td><td>{{.S.SSD.Hits}}</td><td>{{.S.SSD.Misses}}</td><td>{{.S.SSD.Segments}} segments in {{.S.SSD.BlocksUsed}} of {{.S.SSD.Blocks}} blocks of {{size .S.SSD.BlockSize}}; utilization {{printf "%.0f%%" .Util}}</td></tr>
<tr><td>capacity</td><td>{{.S.Origin.Reads}} reads</td><td></td><td>{{.Titles}} titles</td></tr>
</table>
<h2>Titles</h2>
<ul>{{range .List}}<li><code>{{.ID}}</code>: {{len .Renditions}} renditions, {{.SegmentCount}} segments{{if .Synthetic}} (synthetic){{else}}{{if playable .}} &middot; <a href="/watch?v={{.ID}}">watch</a>{{end}}{{end}}</li>{{end}}</ul>
{{if .More}}<p>and {{.More}} more</p>{{end}}
</body></html>`))

// Dashboard is the module of the HTML page at GET /: the tiers' counters
// and the first titles of the catalog.
type Dashboard struct {
	eng    *engine.Engine
	origin origin.Origin
}

// NewDashboard returns the dashboard of eng over the capacity tier org.
func NewDashboard(eng *engine.Engine, org origin.Origin) *Dashboard {
	return &Dashboard{eng: eng, origin: org}
}

// Mount registers GET / (only the root path).
func (s *Dashboard) Mount(m *httpapi.Mounter) {
	m.Handle("GET /{$}", http.HandlerFunc(s.serve))
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
	dashboardTmpl.Execute(w, map[string]any{
		"S": st, "Util": st.SSD.Utilization * 100, "Titles": len(titles), "List": list, "More": more,
	})
}

// playable reports whether a title has a DASH manifest, as packaged
// titles do (the watch page plays those).
func playable(t origin.Title) bool { return slices.Contains(t.Files, "manifest.mpd") }

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
