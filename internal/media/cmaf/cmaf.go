// Package cmaf encodes single-track CMAF tracks with mp4ff: an init
// segment (ftyp cmfc + moov with one track and mvex), media segments of
// one fragment each, and trick-play segments of one fragment per sample,
// whose byte ranges an HLS I-frame playlist can address.
package cmaf

import (
	"bytes"
	"fmt"
	"io"

	"github.com/Eyevinn/mp4ff/mp4"
)

// TrackID is the track id of every CMAF track Strata writes: one track
// per file.
const TrackID = 1

// Sample is one sample of a fragment.
type Sample struct {
	DTS   uint64 // decode time, track timescale
	Dur   uint32 // decode duration
	CTO   int32  // composition offset; negative allowed (trun version 1)
	Flags uint32 // ISO BMFF sample flags; see Flags
	Data  []byte
}

// Flags returns ISO BMFF sample flags: a sync sample depends on nothing;
// a picture no other references is marked not depended on, so a player
// may drop it.
func Flags(sync, referenced bool) uint32 {
	sf := mp4.SampleFlags{SampleIsNonSync: !sync, SampleDependsOn: 1, SampleIsDependedOn: 1}
	if sync {
		sf.SampleDependsOn = 2
	}
	if !referenced {
		sf.SampleIsDependedOn = 2
	}
	return sf.Encode()
}

// Track describes the track of an init segment.
type Track struct {
	Kind      string // "video" or "audio"
	Timescale uint32
	Language  string  // ISO 639-2 code; "" is "und"
	Entry     mp4.Box // the sample entry (avc1, avc3, mp4a), copied as is
	Width     int     // video only
	Height    int
}

// Init encodes the init segment of t.
func Init(t Track) ([]byte, error) {
	if t.Kind != "video" && t.Kind != "audio" || t.Entry == nil || t.Timescale == 0 {
		return nil, fmt.Errorf("cmaf: init segment of a %q track without entry or timescale", t.Kind)
	}
	lang := t.Language
	if len(lang) != 3 {
		lang = "und"
	}
	init := mp4.CreateEmptyInit()
	trak := init.AddEmptyTrack(t.Timescale, t.Kind, lang)
	if t.Kind == "video" {
		trak.Tkhd.Width = mp4.Fixed32(t.Width << 16)
		trak.Tkhd.Height = mp4.Fixed32(t.Height << 16)
	}
	trak.Mdia.Minf.Stbl.Stsd.AddChild(t.Entry)
	return encode(init)
}

// Segment encodes a media segment of one fragment (styp, moof, mdat)
// holding samples; seq is the fragment's sequence number.
func Segment(seq uint32, samples []Sample) ([]byte, error) {
	if len(samples) == 0 {
		return nil, fmt.Errorf("cmaf: empty segment %d", seq)
	}
	seg := mp4.NewMediaSegment()
	frag, err := fragment(seq, samples)
	if err != nil {
		return nil, err
	}
	seg.AddFragment(frag)
	return encode(seg)
}

// Range is a byte range of a segment file.
type Range struct{ Offset, Length int64 }

// TrickSegment encodes a media segment with one fragment (moof, mdat, a
// single trun) per sample, sequence numbers from firstSeq, and returns
// each fragment's byte range: an HLS I-frame playlist addresses them, and
// players expect each range to be a whole fragment.
func TrickSegment(firstSeq uint32, samples []Sample) ([]byte, []Range, error) {
	if len(samples) == 0 {
		return nil, nil, fmt.Errorf("cmaf: empty trick segment %d", firstSeq)
	}
	seg := mp4.NewMediaSegment()
	for i, s := range samples {
		frag, err := fragment(firstSeq+uint32(i), []Sample{s})
		if err != nil {
			return nil, nil, err
		}
		seg.AddFragment(frag)
	}
	data, err := encode(seg)
	if err != nil {
		return nil, nil, err
	}
	ranges := make([]Range, len(seg.Fragments))
	off := int64(seg.Styp.Size())
	for i, f := range seg.Fragments {
		ranges[i] = Range{off, int64(f.Size())}
		off += ranges[i].Length
	}
	return data, ranges, nil
}

func fragment(seq uint32, samples []Sample) (*mp4.Fragment, error) {
	frag, err := mp4.CreateFragment(seq, TrackID)
	if err != nil {
		return nil, fmt.Errorf("cmaf: %w", err)
	}
	for _, s := range samples {
		fs := mp4.FullSample{Sample: mp4.NewSample(s.Flags, s.Dur, uint32(len(s.Data)), s.CTO), DecodeTime: s.DTS, Data: s.Data}
		if err := frag.AddFullSampleToTrack(fs, TrackID); err != nil {
			return nil, fmt.Errorf("cmaf: %w", err)
		}
	}
	return frag, nil
}

// box is what encode writes: an init or a media segment.
type box interface {
	Size() uint64
	Encode(w io.Writer) error
}

func encode(b box) ([]byte, error) {
	var buf bytes.Buffer
	buf.Grow(int(b.Size()))
	if err := b.Encode(&buf); err != nil {
		return nil, fmt.Errorf("cmaf: %w", err)
	}
	return buf.Bytes(), nil
}
