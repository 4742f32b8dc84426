package manifest

import (
	"bytes"
	"fmt"
	"strconv"

	"github.com/Eyevinn/dash-mpd/mpd"
)

// DASH-IF trick mode (IOP §3.2.9): an adaptation set with this essential
// property is a trick-mode track of the adaptation set whose id is the
// value; players that do not know the scheme ignore the set.
const trickModeScheme = "http://dashif.org/guidelines/trickmode"

// Adaptation set ids.
const (
	videoSetID = 1
	audioSetID = 2
	trickSetID = 3
)

// MPD writes a static DASH MPD (ISO/IEC 23009-1 live profile: segment
// templates with $Number$ and a SegmentTimeline per representation, so
// renditions cut at different sync samples stay exact).
func MPD(p Presentation) ([]byte, error) {
	if err := p.check(); err != nil {
		return nil, err
	}
	m := mpd.NewMPD(mpd.STATIC_TYPE)
	m.Profiles = "urn:mpeg:dash:profile:isoff-live:2011"
	m.MediaPresentationDuration = mpd.Seconds2DurPtrFloat64(p.Duration)
	m.MinBufferTime = mpd.Seconds2DurPtrFloat64(2)
	m.MaxSegmentDuration = mpd.Seconds2DurPtrFloat64(maxSegment(p))
	period := mpd.NewPeriod()
	period.Id = "0"
	period.Start = mpd.Seconds2DurPtr(0)
	m.AppendPeriod(period)
	period.AppendAdaptationSet(videoSet(videoSetID, p.Video))
	if p.Audio != nil {
		period.AppendAdaptationSet(audioSet(*p.Audio))
	}
	if len(p.Trick) > 0 {
		period.AppendAdaptationSet(trickSet(p.Trick))
	}
	var buf bytes.Buffer
	if _, err := mpd.WriteXML(m, &buf, "  ", true); err != nil {
		return nil, fmt.Errorf("manifest: MPD: %w", err)
	}
	return buf.Bytes(), nil
}

func maxSegment(p Presentation) float64 {
	m := 0.0
	for _, r := range append(append([]Rendition{}, p.Video...), p.Trick...) {
		m = max(m, r.MaxSegmentDuration())
	}
	if p.Audio != nil {
		m = max(m, p.Audio.MaxSegmentDuration())
	}
	return m
}

func videoSet(id uint32, reps []Rendition) *mpd.AdaptationSetType {
	as := mpd.NewAdaptationSetWithParams("video", "video/mp4", aligned(reps), 1)
	as.Id = mpd.Ptr(id)
	for _, r := range reps {
		as.MaxWidth, as.MaxHeight = max(as.MaxWidth, uint32(r.Width)), max(as.MaxHeight, uint32(r.Height))
		rep := mpd.NewVideoRepresentation(r.Name, r.Codec, "", r.FrameRate, r.Bandwidth(), r.Width, r.Height)
		rep.SegmentTemplate = template(r)
		as.AppendRepresentation(rep)
	}
	return as
}

func audioSet(r Rendition) *mpd.AdaptationSetType {
	as := mpd.NewAdaptationSetWithParams("audio", "audio/mp4", true, 1)
	as.Id = mpd.Ptr(uint32(audioSetID))
	if r.Language != "" && r.Language != "und" {
		as.Lang = r.Language
	}
	as.Roles = []*mpd.DescriptorType{mpd.NewRole("main")}
	rep := mpd.NewAudioRepresentation(r.Name, r.Codec, "", r.Bandwidth(), r.SampleRate)
	rep.AudioChannelConfigurations = []*mpd.DescriptorType{mpd.NewDescriptor(
		"urn:mpeg:dash:23003:3:audio_channel_configuration:2011", strconv.Itoa(r.Channels), "")}
	rep.SegmentTemplate = template(r)
	as.AppendRepresentation(rep)
	return as
}

// trickSet is the DASH-IF trick-mode adaptation set: pictures that each
// decode on their own (codingDependency false), playable up to
// maxPlayoutRate times faster than real time.
func trickSet(reps []Rendition) *mpd.AdaptationSetType {
	as := videoSet(trickSetID, reps)
	as.EssentialProperties = []*mpd.DescriptorType{mpd.NewDescriptor(trickModeScheme, strconv.Itoa(videoSetID), "")}
	as.CodingDependency = mpd.Ptr(false)
	for i, r := range reps {
		as.Representations[i].MaxPlayoutRate = r.MaxPlayoutRate
		as.MaxPlayoutRate = max(as.MaxPlayoutRate, r.MaxPlayoutRate)
	}
	return as
}

// template is a representation's SegmentTemplate with its timeline,
// repeats run-length coded.
func template(r Rendition) *mpd.SegmentTemplateType {
	st := mpd.NewSegmentTemplate()
	st.Initialization = "$RepresentationID$/init.mp4"
	st.Media = "$RepresentationID$/$Number$.m4s"
	st.StartNumber = mpd.Ptr(uint32(1))
	st.SetTimescale(r.Timescale)
	if r.PresentationTimeOffset > 0 {
		st.PresentationTimeOffset = mpd.Ptr(r.PresentationTimeOffset)
	}
	st.SegmentTimeline = mpd.NewSegmentTimeline()
	var next uint64
	for i, s := range r.Segments {
		tl := st.SegmentTimeline
		if i > 0 && s.Start == next && tl.S[len(tl.S)-1].D == s.Dur {
			tl.S[len(tl.S)-1].R++
		} else {
			e := &mpd.S{D: s.Dur}
			if i == 0 || s.Start != next {
				e.T = mpd.Ptr(s.Start)
			}
			tl.S = append(tl.S, e)
		}
		next = s.Start + s.Dur
	}
	return st
}

// aligned reports whether all renditions have the same segment starts
// (in seconds), so a player may switch at segment boundaries.
func aligned(reps []Rendition) bool {
	for _, r := range reps[1:] {
		if len(r.Segments) != len(reps[0].Segments) {
			return false
		}
		for i, s := range r.Segments {
			a := float64(s.Start) / float64(r.Timescale)
			b := float64(reps[0].Segments[i].Start) / float64(reps[0].Timescale)
			if a-b > 1e-3 || b-a > 1e-3 {
				return false
			}
		}
	}
	return true
}
