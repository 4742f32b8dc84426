package origin

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"time"

	"golang.org/x/sys/unix"

	"github.com/strata-media/strata/internal/ident"
)

// scanTitle reads title id from its directory: each subdirectory with a
// valid name is a rendition, each regular file one of the title's Files,
// and strata.json, if present, overrides the defaults.
func (d *Dir) scanTitle(id string, now time.Time) (*dirTitle, error) {
	entries, st, err := d.readDir(id)
	if err != nil {
		return nil, err
	}
	e := &dirTitle{
		titleEntry: titleEntry{title: Title{ID: id, SegmentDuration: d.opts.DefaultSegmentDuration.Seconds()}},
		stamps:     []pathStamp{{path: id, st: st, ok: true}},
	}
	meta, ps := d.readMeta(id)
	e.stamps = append(e.stamps, ps)
	for _, ent := range entries {
		d.addEntry(e, ent)
	}
	meta.apply(&e.title)
	d.finish(e, now)
	d.cat.scans.Add(1)
	return e, nil
}

// addEntry adds one entry of a title directory to e.
func (d *Dir) addEntry(e *dirTitle, ent os.DirEntry) {
	name := ent.Name()
	if name == metaFile || ident.ValidName(name) != nil {
		return
	}
	path := e.title.ID + "/" + name
	switch mode := d.entryMode(path, ent); {
	case mode.IsDir():
		d.addRendition(e, path, name)
	case mode.IsRegular():
		e.title.Files = append(e.title.Files, name)
	}
}

// addRendition scans a rendition directory into e. One that cannot be read
// is left out, but its stamp is kept, so a repair is noticed.
func (d *Dir) addRendition(e *dirTitle, path, id string) {
	r, st, err := d.scanRendition(path, id)
	if err != nil {
		d.log.Warn("origin: rendition left out of the catalog", "root", d.fs.path, "path", path, "err", err)
		st, ok, _ := d.fs.stat(path)
		e.stamps = append(e.stamps, pathStamp{path: path, st: st, ok: ok})
		return
	}
	e.title.Renditions = append(e.title.Renditions, r)
	e.stamps = append(e.stamps, pathStamp{path: path, st: st, ok: true})
}

// scanRendition counts a rendition's media segments and lists its other
// files. Symlinks are taken at their word here, not resolved one by one (a
// rendition may hold thousands); Get still refuses any that escape.
func (d *Dir) scanRendition(path, id string) (Rendition, stamp, error) {
	entries, st, err := d.readDir(path)
	if err != nil {
		return Rendition{}, stamp{}, err
	}
	r := Rendition{ID: id, Bandwidth: inferBandwidth(id)}
	for _, e := range entries {
		addFile(&r, e)
	}
	return r, st, nil
}

// addFile adds e to r if it is a regular file or a symlink (see addName).
func addFile(r *Rendition, e os.DirEntry) {
	if t := e.Type(); t.IsRegular() || t&fs.ModeSymlink != 0 {
		addName(r, e.Name())
	}
}

// finish sorts e's title (sortTitle), and sets its modification time and
// whether its stamps can be trusted.
func (d *Dir) finish(e *dirTitle, now time.Time) {
	sortTitle(&e.title)
	var latest int64
	for _, ps := range e.stamps {
		if ps.ok {
			latest = max(latest, ps.st.mtime)
			e.racy = e.racy || d.isRacy(ps.st, now)
		}
	}
	e.title.Modified = time.Unix(0, latest).UTC()
}

// readMeta reads title id's strata.json. A missing file gives the zero
// titleMeta; an unreadable or invalid one is logged and ignored.
func (d *Dir) readMeta(id string) (titleMeta, pathStamp) {
	path := id + "/" + metaFile
	data, st, err := d.readSmall(path, maxMetaSize)
	if err == nil {
		var m titleMeta
		if m, err = parseMeta(data); err == nil {
			return m, pathStamp{path: path, st: st, ok: true}
		}
	}
	if !errors.Is(err, ErrNotFound) || errors.Is(err, ErrEscapesRoot) {
		d.log.Warn("origin: ignoring a title's metadata", "root", d.fs.path, "path", path, "err", err)
	}
	st, ok, _ := d.fs.stat(path)
	return titleMeta{}, pathStamp{path: path, st: st, ok: ok}
}

// readSmall reads a whole file of at most limit bytes through the page
// cache, and returns its stamp.
func (d *Dir) readSmall(path string, limit int64) ([]byte, stamp, error) {
	fd, err := d.fs.open(path, readFlags(false))
	if err != nil {
		return nil, stamp{}, openError(err)
	}
	defer unix.Close(fd)
	st, err := statRegular(fd, path, limit)
	if err != nil {
		return nil, stamp{}, err
	}
	data, err := readFD(fd, st.Size, false)
	if err != nil {
		return nil, stamp{}, fmt.Errorf("origin: read %s: %w", path, err)
	}
	return data, stampOf(st), nil
}
