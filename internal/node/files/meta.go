package files

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/strata-media/strata/internal/httpapi"
	"github.com/strata-media/strata/internal/media/source"
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

// maxSidecar bounds the sidecar read: one is a few hundred bytes, and a
// larger file under its name is not one.
const maxSidecar = 64 << 10

// metaOf describes the version of file id that st describes: its sidecar,
// else what a probe found (a file copied in by hand), probed once per
// version and remembered, so that requests never probe.
func (t *Tier) metaOf(id string, st fs.FileInfo) Meta {
	if m, ok := readSidecar(t.metaPath(id), st.Size()); ok {
		m.Modified = st.ModTime()
		return m
	}
	k := probeKey{id: id, size: st.Size(), mod: st.ModTime().UnixNano()}
	if m, ok := t.probes.get(k); ok {
		return m
	}
	m := t.probeMeta(t.filePath(id), st.Size(), st.ModTime())
	t.probes.put(k, m)
	return m
}

// readSidecar reads a sidecar that describes a file of size bytes.
func readSidecar(path string, size int64) (Meta, bool) {
	var m Meta
	f, err := os.Open(path)
	if err != nil {
		return m, false
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxSidecar))
	return m, err == nil && json.Unmarshal(b, &m) == nil && m.Size == size
}

// probeMeta derives a file's metadata: the play-out time of an MP4 from
// its movie header, else the configured default bitrate.
func (t *Tier) probeMeta(path string, size int64, mod time.Time) Meta {
	t.stats.probes.Add(1)
	m := Meta{Size: size, Modified: mod, Bitrate: t.opts.DefaultBitrate, ContentType: httpapi.ContentType(path)}
	if d := mp4Duration(path, size); d > 0 {
		m.Duration = d.Seconds()
		m.Bitrate = max(int64(float64(size)/d.Seconds()), 1)
	}
	return m
}

// mp4Duration reads an MP4's duration from its movie header, reading box
// headers only (source.Duration: a few KB whatever the file holds); 0 if
// the file is not an MP4 (a WebM, an MP3: told by their magic) or has no
// usable movie header.
func mp4Duration(path string, size int64) time.Duration {
	f, err := os.Open(path)
	if err != nil {
		return 0
	}
	defer f.Close()
	d, err := source.Duration(f, size)
	if err != nil {
		return 0
	}
	return d
}

// maxProbes bounds the remembered probes.
const maxProbes = 4096

// probeKey names one version of a file.
type probeKey struct {
	id        string
	size, mod int64
}

// probeCache remembers the metadata probed for file versions without a
// sidecar, at most maxProbes of them (an arbitrary one is forgotten to
// make room).
type probeCache struct {
	mu sync.Mutex // protects m
	m  map[probeKey]Meta
}

func (c *probeCache) get(k probeKey) (Meta, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	m, ok := c.m[k]
	return m, ok
}

func (c *probeCache) put(k probeKey, m Meta) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = make(map[probeKey]Meta)
	}
	if len(c.m) >= maxProbes {
		for old := range c.m {
			delete(c.m, old)
			break
		}
	}
	c.m[k] = m
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
