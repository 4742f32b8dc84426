package media

import (
	"fmt"
	"math"
	"slices"

	"github.com/strata-media/strata/internal/core/framegroup"
	"github.com/strata-media/strata/internal/media/framestore"
	"github.com/strata-media/strata/internal/media/h264"
	"github.com/strata-media/strata/internal/media/source"
)

// video is one video rendition being packaged.
type video struct {
	name   string
	src    *source.Track
	frames []framestore.Frame // decode order
	cuts   []uint64           // decode times at which media segments start
	shift  uint64             // media time presented first (the edit list's), ticks
	endPTS uint64             // end of presentation, media time
}

// analyze classifies every picture of t from its slice headers, assigns
// it to a stream, and finds the media segment cuts.
func analyze(name string, t *source.Track, segDur float64) (*video, error) {
	v := &video{name: name, src: t, frames: make([]framestore.Frame, len(t.Samples)), shift: presentationShift(t)}
	var g framegroup.Grouper
	for i, s := range t.Samples {
		if i > 0 && s.DTS <= t.Samples[i-1].DTS || s.DTS > 1<<48-1 {
			return nil, fmt.Errorf("%w: %s: sample %d: decode times do not increase", ErrInvalidInput, name, i+1)
		}
		data, err := t.Read(i)
		if err != nil {
			return nil, err
		}
		pic, err := h264.Classify(data, t.NALLengthSize)
		if err != nil {
			return nil, fmt.Errorf("%w: %s: picture %d: %w", ErrInvalidInput, name, i+1, err)
		}
		k := kindOf(pic.Type)
		v.frames[i] = framestore.Frame{Stream: g.Assign(k, pic.Ref), FrameRecord: framegroup.FrameRecord{
			DTS: s.DTS, CTO: s.CTO, Size: s.Size, Flags: framegroup.MakeFlags(k, pic.Ref, s.Sync)}}
		v.endPTS = max(v.endPTS, uint64(max(int64(s.DTS)+int64(s.CTO), 0))+uint64(s.Dur))
	}
	if !t.Samples[0].Sync {
		return nil, fmt.Errorf("%w: %s: the first picture is not a sync sample", ErrInvalidInput, name)
	}
	v.cuts = cutPoints(v.frames, uint64(math.Round(segDur*float64(t.Timescale))), t.EndTime)
	return v, nil
}

// presentationShift is the media time presented first: the edit list's
// shift (ffmpeg's B-frame delay), reduced if needed to the earliest
// presentation time.
func presentationShift(t *source.Track) uint64 {
	shift := t.Shift
	for _, s := range t.Samples {
		shift = min(shift, int64(s.DTS)+int64(s.CTO))
	}
	return uint64(max(shift, 0))
}

// cutPoints returns the decode times at which media segments start: the
// first picture, then for each multiple of dur the sync sample nearest to
// it (a later one on ties), each cut after the previous.
func cutPoints(frames []framestore.Frame, dur, end uint64) []uint64 {
	var syncs []uint64
	for _, f := range frames {
		if f.Flags&framegroup.FlagSync != 0 {
			syncs = append(syncs, f.DTS)
		}
	}
	cuts := []uint64{frames[0].DTS}
	for target := frames[0].DTS + dur; target < end && dur > 0; target += dur {
		if c := nearest(syncs, target); c > cuts[len(cuts)-1] {
			cuts = append(cuts, c)
		}
	}
	return cuts
}

// nearest returns the value of sorted closest to x.
func nearest(sorted []uint64, x uint64) uint64 {
	i, _ := slices.BinarySearch(sorted, x)
	switch {
	case i == len(sorted):
		return sorted[i-1]
	case i == 0:
		return sorted[0]
	case x-sorted[i-1] < sorted[i]-x:
		return sorted[i-1]
	}
	return sorted[i]
}

// storeInput is the frame-grouped store's view of v.
func (v *video) storeInput() framestore.Input {
	return framestore.Input{Timescale: v.src.Timescale, EndTime: v.src.EndTime, Frames: v.frames, Read: v.src.Read}
}

// bitrate is the video's average bitrate, bits per second.
func bitrate(t *source.Track) float64 {
	if d := t.Duration(); d > 0 {
		return float64(t.Bytes()*8) / d
	}
	return 0
}

// frameRate returns the track's frame rate as a reduced fraction "n" or
// "n/d": count pictures over span ticks.
func frameRate(count int, span uint64, timescale uint32) string {
	if span == 0 {
		return ""
	}
	n, d := uint64(count)*uint64(timescale), span
	g := gcd(n, d)
	n, d = n/g, d/g
	if d == 1 {
		return fmt.Sprint(n)
	}
	return fmt.Sprintf("%d/%d", n, d)
}

func gcd(a, b uint64) uint64 {
	for b != 0 {
		a, b = b, a%b
	}
	return max(a, 1)
}

func kindOf(t h264.Type) framegroup.Kind {
	switch t {
	case h264.I:
		return framegroup.KindI
	case h264.P:
		return framegroup.KindP
	}
	return framegroup.KindB
}
