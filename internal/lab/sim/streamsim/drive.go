package streamsim

import (
	"fmt"
	"time"

	"github.com/strata-media/strata/internal/storage/model"
)

// paperDies is the number of flash dies of the multi-streamed SSD model
// (model.Samsung840ProStreams: 8 channels x 4 dies).
const paperDies = 32

// drive returns the multi-streamed SSD model with dies of its 32 dies: the
// same NAND, blocks per die, over-provisioning (256 GiB of flash for 256 GB,
// 7.4%) and per-die host bandwidth, so a drive of 2 dies is a 1/16 slice of
// the 256 GB drive that ages the same way in the same virtual time.
func drive(dies int) (model.SSDParams, error) {
	if dies < 1 || dies > paperDies || paperDies%dies != 0 {
		return model.SSDParams{}, fmt.Errorf("streamsim: %d dies: want a divisor of %d", dies, paperDies)
	}
	p := model.Samsung840ProStreams()
	f := float64(dies) / paperDies
	p.Capacity = p.Capacity / paperDies * int64(dies)
	p.Channels = min(dies, p.Channels)
	p.WaysPerChannel = dies / p.Channels
	p.HostReadRate *= f
	p.HostWriteRate *= f
	if dies < paperDies {
		p.Name = fmt.Sprintf("%s-%ddie", p.Name, dies)
	}
	return p, nil
}

// driveFor returns a drive of the paper's geometry sized for capacity
// bytes: as many dies as a 1/32 slice of the 256 GB drive per 8 GB, at
// least one; capacity is rounded to whole pages.
func driveFor(capacity int64) (model.SSDParams, error) {
	p, err := drive(1)
	if err != nil {
		return p, err
	}
	dies := 1
	for dies < paperDies && int64(dies)*p.Capacity < capacity {
		dies *= 2
	}
	if p, err = drive(dies); err != nil {
		return p, err
	}
	return p.WithCapacity(max(capacity, p.Capacity/4) / p.PageSize * p.PageSize), nil
}

// prepare makes a fresh drive a used one: every logical page written once
// in order (SNIA-style preconditioning, a drive in service); then, with
// TRIM, the file system's mkfs discards it all again. Stats are zeroed.
func prepare(ssd *model.SSD, trim bool) time.Duration {
	ssd.Age(model.Aging{Fill: 1})
	var t time.Duration
	if trim {
		t = ssd.Submit(0, model.Request{Op: model.Trim, Offset: 0, Length: ssd.Size()})
	}
	ssd.ResetStats()
	return t
}
