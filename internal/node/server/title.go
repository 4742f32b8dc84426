package server

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"slices"
	"time"

	"github.com/strata-media/strata/internal/core/framegroup"
	"github.com/strata-media/strata/internal/httpapi"
	"github.com/strata-media/strata/internal/ident"
	"github.com/strata-media/strata/internal/media"
	"github.com/strata-media/strata/internal/storage/origin"
)

// routeTitle is the title details route: GET (and HEAD) /videos/{video}.
// POST to the same path is an upload (package media).
const routeTitle = "GET /videos/{video}"

// maxMetaBytes bounds the strata.json read for a title's details; a
// larger one (not written by ingest) is ignored, as origin ignores it.
const maxMetaBytes = 1 << 20

// TitleDetails is the answer of GET /videos/{video}: what the capacity
// tier holds of the title, with what packaging recorded in strata.json
// (codecs, resolutions, levels, durations) when the title has it.
type TitleDetails struct {
	ID string `json:"id"`
	// Duration is the play-out time, seconds; 0 (absent) if unknown.
	Duration        float64   `json:"duration_s,omitempty"`
	SegmentDuration float64   `json:"segment_duration_s"`
	Modified        time.Time `json:"modified"`
	Synthetic       bool      `json:"synthetic,omitempty"`
	// Levels are the play levels packaged ("L1" plays in real time,
	// "L2" to "L5" are the reduced and fast-forward levels).
	Levels []string `json:"levels"`
	// Manifests are the DASH and HLS entry points, one per level.
	Manifests  []LevelManifests   `json:"manifests"`
	Renditions []RenditionDetails `json:"renditions"`
	// Files are the URLs of the title's other top-level files.
	Files []string `json:"files,omitempty"`
}

// LevelManifests are the URLs of one play level's manifests.
type LevelManifests struct {
	Level string `json:"level"`
	DASH  string `json:"dash,omitempty"`
	HLS   string `json:"hls,omitempty"`
}

// RenditionDetails describes one rendition of a title.
type RenditionDetails struct {
	ID string `json:"id"`
	// Bitrate is the average bitrate, bits per second (0: unknown);
	// PeakBitrate the highest of a segment, when packaging measured it.
	Bitrate     int    `json:"bitrate_bps"`
	PeakBitrate int    `json:"peak_bitrate_bps,omitempty"`
	Codec       string `json:"codec,omitempty"`
	Width       int    `json:"width,omitempty"`
	Height      int    `json:"height,omitempty"`
	FrameRate   string `json:"frame_rate,omitempty"`
	// Level and Of are set for a play level's rendition (2 to 5, built
	// from rendition Of).
	Level       int     `json:"level,omitempty"`
	Of          string  `json:"of,omitempty"`
	Duration    float64 `json:"duration_s,omitempty"`
	Segments    int     `json:"segments"`
	StartNumber int     `json:"start_number"`
	// Init and Playlist are the URLs of the CMAF init segment and the
	// HLS media playlist, when the rendition has them.
	Init     string `json:"init,omitempty"`
	Playlist string `json:"playlist,omitempty"`
	// Segment is the URL template of the media segments: $Number$ runs
	// from StartNumber.
	Segment string `json:"segment"`
}

// packaged is what GET /videos/{video} reads of strata.json: the "media"
// object package media writes.
type packaged struct {
	Media struct {
		Duration   float64               `json:"duration_s"`
		Renditions []media.RenditionInfo `json:"renditions"`
		Levels     []string              `json:"levels"`
	} `json:"media"`
}

// title answers GET /videos/{video}: the title's details as JSON, or a
// 404 problem for a title the capacity tier does not hold (unless the
// fallback handles the path: an edge's upstream may).
func (s *Videos) title(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("video")
	if err := ident.ValidName(id); err != nil {
		httpapi.Error(w, http.StatusBadRequest, "video id: "+err.Error())
		return
	}
	t, err := s.origin.Title(r.Context(), id)
	if err != nil {
		if errors.Is(err, origin.ErrNotFound) && s.fallBack(w, r) {
			return
		}
		httpapi.AbortIfGone(r)
		if CapacityError(w, "title "+httpapi.ClipID(id), err) != http.StatusNotFound {
			s.log.Warn("capacity tier title read failed", "video", httpapi.ClipID(id), "err", err)
		}
		return
	}
	var meta packaged
	if !t.Synthetic {
		obj, err := s.origin.Get(r.Context(), ident.Object{Video: id, Name: media.MetaName})
		switch {
		case err == nil && len(obj.Data) <= maxMetaBytes:
			if err := json.Unmarshal(obj.Data, &meta); err != nil {
				s.log.Warn("a title's strata.json is not valid JSON", "video", httpapi.ClipID(id), "err", err)
			}
		case err != nil && !errors.Is(err, origin.ErrNotFound):
			httpapi.AbortIfGone(r)
			s.log.Warn("capacity tier read of strata.json failed", "video", httpapi.ClipID(id), "err", err)
			CapacityError(w, "title "+httpapi.ClipID(id), err)
			return
		}
	}
	writeJSON(w, http.StatusOK, titleDetails(t, meta))
}

// titleDetails combines a catalog entry with its packaging record.
func titleDetails(t origin.Title, m packaged) TitleDetails {
	base := "/videos/" + url.PathEscape(t.ID) + "/"
	d := TitleDetails{ID: t.ID, Duration: m.Media.Duration, SegmentDuration: t.SegmentDuration,
		Modified: t.Modified, Synthetic: t.Synthetic, Levels: m.Media.Levels,
		Manifests: []LevelManifests{}, Renditions: []RenditionDetails{}}
	if len(d.Levels) == 0 {
		d.Levels = []string{framegroup.L1.String()}
	}
	has := func(name string) string {
		if slices.Contains(t.Files, name) {
			return base + name
		}
		return ""
	}
	listed := map[string]bool{}
	for _, name := range d.Levels {
		l, err := framegroup.ParseLevel(name)
		if err != nil {
			continue
		}
		mpd, master := media.MPDName, media.MasterName
		if l != framegroup.L1 {
			mpd, master = media.LevelMPDName(l), media.LevelMasterName(l)
		}
		listed[mpd], listed[master] = true, true
		if lm := (LevelManifests{Level: l.String(), DASH: has(mpd), HLS: has(master)}); lm.DASH != "" || lm.HLS != "" {
			d.Manifests = append(d.Manifests, lm)
		}
	}
	for _, f := range t.Files {
		if !listed[f] {
			d.Files = append(d.Files, base+f)
		}
	}
	info := map[string]media.RenditionInfo{}
	for _, ri := range m.Media.Renditions {
		info[ri.Name] = ri
	}
	for _, r := range t.Renditions {
		ri := info[r.ID]
		rb := base + url.PathEscape(r.ID) + "/"
		rd := RenditionDetails{ID: r.ID, Bitrate: r.Bandwidth, PeakBitrate: ri.Peak, Codec: ri.Codec,
			Width: ri.Width, Height: ri.Height, FrameRate: ri.FrameRate, Level: ri.Level, Of: ri.Of,
			Duration: ri.Duration, Segments: r.Segments, StartNumber: r.StartNumber, Segment: rb + "$Number$.m4s"}
		for _, f := range r.Files {
			switch f {
			case "init.mp4":
				rd.Init = rb + f
			case "playlist.m3u8", "iframes.m3u8":
				if rd.Playlist == "" || f == "playlist.m3u8" {
					rd.Playlist = rb + f
				}
			}
		}
		d.Renditions = append(d.Renditions, rd)
	}
	return d
}
