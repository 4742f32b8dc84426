package origin

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"time"

	"golang.org/x/sys/unix"

	"github.com/strata-media/strata/internal/ident"
)

// The catalog of a Dir is cached in memory. Each title remembers the
// stamps (inode, size, mtime, ctime) of what it was built from: its
// directory, its strata.json and its rendition directories. A directory's
// stamp changes when an entry is added, removed or renamed in it, so
// comparing stamps, one fstatat each, finds every change that matters
// without reading a directory: a new title changes the root, a new
// rendition or metadata file the title directory, a new segment its
// rendition directory. Listing is then cheap for thousands of titles, and
// even the check runs at most once per CatalogTTL.
//
// File systems keep timestamps at a coarse granularity (a kernel tick), so
// a directory changed twice within one tick keeps its stamp. As git does
// with its index, a stamp younger than defaultRacyWindow when it was read
// is not trusted: that title (or the root listing) is scanned again at the
// next check, until its stamps have aged.
const defaultRacyWindow = 2 * time.Second

// dirTitle is a cached title and the stamps it was built from.
type dirTitle struct {
	titleEntry
	stamps []pathStamp // the title directory, strata.json, each rendition directory
	racy   bool        // a stamp was too young to be trusted
}

// pathStamp is the stamp of a path under the root, or ok=false if the
// path did not exist.
type pathStamp struct {
	path string
	st   stamp
	ok   bool
}

// Catalog lists the titles: every directory under the root with a valid
// name. It checks for changes at most once per CatalogTTL and rescans only
// the titles that changed. While another call is scanning, it returns the
// catalog as last checked rather than wait.
func (d *Dir) Catalog(ctx context.Context) ([]Title, error) {
	if !d.cat.fresh(time.Now()) {
		if err := d.checkAll(ctx, false, d.cat.hasCatalog()); err != nil {
			return nil, err
		}
	}
	return d.cat.sortedTitles(), nil
}

// Refresh rescans the whole root now, whatever the stamps say.
func (d *Dir) Refresh(ctx context.Context) error {
	return d.checkAll(ctx, true, false)
}

// Title describes one title, rescanning it if it changed since it was last
// checked more than CatalogTTL ago. While another call is scanning, it
// returns the title as last checked, if it has one, rather than wait: a
// Multi asks for the title on every Get.
func (d *Dir) Title(ctx context.Context, id string) (Title, error) {
	if err := ident.ValidName(id); err != nil {
		return Title{}, fmt.Errorf("origin: %w", err)
	}
	if t, ok := d.cat.freshTitle(id, time.Now()); ok {
		return t, nil
	}
	if err := ctx.Err(); err != nil {
		return Title{}, fmt.Errorf("origin: title %s: %w", id, err)
	}
	if !d.mayExist(id) {
		return Title{}, notFound("title " + id)
	}
	return d.recheckTitle(id)
}

// mayExist reports whether id is cached or its directory exists: a lookup
// of an unknown title costs one fstatat and never waits for a scan, which matters
// when a Multi asks this Dir first for every title of another backend.
func (d *Dir) mayExist(id string) bool {
	if d.cat.cached(id) != nil {
		return true
	}
	_, ok, err := d.fs.stat(id)
	return ok || err != nil
}

func (d *Dir) recheckTitle(id string) (Title, error) {
	e := d.cat.cached(id)
	if !d.cat.lockScan(e != nil) {
		return e.title, nil // a scan is running: serve what we have
	}
	defer d.cat.scan.Unlock()
	now := time.Now()
	if t, ok := d.cat.freshTitle(id, now); ok {
		return t, nil // checked while we waited for the lock
	}
	e, err := d.checkTitle(id, false, now)
	if err != nil {
		return Title{}, err
	}
	return e.title, nil
}

// checkAll brings the whole catalog up to date; force rescans everything.
// With skip, it returns at once if another scan is running.
func (d *Dir) checkAll(ctx context.Context, force, skip bool) error {
	now, ok := d.cat.beginCheck(force, skip)
	if !ok {
		return nil
	}
	defer d.cat.scan.Unlock()
	names, err := d.titleNames(force, now)
	if err != nil {
		return err
	}
	for _, id := range names {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("origin: catalog of %s: %w", d.fs.path, err)
		}
		_, _ = d.checkTitle(id, force, now) // failures are logged and drop the title
	}
	d.cat.keepOnly(names, now)
	return nil
}

// titleNames returns the names of the title directories, listing the root
// again only when its stamp changed (or could not be trusted).
func (d *Dir) titleNames(force bool, now time.Time) ([]string, error) {
	st, _, err := d.fs.stat(".")
	if err != nil {
		return nil, err
	}
	if names, ok := d.cachedNames(st); ok && !force {
		return names, nil
	}
	names, err := d.listRoot()
	if err != nil {
		return nil, err
	}
	d.cat.root, d.cat.rootRacy = st, d.isRacy(st, now)
	return names, nil
}

// cachedNames returns the cached titles' names if the root's stamp is st
// and was trusted.
func (d *Dir) cachedNames(st stamp) ([]string, bool) {
	if d.cat.rootRacy || st != d.cat.root {
		return nil, false
	}
	return d.cat.ids()
}

// listRoot returns the root's entries that are title directories.
func (d *Dir) listRoot() ([]string, error) {
	entries, _, err := d.readDir(".")
	if err != nil {
		return nil, err
	}
	var names []string
	for _, e := range entries {
		if ident.ValidName(e.Name()) == nil && d.entryMode(e.Name(), e).IsDir() {
			names = append(names, e.Name())
		}
	}
	return names, nil
}

// checkTitle rescans title id if force, if it is not cached or if its
// stamps changed; otherwise it marks it checked. A title that cannot be
// scanned leaves the catalog; failures other than its disappearance are
// logged.
func (d *Dir) checkTitle(id string, force bool, now time.Time) (*dirTitle, error) {
	if e := d.cat.cached(id); e != nil && !force && d.unchanged(e) {
		d.cat.markChecked(e, now)
		return e, nil
	}
	e, err := d.scanTitle(id, now)
	if err != nil {
		d.cat.remove(id)
		if !errors.Is(err, ErrNotFound) || errors.Is(err, ErrEscapesRoot) {
			d.log.Warn("origin: title dropped from the catalog", "root", d.fs.path, "title", id, "err", err)
		}
		return nil, err
	}
	d.cat.store(id, e, now)
	return e, nil
}

// unchanged reports whether every stamp of e still holds.
func (d *Dir) unchanged(e *dirTitle) bool {
	if e.racy {
		return false
	}
	for _, ps := range e.stamps {
		st, ok, err := d.fs.stat(ps.path)
		if err != nil || ok != ps.ok || st != ps.st {
			return false
		}
	}
	return true
}

// isRacy reports whether st, read at now, is too young to be trusted.
func (d *Dir) isRacy(st stamp, now time.Time) bool {
	return now.UnixNano()-max(st.mtime, st.ctime) < int64(d.opts.racyWindow)
}

// readDir reads the directory at path under the root, and its stamp.
func (d *Dir) readDir(path string) ([]os.DirEntry, stamp, error) {
	fd, err := d.fs.open(path, unix.O_RDONLY|unix.O_DIRECTORY)
	if err != nil {
		return nil, stamp{}, openError(err)
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		_ = unix.Close(fd)
		return nil, stamp{}, fmt.Errorf("origin: fstat %s: %w", path, err)
	}
	f := osFile(fd, path)
	defer f.Close()
	entries, err := f.ReadDir(-1)
	if err != nil {
		return nil, stamp{}, fmt.Errorf("origin: read directory %s: %w", path, err)
	}
	return entries, stampOf(&st), nil
}

// entryMode returns the type of the entry at path, resolving a symlink
// beneath the root (a symlink that escapes it, or dangles, is irregular).
func (d *Dir) entryMode(path string, e os.DirEntry) fs.FileMode {
	if e.Type()&fs.ModeSymlink == 0 {
		return e.Type()
	}
	fd, err := d.fs.open(path, unix.O_PATH)
	if err != nil {
		if errors.Is(err, ErrEscapesRoot) {
			d.log.Warn("origin: ignoring a symlink that escapes the root", "root", d.fs.path, "path", path)
		}
		return fs.ModeIrregular
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if unix.Fstat(fd, &st) != nil {
		return fs.ModeIrregular
	}
	return modeOf(st.Mode)
}

func modeOf(m uint32) fs.FileMode {
	switch m & unix.S_IFMT {
	case unix.S_IFDIR:
		return fs.ModeDir
	case unix.S_IFREG:
		return 0
	}
	return fs.ModeIrregular
}
