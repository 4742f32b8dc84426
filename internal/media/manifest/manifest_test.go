package manifest

import (
	"bytes"
	"strings"
	"testing"

	"github.com/Eyevinn/dash-mpd/mpd"
	"github.com/Eyevinn/hls-m3u8/m3u8"
)

func rendition(name string, segs ...uint64) Rendition {
	r := Rendition{Name: name, Codec: "avc1.64001F", Timescale: 1000, Width: 640, Height: 360, FrameRate: "24",
		PresentationTimeOffset: 80}
	start := uint64(80)
	for _, d := range segs {
		r.Segments = append(r.Segments, Segment{Start: start, Dur: d, Bytes: int64(d) * 100})
		start += d
	}
	return r
}

func presentation() Presentation {
	audio := Rendition{Name: "audio", Audio: true, Codec: "mp4a.40.2", Timescale: 48000, SampleRate: 48000, Channels: 2,
		Language: "eng", Segments: []Segment{{Start: 0, Dur: 96000, Bytes: 2000}, {Start: 96000, Dur: 96000, Bytes: 2000}}}
	trick := rendition("700k-L4", 2000, 2000)
	trick.MaxPlayoutRate, trick.FrameRate = 48, "1/2"
	trick.IFrames = []IFrame{{Segment: 1, Offset: 24, Length: 5000, Duration: 2}, {Segment: 2, Offset: 24, Length: 5200, Duration: 2}}
	return Presentation{Duration: 4, Video: []Rendition{rendition("700k", 2000, 2000), rendition("1500k", 2000, 2000)},
		Audio: &audio, Trick: []Rendition{trick}}
}

// TestMPD writes the main MPD, reads it back with dash-mpd and checks the
// trick-mode adaptation set and the timelines.
func TestMPD(t *testing.T) {
	data, err := MPD(presentation())
	if err != nil {
		t.Fatal(err)
	}
	m, err := mpd.MPDFromBytes(data)
	if err != nil {
		t.Fatalf("%v\n%s", err, data)
	}
	sets := m.Periods[0].AdaptationSets
	if len(sets) != 3 {
		t.Fatalf("%d adaptation sets", len(sets))
	}
	trick := sets[2]
	ep := trick.EssentialProperties
	if len(ep) != 1 || ep[0].SchemeIdUri != trickModeScheme || ep[0].Value != "1" || *sets[0].Id != 1 {
		t.Fatalf("trick mode property %+v", ep)
	}
	if trick.CodingDependency == nil || *trick.CodingDependency || trick.Representations[0].MaxPlayoutRate != 48 {
		t.Fatalf("trick set: codingDependency %v, maxPlayoutRate %v", trick.CodingDependency, trick.Representations[0].MaxPlayoutRate)
	}
	st := sets[0].Representations[0].SegmentTemplate
	if *st.PresentationTimeOffset != 80 || len(st.SegmentTimeline.S) != 1 || st.SegmentTimeline.S[0].R != 1 || *st.SegmentTimeline.S[0].T != 80 {
		t.Fatalf("timeline %+v", st.SegmentTimeline.S[0])
	}
	if !sets[0].SegmentAlignment {
		t.Fatal("aligned renditions not marked segmentAlignment")
	}
}

// TestHLS writes the playlists, reads them back with hls-m3u8 and checks
// variants, the audio group, the I-frame stream and byte ranges.
func TestHLS(t *testing.T) {
	p := presentation()
	master, err := Master(p)
	if err != nil {
		t.Fatal(err)
	}
	pl, kind, err := m3u8.DecodeFrom(bytes.NewReader(master), true)
	if err != nil || kind != m3u8.MASTER {
		t.Fatalf("%v\n%s", err, master)
	}
	var normal, iframe int
	for _, v := range pl.(*m3u8.MasterPlaylist).Variants {
		if v.Iframe {
			iframe++
			if v.URI != "700k-L4/iframes.m3u8" {
				t.Errorf("I-frame URI %s", v.URI)
			}
			continue
		}
		normal++
		if v.Audio != "audio" || !strings.Contains(v.Codecs, "mp4a.40.2") {
			t.Errorf("variant %s: audio %q codecs %q", v.URI, v.Audio, v.Codecs)
		}
	}
	if normal != 2 || iframe != 1 {
		t.Fatalf("%d variants, %d I-frame streams\n%s", normal, iframe, master)
	}
	ifr, err := IFramePlaylist(p.Trick[0])
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"#EXT-X-I-FRAMES-ONLY", `#EXT-X-MAP:URI="init.mp4"`, "#EXT-X-BYTERANGE:5000@24", "2.m4s"} {
		if !bytes.Contains(ifr, []byte(want)) {
			t.Errorf("I-frame playlist lacks %s:\n%s", want, ifr)
		}
	}
	media, err := MediaPlaylist(p.Video[0])
	if err != nil || !bytes.Contains(media, []byte("#EXT-X-TARGETDURATION:2")) || !bytes.Contains(media, []byte("#EXT-X-ENDLIST")) {
		t.Fatalf("media playlist: %v\n%s", err, media)
	}
}

func TestBandwidth(t *testing.T) {
	r := rendition("x", 1000, 2000) // 100 bytes per ms: 800 kb/s in both
	if r.Bandwidth() != 800000 || r.AverageBandwidth() != 800000 {
		t.Fatalf("peak %d, average %d", r.Bandwidth(), r.AverageBandwidth())
	}
	if r.Duration() != 3 {
		t.Fatalf("duration %v", r.Duration())
	}
}
