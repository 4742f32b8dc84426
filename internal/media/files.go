package media

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/strata-media/strata/internal/ident"
)

// segmentName is the file name of media segment n (from 1).
func segmentName(n int) string { return ident.SegmentName(uint32(n)) }

// writeFile creates path (and its directory) with data and syncs it.
// Files are written inside the title's temporary directory, which is
// renamed into place whole, so no reader ever sees a partial file.
func writeFile(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("media: %w", err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return fmt.Errorf("media: %w", err)
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if err = errors.Join(err, f.Close()); err != nil {
		return fmt.Errorf("media: writing %s: %w", path, err)
	}
	return nil
}

// syncDirs fsyncs dir and every directory below it, so that the entries
// of a finished title are durable before it is renamed into place.
func syncDirs(dir string) error {
	return filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		return syncDir(p)
	})
}

func syncDir(p string) error {
	f, err := os.Open(p)
	if err != nil {
		return fmt.Errorf("media: %w", err)
	}
	err = f.Sync()
	return errors.Join(err, f.Close())
}
