package manifest

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/Eyevinn/hls-m3u8/m3u8"
)

// HLS playlist names inside a rendition directory.
const (
	MediaPlaylistName  = "playlist.m3u8"
	IFramePlaylistName = "iframes.m3u8"
)

// audioGroup is the GROUP-ID of the audio rendition.
const audioGroup = "audio"

// Master writes an HLS multivariant playlist: one variant per video
// rendition (with the audio group when there is audio), and an
// EXT-X-I-FRAME-STREAM-INF for each trick-play rendition.
func Master(p Presentation) ([]byte, error) {
	if err := p.check(); err != nil {
		return nil, err
	}
	m := m3u8.NewMasterPlaylist()
	m.SetVersion(7)
	m.SetIndependentSegments(true)
	var alts []*m3u8.Alternative
	if a := p.Audio; a != nil {
		alts = []*m3u8.Alternative{{Type: "AUDIO", GroupId: audioGroup, Name: audioName(*a), Language: lang(a.Language),
			Default: true, Autoselect: true, URI: a.Name + "/" + MediaPlaylistName,
			Channels: &m3u8.Channels{Amount: a.Channels}}}
	}
	for _, r := range p.Video {
		vp := variant(r)
		if p.Audio != nil {
			vp.Codecs += "," + p.Audio.Codec
			vp.Audio, vp.Alternatives = audioGroup, alts
			vp.Bandwidth += uint32(p.Audio.Bandwidth())
			vp.AverageBandwidth += uint32(p.Audio.AverageBandwidth())
		}
		m.Append(r.Name+"/"+MediaPlaylistName, nil, vp)
	}
	for _, r := range p.Trick {
		vp := variant(r)
		vp.Iframe, vp.FrameRate = true, 0
		vp.Bandwidth, vp.AverageBandwidth = uint32(iframeBandwidth(r)), 0
		m.Append(r.Name+"/"+IFramePlaylistName, nil, vp)
	}
	return m.Encode().Bytes(), nil
}

// variant describes a rendition as EXT-X-STREAM-INF attributes
// (FRAME-RATE is the maximum, RFC 8216 §4.3.4.2).
func variant(r Rendition) m3u8.VariantParams {
	rate := r.MaxFrameRate
	if rate == "" {
		rate = r.FrameRate
	}
	return m3u8.VariantParams{
		Bandwidth: uint32(r.Bandwidth()), AverageBandwidth: uint32(r.AverageBandwidth()),
		Codecs: r.Codec, Resolution: fmt.Sprintf("%dx%d", r.Width, r.Height), FrameRate: frameRate(rate),
	}
}

func audioName(r Rendition) string {
	if l := lang(r.Language); l != "" {
		return l
	}
	return "audio"
}

func lang(l string) string {
	if l == "und" {
		return ""
	}
	return l
}

// frameRate evaluates "n" or "n/d".
func frameRate(s string) float64 {
	num, den, ok := strings.Cut(s, "/")
	n, _ := strconv.ParseFloat(num, 64)
	d := 1.0
	if ok {
		d, _ = strconv.ParseFloat(den, 64)
	}
	if d == 0 {
		return 0
	}
	return math.Round(n/d*1000) / 1000
}

// iframeBandwidth is the peak bitrate of the trick track's pictures, each
// over its display duration (RFC 8216 §4.3.4.3: I-frame BANDWIDTH).
func iframeBandwidth(r Rendition) int {
	peak := 0.0
	for _, f := range r.IFrames {
		if f.Duration > 0 {
			peak = max(peak, float64(f.Length*8)/f.Duration)
		}
	}
	return int(math.Ceil(peak))
}

// MediaPlaylist writes a rendition's VOD media playlist: EXT-X-MAP to
// init.mp4, then its segments.
func MediaPlaylist(r Rendition) ([]byte, error) {
	pl, err := newMedia(len(r.Segments))
	if err != nil {
		return nil, err
	}
	for i, s := range r.Segments {
		d := float64(s.Dur) / float64(r.Timescale)
		if err := pl.Append(strconv.Itoa(i+1)+".m4s", d, ""); err != nil {
			return nil, fmt.Errorf("manifest: %s: %w", r.Name, err)
		}
	}
	return finish(pl, r.MaxSegmentDuration()), nil
}

// IFramePlaylist writes a trick track's I-frame playlist
// (EXT-X-I-FRAMES-ONLY): one entry per picture, a byte range covering
// exactly its fragment (moof and mdat).
func IFramePlaylist(r Rendition) ([]byte, error) {
	if len(r.IFrames) == 0 {
		return nil, fmt.Errorf("manifest: %s has no I-frames", r.Name)
	}
	pl, err := newMedia(len(r.IFrames))
	if err != nil {
		return nil, err
	}
	pl.SetIframeOnly()
	longest := 0.0
	for _, f := range r.IFrames {
		seg := &m3u8.MediaSegment{URI: strconv.Itoa(f.Segment) + ".m4s", Duration: f.Duration, Limit: f.Length, Offset: f.Offset}
		if err := pl.AppendSegment(seg); err != nil {
			return nil, fmt.Errorf("manifest: %s: %w", r.Name, err)
		}
		longest = max(longest, f.Duration)
	}
	return finish(pl, longest), nil
}

func newMedia(n int) (*m3u8.MediaPlaylist, error) {
	pl, err := m3u8.NewMediaPlaylist(0, uint(max(n, 1)))
	if err != nil {
		return nil, fmt.Errorf("manifest: %w", err)
	}
	pl.MediaType = m3u8.VOD
	pl.SetVersion(7)
	pl.SetIndependentSegments(true)
	pl.SetDefaultMap("init.mp4", 0, 0)
	return pl, nil
}

// finish sets the target duration (the longest segment, rounded up: RFC
// 8216 §4.3.3.1 compares rounded EXTINF values, so rounding up is safe)
// and closes the playlist.
func finish(pl *m3u8.MediaPlaylist, longest float64) []byte {
	pl.SetTargetDuration(uint(math.Ceil(longest - 1e-6)))
	pl.Close()
	return pl.Encode().Bytes()
}
