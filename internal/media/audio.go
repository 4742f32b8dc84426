package media

import (
	"math"
	"path/filepath"

	"github.com/strata-media/strata/internal/media/cmaf"
	"github.com/strata-media/strata/internal/media/manifest"
	"github.com/strata-media/strata/internal/media/source"
)

// audioName is the audio rendition's directory.
const audioName = "audio"

// packageAudio writes the audio track as rendition "audio" on the video's
// media timeline, whose time base seconds is presented first: decode times
// move by the offset that puts the audio edit list's first presented
// sample (after the AAC priming) at base. Segments are cut at the AAC
// frame nearest each video segment start (media seconds), so audio and
// video segments cover the same time.
func packageAudio(t *source.Track, starts []float64, base float64, titleDir string) (manifest.Rendition, error) {
	dir := filepath.Join(titleDir, audioName)
	pto := max(uint64(math.Round(base*float64(t.Timescale))), uint64(max(t.Shift, 0)))
	a := audio{Track: t, offset: pto - uint64(max(t.Shift, 0))}
	out := manifest.Rendition{Name: audioName, Audio: true, Codec: t.Codec, Timescale: t.Timescale,
		SampleRate: t.SampleRate, Channels: t.Channels, Language: t.Language, PresentationTimeOffset: pto}
	init, err := cmaf.Init(cmaf.Track{Kind: "audio", Timescale: t.Timescale, Language: t.Language, Entry: t.Entry})
	if err != nil {
		return out, err
	}
	if err := writeFile(filepath.Join(dir, "init.mp4"), init); err != nil {
		return out, err
	}
	bounds := a.cuts(starts)
	for i := range bounds {
		end := len(t.Samples)
		if i+1 < len(bounds) {
			end = bounds[i+1]
		}
		data, err := a.segment(i+1, bounds[i], end)
		if err != nil {
			return out, err
		}
		start, endTime := a.time(bounds[i]), a.time(end)
		out.Segments = append(out.Segments, manifest.Segment{Start: start, Dur: endTime - start, Bytes: int64(len(data))})
		if err := writeFile(filepath.Join(dir, segmentName(i+1)), data); err != nil {
			return out, err
		}
	}
	data, err := manifest.MediaPlaylist(out)
	if err != nil {
		return out, err
	}
	return out, writeFile(filepath.Join(dir, manifest.MediaPlaylistName), data)
}

// audio is the audio track with its decode times moved by offset.
type audio struct {
	*source.Track
	offset uint64
}

// time is the media time of sample i (or of the track's end).
func (a audio) time(i int) uint64 {
	if i == len(a.Samples) {
		return a.EndTime + a.offset
	}
	return a.Samples[i].DTS + a.offset
}

// cuts returns the index of each segment's first sample: the sample whose
// media time is nearest each start, each after the previous.
func (a audio) cuts(starts []float64) []int {
	cuts := []int{0}
	j := 0
	for _, s := range starts[1:] {
		target := int64(math.Round(s * float64(a.Timescale)))
		for j+1 < len(a.Samples) && int64(a.time(j+1)) <= target {
			j++
		}
		k := j
		if j+1 < len(a.Samples) && int64(a.time(j+1))-target < target-int64(a.time(j)) {
			k = j + 1
		}
		if k > cuts[len(cuts)-1] {
			cuts = append(cuts, k)
		}
	}
	return cuts
}

// segment encodes samples [from, to) as media segment n.
func (a audio) segment(n, from, to int) ([]byte, error) {
	samples := make([]cmaf.Sample, 0, to-from)
	for i := from; i < to; i++ {
		data, err := a.Read(i)
		if err != nil {
			return nil, err
		}
		s := a.Samples[i]
		samples = append(samples, cmaf.Sample{DTS: a.time(i), Dur: s.Dur, CTO: s.CTO, Flags: cmaf.Flags(true, true), Data: data})
	}
	return cmaf.Segment(uint32(n), samples)
}
