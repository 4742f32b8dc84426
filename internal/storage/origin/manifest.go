package origin

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/strata-media/strata/internal/ident"
)

// Names of the generated text files.
const (
	dashManifestName = "manifest.mpd"
	hlsMasterName    = "master.m3u8"
	hlsMediaName     = "playlist.m3u8"
)

// The MPD's XML, as much of ISO/IEC 23009-1 as a static, single-period,
// number-addressed presentation needs. There is no init segment, so the
// SegmentTemplate has no initialization attribute: the media is not
// playable, only well-formed.
type mpdXML struct {
	XMLName  xml.Name  `xml:"urn:mpeg:dash:schema:mpd:2011 MPD"`
	Profiles string    `xml:"profiles,attr"`
	Type     string    `xml:"type,attr"`
	Duration string    `xml:"mediaPresentationDuration,attr"`
	MinBuf   string    `xml:"minBufferTime,attr"`
	Period   periodXML `xml:"Period"`
}

type periodXML struct {
	ID    string          `xml:"id,attr"`
	Start string          `xml:"start,attr"`
	Sets  []adaptationXML `xml:"AdaptationSet"`
}

type adaptationXML struct {
	MimeType        string          `xml:"mimeType,attr"`
	SegmentAligned  bool            `xml:"segmentAlignment,attr"`
	StartWithSAP    int             `xml:"startWithSAP,attr"`
	SegmentTemplate segmentTemplXML `xml:"SegmentTemplate"`
	Representations []representXML  `xml:"Representation"`
}

type segmentTemplXML struct {
	Media       string `xml:"media,attr"`
	StartNumber int    `xml:"startNumber,attr"`
	Timescale   int    `xml:"timescale,attr"`
	Duration    int64  `xml:"duration,attr"`
}

type representXML struct {
	ID        string `xml:"id,attr"`
	Bandwidth int    `xml:"bandwidth,attr"`
}

// mpdTimescale is the SegmentTemplate's timescale, ticks per second.
const mpdTimescale = 1000

// dashManifest returns an MPD for t: one AdaptationSet holding every
// rendition, segments addressed as "<rendition>/<n>.m4s" relative to the
// manifest, numbered from the first rendition's StartNumber.
func dashManifest(t Title) []byte {
	m := mpdXML{
		Profiles: "urn:mpeg:dash:profile:isoff-live:2011",
		Type:     "static",
		Duration: isoDuration(float64(maxSegments(t)) * t.SegmentDuration),
		MinBuf:   isoDuration(t.SegmentDuration),
		Period:   periodXML{ID: "0", Start: "PT0S", Sets: []adaptationXML{adaptationSet(t)}},
	}
	out, err := xml.MarshalIndent(m, "", "  ")
	if err != nil {
		panic(fmt.Sprintf("origin: marshal MPD: %v", err)) // fixed types: cannot fail
	}
	return append([]byte(xml.Header), append(out, '\n')...)
}

func adaptationSet(t Title) adaptationXML {
	a := adaptationXML{
		MimeType: "video/mp4", SegmentAligned: true, StartWithSAP: 1,
		SegmentTemplate: segmentTemplXML{
			Media:       "$RepresentationID$/$Number$.m4s",
			StartNumber: 1,
			Timescale:   mpdTimescale,
			Duration:    int64(math.Round(t.SegmentDuration * mpdTimescale)),
		},
	}
	if len(t.Renditions) > 0 {
		a.SegmentTemplate.StartNumber = t.Renditions[0].StartNumber
	}
	for _, r := range t.Renditions {
		a.Representations = append(a.Representations, representXML{ID: r.ID, Bandwidth: r.Bandwidth})
	}
	return a
}

func maxSegments(t Title) int {
	n := 0
	for _, r := range t.Renditions {
		n = max(n, r.Segments)
	}
	return n
}

// isoDuration formats seconds as an xs:duration, e.g. "PT586S".
func isoDuration(s float64) string {
	return "PT" + strconv.FormatFloat(s, 'f', -1, 64) + "S"
}

// hlsMaster returns an HLS multivariant playlist (RFC 8216 §4.3.4.2)
// pointing to each rendition's playlist.m3u8.
func hlsMaster(t Title) []byte {
	var b strings.Builder
	b.WriteString("#EXTM3U\n#EXT-X-VERSION:3\n#EXT-X-INDEPENDENT-SEGMENTS\n")
	for _, r := range t.Renditions {
		fmt.Fprintf(&b, "#EXT-X-STREAM-INF:BANDWIDTH=%d\n%s/%s\n", r.Bandwidth, r.ID, hlsMediaName)
	}
	return []byte(b.String())
}

// hlsMedia returns a VOD media playlist listing the segments of r,
// numbered without gaps from r.StartNumber, each SegmentDuration long. The
// segments are fragmented MP4 but there is no init segment to name in an
// EXT-X-MAP, so no player will decode them: the playlist is for clients
// that fetch segments, as the benchmarks do.
func hlsMedia(t Title, r Rendition) []byte {
	var b bytes.Buffer
	b.Grow(128 + r.Segments*24)
	extinf := strconv.FormatFloat(t.SegmentDuration, 'f', 3, 64)
	fmt.Fprintf(&b, "#EXTM3U\n#EXT-X-VERSION:3\n#EXT-X-TARGETDURATION:%d\n", int(math.Ceil(t.SegmentDuration)))
	fmt.Fprintf(&b, "#EXT-X-MEDIA-SEQUENCE:%d\n#EXT-X-PLAYLIST-TYPE:VOD\n", r.StartNumber)
	for i := range r.Segments {
		fmt.Fprintf(&b, "#EXTINF:%s,\n%s\n", extinf, ident.SegmentName(uint32(r.StartNumber+i)))
	}
	b.WriteString("#EXT-X-ENDLIST\n")
	return b.Bytes()
}
