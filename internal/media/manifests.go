package media

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"time"

	"github.com/strata-media/strata/internal/core/framegroup"
	"github.com/strata-media/strata/internal/media/framestore"
	"github.com/strata-media/strata/internal/media/manifest"
)

// Title-level file names.
const (
	MPDName    = "manifest.mpd"
	MasterName = "master.m3u8"
	MetaName   = "strata.json" // read by origin.Dir's catalog
)

// LevelMPDName and LevelMasterName name the manifests that present play
// level l as an ordinary stream.
func LevelMPDName(l framegroup.Level) string { return "manifest-" + l.String() + ".mpd" }

// LevelMasterName is the HLS multivariant playlist of play level l.
func LevelMasterName(l framegroup.Level) string { return "master-" + l.String() + ".m3u8" }

func manifestNames(levels []framegroup.Level) []string {
	names := []string{MPDName, MasterName}
	for _, l := range levels {
		names = append(names, LevelMPDName(l), LevelMasterName(l))
	}
	return names
}

// writeManifests writes the main DASH and HLS manifests, one pair per
// built level, and strata.json.
func (t *title) writeManifests() error {
	main := manifest.Presentation{Duration: t.duration, Video: t.levels[framegroup.L1], Audio: t.audio,
		Trick: append(append([]manifest.Rendition{}, t.levels[framegroup.L4]...), t.levels[framegroup.L5]...)}
	if err := t.writePresentation(MPDName, MasterName, main); err != nil {
		return err
	}
	for _, l := range t.opts.Levels {
		p := manifest.Presentation{Duration: t.duration, Video: t.levels[l]}
		if !l.IntraOnly() { // reduced frame rate plays in real time, with sound
			p.Audio = t.audio
		}
		if err := t.writePresentation(LevelMPDName(l), LevelMasterName(l), p); err != nil {
			return err
		}
	}
	return t.writeMeta()
}

func (t *title) writePresentation(mpdName, masterName string, p manifest.Presentation) error {
	mpd, err := manifest.MPD(p)
	if err != nil {
		return err
	}
	if err := writeFile(filepath.Join(t.dir, mpdName), mpd); err != nil {
		return err
	}
	m3u8, err := manifest.Master(p)
	if err != nil {
		return err
	}
	return writeFile(filepath.Join(t.dir, masterName), m3u8)
}

// meta is strata.json. origin reads segment_duration_s and the
// renditions' bandwidths (internal/storage/origin/meta.go); "media" is for people
// and tools.
type meta struct {
	SegmentDuration float64                  `json:"segment_duration_s"`
	Renditions      map[string]renditionMeta `json:"renditions"`
	Media           mediaMeta                `json:"media"`
}

type renditionMeta struct {
	Bandwidth int `json:"bandwidth"`
}

type mediaMeta struct {
	Version     int                           `json:"version"`
	Packaged    time.Time                     `json:"packaged"`
	Duration    float64                       `json:"duration_s"`
	Renditions  []RenditionInfo               `json:"renditions"`
	Levels      []string                      `json:"levels"`
	FrameStores map[string]framestore.Summary `json:"frame_stores"`
}

func (t *title) writeMeta() error {
	m := meta{SegmentDuration: t.opts.SegmentDuration.Seconds(), Renditions: map[string]renditionMeta{},
		Media: mediaMeta{Version: 1, Packaged: time.Now().UTC(), Duration: t.duration, Renditions: t.info,
			Levels: []string{framegroup.L1.String()}, FrameStores: t.stores}}
	for _, r := range t.info {
		m.Renditions[r.Name] = renditionMeta{Bandwidth: r.Bandwidth}
	}
	for _, l := range t.opts.Levels {
		m.Media.Levels = append(m.Media.Levels, l.String())
	}
	data, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return fmt.Errorf("media: %w", err)
	}
	return writeFile(filepath.Join(t.dir, MetaName), append(data, '\n'))
}
