package store

import (
	"errors"
	"fmt"

	"github.com/strata-media/strata/internal/core/tier"
	"github.com/strata-media/strata/internal/storage/device"
)

// ErrNotACache reports a device that holds no readable Strata flash cache.
var ErrNotACache = errors.New("store: no Strata flash cache found")

// FsckReport is what Fsck finds on a flash cache device.
type FsckReport struct {
	DeviceSize int64    `json:"device_size"`
	BlockSize  int64    `json:"block_size"`
	Blocks     uint32   `json:"blocks"`
	FormatID   string   `json:"format_id"`
	MetaSlots  []string `json:"meta_slots"`
	// Problems lists the blocks whose header or records failed
	// verification, one line each.
	Problems []string `json:"problems"`
	tier.RecoveryReport
}

// Clean reports whether no record failed verification. Orphaned records
// (a segment's other chunks overwritten or never written) are expected
// after evictions and crashes and do not make a cache unclean.
func (r *FsckReport) Clean() bool { return r.CorruptRecords == 0 }

// Fsck checks the flash cache on dev without writing to it: it reads the
// metadata blocks, scans and verifies every data block as recovery does,
// and reports blocks, live segments, and corrupt or orphaned records.
func Fsck(dev device.Device, progress func(done, total int)) (*FsckReport, error) {
	f := &Flash{dev: dev, align: dev.Alignment()}
	rep := &FsckReport{DeviceSize: dev.Size()}
	for i := 0; i < tier.MetaBlocks; i++ {
		s, err := f.readMetaSlot(i)
		rep.MetaSlots = append(rep.MetaSlots, slotStatus(i, s, err))
	}
	super, _, err := f.readMeta()
	if err != nil {
		return rep, fmt.Errorf("%w: %v", ErrNotACache, err)
	}
	rep.BlockSize, rep.Blocks, rep.FormatID = super.BlockSize, super.Blocks, fmt.Sprintf("%016x", super.FormatID)
	*f = *newFlash(dev, super.BlockSize)
	r, err := tier.Recover(tier.Options{
		BlockSize:  super.BlockSize,
		DeviceSize: int64(super.Blocks) * super.BlockSize,
		Alignment:  dev.Alignment(),
	}, super)
	if err != nil {
		return rep, err
	}
	f.formatID = super.FormatID
	for b := uint32(tier.MetaBlocks); b < super.Blocks; b++ {
		bc, err := f.ReadBlock(b)
		if err != nil {
			return rep, err
		}
		if bc.Err != nil {
			rep.Problems = append(rep.Problems, fmt.Sprintf("block %d: %d bad record(s): %v", b, bc.Corrupt, bc.Err))
		}
		r.Add(bc)
		if progress != nil {
			progress(int(b)+1-tier.MetaBlocks, int(super.Blocks)-tier.MetaBlocks)
		}
	}
	_, rep.RecoveryReport = r.Finish()
	return rep, nil
}

func slotStatus(i int, s *tier.Super, err error) string {
	switch {
	case errors.Is(err, tier.ErrNoRecord):
		return fmt.Sprintf("block %d: no metadata", i)
	case err != nil:
		return fmt.Sprintf("block %d: unreadable metadata: %v", i, err)
	}
	return fmt.Sprintf("block %d: metadata seq %d, %d blocks of %d bytes, %d invalidations",
		i, s.Seq, s.Blocks, s.BlockSize, len(s.Invalidate))
}
