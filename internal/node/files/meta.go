package files

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/Eyevinn/mp4ff/mp4"

	"github.com/strata-media/strata/internal/httpapi"
)

// Meta describes a stored file: what admission control reserves for its
// streams. It is kept beside the file as <id>.json.
type Meta struct {
	Size int64 `json:"size"`
	// Bitrate is the play-out rate in bytes per second: the bandwidth a
	// stream of the file reserves (VoD paper Algorithm 2).
	Bitrate int64 `json:"bitrate_bps"`
	// Duration is the play-out time, 0 if unknown.
	Duration    float64   `json:"duration_s"`
	ContentType string    `json:"content_type"`
	Modified    time.Time `json:"modified"`
}

// metaPath is the sidecar of file id.
func (t *Tier) metaPath(id string) string { return filepath.Join(t.opts.Dir, id+".json") }

// filePath is file id's data.
func (t *Tier) filePath(id string) string { return filepath.Join(t.opts.Dir, id) }

// readMeta returns file id's metadata, computing it (and the default
// bitrate) when the sidecar is missing: files copied in by hand work too.
func (t *Tier) readMeta(id string) (Meta, error) {
	st, err := os.Stat(t.filePath(id))
	if errors.Is(err, fs.ErrNotExist) || err == nil && !st.Mode().IsRegular() {
		return Meta{}, fmt.Errorf("%w: file %s", ErrNotFound, id)
	}
	if err != nil {
		return Meta{}, err
	}
	return t.metaOf(id, st), nil
}

// metaOf describes the version of file id that st describes.
func (t *Tier) metaOf(id string, st fs.FileInfo) Meta {
	var m Meta
	if b, err := os.ReadFile(t.metaPath(id)); err == nil && json.Unmarshal(b, &m) == nil && m.Size == st.Size() {
		m.Modified = st.ModTime()
		return m
	}
	return t.probeMeta(t.filePath(id), st.Size(), st.ModTime())
}

// probeMeta derives a file's metadata: the play-out time of an MP4 from
// its movie header, else the configured default bitrate.
func (t *Tier) probeMeta(path string, size int64, mod time.Time) Meta {
	m := Meta{Size: size, Modified: mod, Bitrate: t.opts.DefaultBitrate, ContentType: httpapi.ContentType(path)}
	if d := mp4Duration(path); d > 0 {
		m.Duration = d.Seconds()
		m.Bitrate = max(int64(float64(size)/d.Seconds()), 1)
	}
	return m
}

// mp4Duration reads an MP4's duration from its moov box without reading
// the media data; 0 if the file is not an MP4 with a movie header.
func mp4Duration(path string) time.Duration {
	f, err := os.Open(path)
	if err != nil {
		return 0
	}
	defer f.Close()
	mf, err := mp4.DecodeFile(f, mp4.WithDecodeMode(mp4.DecModeLazyMdat))
	if err != nil || mf.Moov == nil || mf.Moov.Mvhd == nil || mf.Moov.Mvhd.Timescale == 0 {
		return 0
	}
	h := mf.Moov.Mvhd
	return time.Duration(float64(h.Duration) / float64(h.Timescale) * float64(time.Second))
}

// writeMeta writes a sidecar atomically: a temporary file renamed over it.
func writeMeta(dir, path string, m Meta) error {
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, ".upload-meta-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(append(b, '\n')); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
