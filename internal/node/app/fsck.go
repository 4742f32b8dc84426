package app

import (
	"errors"
	"log/slog"

	"github.com/strata-media/strata/internal/storage/device"
	"github.com/strata-media/strata/internal/storage/store"
)

// Fsck checks the flash cache file or block device at path, opened read
// only, and reports what it holds; progress, if not nil, receives the
// blocks scanned out of the total.
func Fsck(path string, log *slog.Logger, progress func(done, total int)) (*store.FsckReport, error) {
	dev, err := device.OpenFile(path, device.FileOptions{ReadOnly: true, Logger: log})
	if err != nil {
		return nil, err
	}
	rep, err := store.Fsck(dev, progress)
	return rep, errors.Join(err, dev.Close())
}
