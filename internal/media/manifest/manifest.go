// Package manifest writes a packaged title's DASH MPDs (Eyevinn/dash-mpd)
// and HLS multivariant and media playlists (Eyevinn/hls-m3u8) from a
// description of its renditions; it reads no media itself.
package manifest

import (
	"fmt"
	"math"
)

// Rendition is one CMAF track of a title, stored as the directory Name
// with init.mp4 and media segments 1.m4s, 2.m4s, ...
type Rendition struct {
	Name      string // directory and DASH Representation id
	Audio     bool
	Codec     string // RFC 6381
	Timescale uint32
	Segments  []Segment
	// PresentationTimeOffset is the media time (ticks) presented at the
	// start of the title: the source's edit list shift.
	PresentationTimeOffset uint64
	// Video.
	Width, Height int
	FrameRate     string // average, rational: "24", "37/2"
	MaxFrameRate  string // highest; "" means FrameRate
	// MaxPlayoutRate is set on trick-play tracks (L4, L5): the speed-up
	// at which they decode at the main track's frame rate.
	MaxPlayoutRate float64
	// IFrames lists, for a trick-play track, each fragment (one picture)
	// for its HLS I-frame playlist.
	IFrames []IFrame
	// Audio.
	SampleRate, Channels int
	Language             string
}

// Segment is one media segment: earliest presentation time and duration
// in ticks of the track timescale, and size.
type Segment struct {
	Start, Dur uint64
	Bytes      int64
}

// IFrame is one fragment of a trick-play segment.
type IFrame struct {
	Segment          int     // media segment number, from 1
	Offset, Length   int64   // byte range within the segment
	Duration         float64 // seconds until the next picture
	PresentationTime uint64  // ticks
}

// Duration returns the rendition's presented duration in seconds.
func (r Rendition) Duration() float64 {
	if len(r.Segments) == 0 {
		return 0
	}
	last := r.Segments[len(r.Segments)-1]
	return float64(last.Start+last.Dur-min(r.PresentationTimeOffset, last.Start+last.Dur)) / float64(r.Timescale)
}

// Bandwidth returns the peak bitrate over its segments, bits per second:
// what DASH @bandwidth and HLS BANDWIDTH ask for.
func (r Rendition) Bandwidth() int {
	peak := 0.0
	for _, s := range r.Segments {
		if s.Dur > 0 {
			peak = max(peak, float64(s.Bytes*8)*float64(r.Timescale)/float64(s.Dur))
		}
	}
	return int(math.Ceil(peak))
}

// AverageBandwidth returns the average bitrate, bits per second.
func (r Rendition) AverageBandwidth() int {
	var bytes int64
	for _, s := range r.Segments {
		bytes += s.Bytes
	}
	if d := r.Duration(); d > 0 {
		return int(math.Ceil(float64(bytes*8) / d))
	}
	return 0
}

// MaxSegmentDuration returns the longest segment, seconds.
func (r Rendition) MaxSegmentDuration() float64 {
	var m uint64
	for _, s := range r.Segments {
		m = max(m, s.Dur)
	}
	return float64(m) / float64(r.Timescale)
}

// Presentation is what one manifest presents.
type Presentation struct {
	Duration float64     // seconds
	Video    []Rendition // one adaptation set / the variants
	Audio    *Rendition  // optional
	// Trick are trick-play tracks of Video (DASH trick-mode adaptation
	// set, HLS EXT-X-I-FRAME-STREAM-INF).
	Trick []Rendition
}

func (p Presentation) check() error {
	if len(p.Video) == 0 {
		return fmt.Errorf("manifest: no video rendition")
	}
	for _, r := range append(append([]Rendition{}, p.Video...), p.Trick...) {
		if len(r.Segments) == 0 || r.Timescale == 0 {
			return fmt.Errorf("manifest: rendition %s has no segments", r.Name)
		}
	}
	return nil
}
