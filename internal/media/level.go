package media

import (
	"fmt"
	"path/filepath"

	"github.com/strata-media/strata/internal/core/framegroup"
	"github.com/strata-media/strata/internal/media/cmaf"
	"github.com/strata-media/strata/internal/media/framestore"
	"github.com/strata-media/strata/internal/media/manifest"
)

// LevelName is the rendition name of play level l of rendition r: r
// itself for L1, "r-L2" to "r-L5" otherwise.
func LevelName(r string, l framegroup.Level) string {
	if l == framegroup.L1 {
		return r
	}
	return r + "-" + l.String()
}

// levelBuilder writes one play level of a video rendition from its
// frame-grouped store: media segments cut at the L1 cut times, an init
// segment and the HLS playlists.
type levelBuilder struct {
	v     *video
	level framegroup.Level
	dir   string // the rendition directory
	out   manifest.Rendition
	seq   uint32 // last fragment sequence number
	count int    // pictures written
}

// buildLevel reads the level's pictures from st, reading only the blocks
// of the streams it includes, and writes its rendition into titleDir.
func buildLevel(st *framestore.Store, v *video, l framegroup.Level, titleDir string) (manifest.Rendition, error) {
	name := LevelName(v.name, l)
	b := &levelBuilder{v: v, level: l, dir: filepath.Join(titleDir, name)}
	b.out = manifest.Rendition{Name: name, Codec: v.src.Codec, Timescale: v.src.Timescale,
		Width: v.src.Width, Height: v.src.Height, PresentationTimeOffset: v.shift}
	if err := b.writeInit(); err != nil {
		return b.out, err
	}
	if err := b.segments(st); err != nil {
		return b.out, fmt.Errorf("media: %s: %w", name, err)
	}
	b.finishTiming()
	return b.out, b.writePlaylists()
}

func (b *levelBuilder) writeInit() error {
	data, err := cmaf.Init(cmaf.Track{Kind: "video", Timescale: b.v.src.Timescale, Language: b.v.src.Language,
		Entry: b.v.src.Entry, Width: b.v.src.Width, Height: b.v.src.Height})
	if err != nil {
		return err
	}
	return writeFile(filepath.Join(b.dir, "init.mp4"), data)
}

// segments groups the level's pictures by cut interval; an interval with
// no picture of the level (L5 between two even I pictures) joins the
// previous one. A picture's duration reaches to the next kept picture.
func (b *levelBuilder) segments(st *framestore.Store) error {
	var group []cmaf.Sample
	cut := 0
	for f, err := range st.Frames(b.level) {
		if err != nil {
			return err
		}
		if n := len(group); n == 0 {
			cut = b.cutOf(f.DTS, cut)
		} else if group[n-1].Dur = uint32(f.DTS - group[n-1].DTS); b.cutOf(f.DTS, cut) != cut {
			if err := b.flush(group); err != nil {
				return err
			}
			group, cut = group[:0], b.cutOf(f.DTS, cut)
		}
		group = append(group, sample(f))
	}
	if len(group) == 0 {
		return fmt.Errorf("no pictures")
	}
	group[len(group)-1].Dur = uint32(b.v.src.EndTime - group[len(group)-1].DTS)
	return b.flush(group)
}

// cutOf returns the index of the cut interval holding decode time dts,
// searching forward from cut.
func (b *levelBuilder) cutOf(dts uint64, cut int) int {
	for cut+1 < len(b.v.cuts) && b.v.cuts[cut+1] <= dts {
		cut++
	}
	return cut
}

func sample(f framestore.Frame) cmaf.Sample {
	return cmaf.Sample{DTS: f.DTS, CTO: f.CTO, Data: f.Data,
		Flags: cmaf.Flags(f.Flags&framegroup.FlagSync != 0, f.Flags&framegroup.FlagRef != 0)}
}

// flush writes one media segment: one fragment, or for an intra-only
// level one fragment per picture, listed for the I-frame playlist.
func (b *levelBuilder) flush(group []cmaf.Sample) error {
	n := len(b.out.Segments) + 1
	var data []byte
	var err error
	if b.level.IntraOnly() {
		data, err = b.trickSegment(n, group)
	} else {
		b.seq++
		data, err = cmaf.Segment(b.seq, group)
	}
	if err != nil {
		return err
	}
	b.count += len(group)
	b.out.Segments = append(b.out.Segments, manifest.Segment{Start: earliest(group), Bytes: int64(len(data))})
	return writeFile(filepath.Join(b.dir, segmentName(n)), data)
}

func (b *levelBuilder) trickSegment(n int, group []cmaf.Sample) ([]byte, error) {
	for i := range group { // every picture of an intra-only level is a random access point
		group[i].Flags = cmaf.Flags(true, true)
	}
	data, ranges, err := cmaf.TrickSegment(b.seq+1, group)
	if err != nil {
		return nil, err
	}
	b.seq += uint32(len(group))
	for i, r := range ranges {
		pts := uint64(int64(group[i].DTS) + int64(group[i].CTO))
		b.out.IFrames = append(b.out.IFrames, manifest.IFrame{Segment: n, Offset: r.Offset, Length: r.Length, PresentationTime: pts})
	}
	return data, nil
}

// earliest is a group's earliest presentation time.
func earliest(group []cmaf.Sample) uint64 {
	ept := int64(-1)
	for _, s := range group {
		if p := int64(s.DTS) + int64(s.CTO); ept < 0 || p < ept {
			ept = p
		}
	}
	return uint64(max(ept, 0))
}

// finishTiming sets each segment's duration to the next one's start (the
// last ends with L1's presentation), the I-frame durations likewise, the
// frame rate and, for intra-only levels, the maximum playout rate.
func (b *levelBuilder) finishTiming() {
	segs := b.out.Segments
	for i := range segs {
		end := b.v.endPTS
		if i+1 < len(segs) {
			end = segs[i+1].Start
		}
		segs[i].Dur = end - min(segs[i].Start, end)
	}
	ifr := b.out.IFrames
	for i := range ifr {
		end := b.v.endPTS
		if i+1 < len(ifr) {
			end = ifr[i+1].PresentationTime
		}
		ifr[i].Duration = float64(end-min(ifr[i].PresentationTime, end)) / float64(b.out.Timescale)
	}
	// DASH @frameRate is the average; HLS FRAME-RATE the maximum, which
	// for L1 to L3 (pictures on the source's time grid) is the source's.
	b.out.FrameRate = frameRate(b.count, b.v.src.EndTime, b.out.Timescale)
	b.out.MaxFrameRate = b.out.FrameRate
	if b.level.IntraOnly() {
		b.out.MaxPlayoutRate = max(1, float64(len(b.v.frames)/max(b.count, 1)))
	} else {
		b.out.MaxFrameRate = frameRate(len(b.v.frames), b.v.src.EndTime, b.out.Timescale)
	}
}

func (b *levelBuilder) writePlaylists() error {
	data, err := manifest.MediaPlaylist(b.out)
	if err == nil {
		err = writeFile(filepath.Join(b.dir, manifest.MediaPlaylistName), data)
	}
	if err != nil || !b.level.IntraOnly() {
		return err
	}
	if data, err = manifest.IFramePlaylist(b.out); err != nil {
		return err
	}
	return writeFile(filepath.Join(b.dir, manifest.IFramePlaylistName), data)
}
