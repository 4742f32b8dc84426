package server

import (
	"log/slog"
	"net/http"

	"github.com/strata-media/strata/internal/httpapi"
	"github.com/strata-media/strata/internal/ident"
	"github.com/strata-media/strata/internal/node/engine"
)

// Admin is the module of the admin endpoints, behind the bearer token.
type Admin struct {
	eng *engine.Engine
	log *slog.Logger
}

// NewAdmin returns the admin module of eng; log receives what it does
// (nil: slog.Default()).
func NewAdmin(eng *engine.Engine, log *slog.Logger) *Admin {
	if log == nil {
		log = slog.Default()
	}
	return &Admin{eng: eng, log: log}
}

// Mount registers POST /admin/invalidate/{video}.
func (a *Admin) Mount(m *httpapi.Mounter) {
	m.HandleAdmin("POST /admin/invalidate/{video}", http.HandlerFunc(a.invalidate))
}

// invalidate makes every cached object of a video unservable, durably: a
// new version of the title replaces the old one (FlashStream §3.2.1).
func (a *Admin) invalidate(w http.ResponseWriter, r *http.Request) {
	video := r.PathValue("video")
	if err := ident.ValidName(video); err != nil {
		httpapi.Error(w, http.StatusBadRequest, err.Error())
		return
	}
	if err := a.eng.Invalidate(ident.VideoPrefix(video)); err != nil {
		a.log.Error("invalidate", "video", video, "err", err)
		httpapi.Error(w, http.StatusInternalServerError, "the invalidation record could not be written; see the server log")
		return
	}
	a.log.Info("invalidated", "video", video)
	writeJSON(w, http.StatusOK, map[string]string{"invalidated": video})
}
