// Package player serves the watch page, where a person picks a title and
// plays it (normal, a reduced frame-rate level, or fast-forward through
// the I-frame trick level), and the dash.js and hls.js builds it uses,
// embedded in the binary so nothing is fetched at run time.
package player

import (
	"embed"
	"io/fs"
	"net/http"

	"github.com/strata-media/strata/internal/httpapi"
)

//go:embed assets/*.js assets/*LICENSE* assets/README.md
var assets embed.FS

//go:embed watch.html
var watchPage []byte

// Routes are the patterns Register serves.
const (
	WatchPattern  = "GET /watch"
	AssetsPattern = "GET /player/"
)

// Module is the HTTP module of the watch page and the player scripts.
var Module httpapi.Module = httpapi.ModuleFunc(func(m *httpapi.Mounter) {
	m.Handle(WatchPattern, http.HandlerFunc(serveWatch))
	m.Handle(AssetsPattern, AssetsHandler())
})

func serveWatch(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-cache")
	w.Write(watchPage)
}

// AssetsHandler serves /player/<file> from the embedded assets.
func AssetsHandler() http.Handler {
	sub, _ := fs.Sub(assets, "assets") // cannot fail: the directory is embedded
	files := http.StripPrefix("/player/", http.FileServerFS(sub))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "public, max-age=86400")
		files.ServeHTTP(w, r)
	})
}
