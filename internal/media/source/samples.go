package source

import (
	"fmt"

	"github.com/Eyevinn/mp4ff/mp4"
)

// maxSampleSize bounds one sample, bytes: far above any H.264 picture or
// AAC frame, it stops a hostile sample table from asking for gigabytes.
const maxSampleSize = 64 << 20

// readSamples builds the sample list from the sample tables and checks
// that every sample lies inside the file.
func (t *Track) readSamples(stbl *mp4.StblBox, fileSize int64) error {
	if stbl.Stsz == nil || stbl.Stts == nil || stbl.Stsc == nil || (stbl.Stco == nil && stbl.Co64 == nil) {
		return fmt.Errorf("%w: incomplete sample table", ErrInvalid)
	}
	n := int(stbl.Stsz.SampleNumber)
	if n == 0 {
		return fmt.Errorf("%w: track has no samples", ErrInvalid)
	}
	if n > 1<<26 || int64(n) > fileSize {
		return fmt.Errorf("%w: %d samples in a %d-byte file", ErrInvalid, n, fileSize)
	}
	t.Samples = make([]Sample, n)
	if err := t.sizesAndOffsets(stbl, fileSize); err != nil {
		return err
	}
	if err := t.times(stbl.Stts); err != nil {
		return err
	}
	t.offsets(stbl.Ctts)
	t.syncs(stbl.Stss)
	return nil
}

func (t *Track) sizesAndOffsets(stbl *mp4.StblBox, fileSize int64) error {
	offsets := chunkOffsets(stbl)
	es := stbl.Stsc.Entries
	if len(es) == 0 {
		return fmt.Errorf("%w: empty stsc", ErrInvalid)
	}
	i := 0
	for c, entry := 0, 0; c < len(offsets) && i < len(t.Samples); c++ {
		for entry+1 < len(es) && int(es[entry+1].FirstChunk) <= c+1 {
			entry++
		}
		off := int64(offsets[c])
		for k := uint32(0); k < es[entry].SamplesPerChunk && i < len(t.Samples); k++ {
			size := stbl.Stsz.GetSampleSize(i + 1)
			if size == 0 || size > maxSampleSize || off < 0 || off+int64(size) > fileSize {
				return fmt.Errorf("%w: sample %d (%d bytes at %d) lies outside the %d-byte file (truncated?)",
					ErrInvalid, i+1, size, off, fileSize)
			}
			t.Samples[i].Offset, t.Samples[i].Size = off, size
			off += int64(size)
			i++
		}
	}
	if i != len(t.Samples) {
		return fmt.Errorf("%w: chunk tables place %d of %d samples", ErrInvalid, i, len(t.Samples))
	}
	return nil
}

func chunkOffsets(stbl *mp4.StblBox) []uint64 {
	if stbl.Co64 != nil {
		return stbl.Co64.ChunkOffset
	}
	out := make([]uint64, len(stbl.Stco.ChunkOffset))
	for i, o := range stbl.Stco.ChunkOffset {
		out[i] = uint64(o)
	}
	return out
}

// times fills decode times and durations from stts.
func (t *Track) times(stts *mp4.SttsBox) error {
	i := 0
	var dts uint64
	for e := range stts.SampleCount {
		for k := uint32(0); k < stts.SampleCount[e] && i < len(t.Samples); k++ {
			t.Samples[i].DTS, t.Samples[i].Dur = dts, stts.SampleTimeDelta[e]
			dts += uint64(stts.SampleTimeDelta[e])
			i++
		}
	}
	if i != len(t.Samples) {
		return fmt.Errorf("%w: stts times %d of %d samples", ErrInvalid, i, len(t.Samples))
	}
	t.EndTime = dts
	return nil
}

// offsets fills composition offsets from ctts (none: all 0).
func (t *Track) offsets(ctts *mp4.CttsBox) {
	if ctts == nil {
		return
	}
	e := 1
	for i := range t.Samples {
		for e < len(ctts.EndSampleNr) && uint32(i+1) > ctts.EndSampleNr[e] {
			e++
		}
		if e < len(ctts.EndSampleNr) {
			t.Samples[i].CTO = ctts.SampleOffset[e-1]
		}
	}
}

// syncs marks sync samples; without stss every sample is one.
func (t *Track) syncs(stss *mp4.StssBox) {
	if stss == nil {
		for i := range t.Samples {
			t.Samples[i].Sync = true
		}
		return
	}
	for _, n := range stss.SampleNumber {
		if n >= 1 && int(n) <= len(t.Samples) {
			t.Samples[n-1].Sync = true
		}
	}
}
