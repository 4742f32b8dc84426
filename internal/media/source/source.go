// Package source opens a pre-encoded MP4 rendition (progressive ISO BMFF,
// H.264 video and optional AAC audio) and checks it is something Strata
// can package: it lists each track's samples, with their file offsets and
// times, and reads their bytes on demand, so that a large upload is never
// held in memory whole.
package source

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/Eyevinn/mp4ff/avc"
	"github.com/Eyevinn/mp4ff/mp4"
)

// Errors classify what is wrong with an input; messages say what exactly.
var (
	// ErrNotMP4 reports a file that is not an ISO BMFF (MP4) file.
	ErrNotMP4 = errors.New("source: not an MP4 file")
	// ErrInvalid reports an MP4 file that is damaged or inconsistent:
	// truncated, no video track, broken sample tables.
	ErrInvalid = errors.New("source: invalid MP4")
	// ErrUnsupported reports a valid MP4 file that Strata does not
	// package: not H.264/AAC, fragmented, encrypted.
	ErrUnsupported = errors.New("source: unsupported MP4")
)

// File is an opened input.
type File struct {
	Path  string
	Video *Track
	Audio *Track // nil without audio
	Size  int64  // bytes
	f     *os.File
}

// Track is a video or audio track and its samples in decoding order.
type Track struct {
	ID        uint32
	Timescale uint32 // ticks per second of all times
	Language  string
	Samples   []Sample
	EndTime   uint64 // decode time after the last sample
	// Shift is the edit list's media time (ticks): the decode-timeline
	// time that is presented first. ffmpeg writes the B-frame delay
	// here; packaging subtracts it from composition offsets so
	// presentation starts at 0.
	Shift int64
	// Entry is the sample entry (avc1/avc3 or mp4a box) copied into init
	// segments.
	Entry mp4.Box
	// Codec is the RFC 6381 codecs string, e.g. avc1.64001F or mp4a.40.2.
	Codec string
	// Video only.
	Width, Height int
	NALLengthSize int
	// Audio only.
	SampleRate, Channels int

	r io.ReaderAt
}

// Sample is one sample's place and timing.
type Sample struct {
	Offset int64
	Size   uint32
	DTS    uint64
	Dur    uint32
	CTO    int32 // composition offset as stored (before Shift)
	Sync   bool
}

// Open opens and checks the MP4 file at path. Close it when done.
func Open(path string) (*File, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("source: %w", err)
	}
	src, err := open(f, path)
	if err != nil {
		f.Close()
		return nil, err
	}
	return src, nil
}

// Close closes the file.
func (f *File) Close() error { return f.f.Close() }

func open(f *os.File, path string) (src *File, err error) {
	defer func() { // mp4ff may panic on hostile input; it is input, not a bug of ours
		if p := recover(); p != nil {
			src, err = nil, fmt.Errorf("%w: %s: unparseable box structure (%v)", ErrInvalid, path, p)
		}
	}()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("source: %w", err)
	}
	if err := sniff(f, path); err != nil {
		return nil, err
	}
	moov, fragmented, err := decodeMoov(f, st.Size())
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	src = &File{Path: path, Size: st.Size(), f: f}
	return src, src.readTracks(moov, fragmented)
}

// decodeMoov finds the movie box by its header and the headers of the
// boxes before it, and decodes it alone: no other box (a large free box,
// an unknown one, the media data) is read, and the movie box itself at
// most MaxMoov bytes. It says whether the file has movie fragments.
func decodeMoov(r io.ReaderAt, size int64) (*mp4.MoovBox, bool, error) {
	top, err := Boxes(r, 0, size)
	_, fragmented := Find(top, "moof")
	b, ok := Find(top, "moov")
	switch {
	case !ok && err != nil:
		return nil, false, fmt.Errorf("%w: %w", ErrInvalid, err)
	case !ok:
		return nil, false, fmt.Errorf("%w: no moov box (truncated file?)", ErrInvalid)
	case b.Size > MaxMoov:
		return nil, false, fmt.Errorf("%w: a movie box of %d bytes, limit %d", ErrUnsupported, b.Size, MaxMoov)
	}
	box, err := mp4.DecodeBox(uint64(b.Offset), io.NewSectionReader(r, b.Offset, b.Size))
	if err != nil {
		return nil, false, fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	moov, ok := box.(*mp4.MoovBox)
	if !ok {
		return nil, false, fmt.Errorf("%w: moov decoded as %T", ErrInvalid, box)
	}
	return moov, fragmented, nil
}

// sniff checks that the file starts with an MP4 box of a known top-level
// type, so that a JPEG or a text file gets "not an MP4 file".
func sniff(r io.ReaderAt, path string) error {
	var hdr [8]byte
	if _, err := r.ReadAt(hdr[:], 0); err != nil {
		return fmt.Errorf("%w: %s: too short", ErrNotMP4, path)
	}
	if k := Sniff(hdr[:]); k != KindMP4 {
		return fmt.Errorf("%w: %s: first box type %q", ErrNotMP4, path, hdr[4:8])
	}
	return nil
}

func (src *File) readTracks(moov *mp4.MoovBox, fragmented bool) error {
	if fragmented || moov.Mvex != nil {
		return fmt.Errorf("%w: %s: fragmented MP4; give a progressive file (ffmpeg -i in.mp4 -c copy out.mp4)", ErrUnsupported, src.Path)
	}
	for _, trak := range moov.Traks {
		if err := src.addTrack(trak); err != nil {
			return err
		}
	}
	if src.Video == nil {
		return fmt.Errorf("%w: %s: no video track", ErrInvalid, src.Path)
	}
	return nil
}

// addTrack takes the first video and the first audio track; other tracks
// (text, timecode, a second audio language) are ignored.
func (src *File) addTrack(trak *mp4.TrakBox) error {
	if trak.Mdia == nil || trak.Mdia.Hdlr == nil || trak.Mdia.Minf == nil || trak.Mdia.Minf.Stbl == nil {
		return fmt.Errorf("%w: %s: incomplete trak box", ErrInvalid, src.Path)
	}
	switch trak.Mdia.Hdlr.HandlerType {
	case "vide":
		if src.Video != nil {
			return fmt.Errorf("%w: %s: more than one video track; give one rendition per file", ErrUnsupported, src.Path)
		}
		t, err := src.newTrack(trak, videoEntry)
		src.Video = t
		return err
	case "soun":
		if src.Audio != nil {
			return nil
		}
		t, err := src.newTrack(trak, audioEntry)
		src.Audio = t
		return err
	}
	return nil
}

// entryFunc checks a track's sample description and fills in the codec
// fields.
type entryFunc func(t *Track, stsd *mp4.StsdBox) error

func (src *File) newTrack(trak *mp4.TrakBox, entry entryFunc) (*Track, error) {
	t := &Track{ID: trak.Tkhd.TrackID, Timescale: trak.Mdia.Mdhd.Timescale, Language: trak.Mdia.Mdhd.GetLanguage(), r: src.f}
	if trak.Mdia.Elng != nil {
		t.Language = trak.Mdia.Elng.Language
	}
	stbl := trak.Mdia.Minf.Stbl
	if stbl.Stsd == nil {
		return nil, fmt.Errorf("%w: %s: track %d has no sample description", ErrInvalid, src.Path, t.ID)
	}
	if err := entry(t, stbl.Stsd); err != nil {
		return nil, fmt.Errorf("%s: track %d: %w", src.Path, t.ID, err)
	}
	if t.Timescale == 0 {
		return nil, fmt.Errorf("%w: %s: track %d has timescale 0", ErrInvalid, src.Path, t.ID)
	}
	if err := t.readSamples(stbl, src.Size); err != nil {
		return nil, fmt.Errorf("%s: track %d: %w", src.Path, t.ID, err)
	}
	t.Shift = editShift(trak)
	return t, nil
}

func videoEntry(t *Track, stsd *mp4.StsdBox) error {
	e := stsd.AvcX
	if e == nil || e.AvcC == nil {
		return fmt.Errorf("%w: video codec %s, want H.264 (avc1/avc3)", ErrUnsupported, entryName(stsd))
	}
	if len(e.AvcC.SPSnalus) == 0 {
		return fmt.Errorf("%w: H.264 without a sequence parameter set in avcC", ErrUnsupported)
	}
	sps, err := avc.ParseSPSNALUnit(e.AvcC.SPSnalus[0], false)
	if err != nil {
		return fmt.Errorf("%w: H.264 sequence parameter set: %v", ErrInvalid, err)
	}
	t.Entry, t.Codec = e, avc.CodecString(e.Type(), sps)
	t.Width, t.Height = int(sps.Width), int(sps.Height)
	t.NALLengthSize = 4 // mp4ff decodes only 4-byte NAL lengths
	return nil
}

func audioEntry(t *Track, stsd *mp4.StsdBox) error {
	e := stsd.Mp4a
	if e == nil || e.Esds == nil || e.Esds.DecConfigDescriptor.ObjectType != mp4.ObjectTypeAAC {
		return fmt.Errorf("%w: audio codec %s, want AAC (mp4a.40)", ErrUnsupported, entryName(stsd))
	}
	dsi := e.Esds.DecConfigDescriptor.DecSpecificInfo
	if dsi == nil || len(dsi.DecConfig) == 0 {
		return fmt.Errorf("%w: AAC without AudioSpecificConfig", ErrInvalid)
	}
	aot := dsi.DecConfig[0] >> 3
	t.Entry, t.Codec = e, fmt.Sprintf("mp4a.40.%d", aot)
	t.SampleRate, t.Channels = int(e.SampleRate), int(e.ChannelCount)
	return nil
}

// entryName names the first sample entry, for error messages.
func entryName(stsd *mp4.StsdBox) string {
	if len(stsd.Children) == 0 {
		return "(none)"
	}
	return stsd.Children[0].Type()
}

// editShift returns the media time of the first non-empty edit, 0 without
// an edit list.
func editShift(trak *mp4.TrakBox) int64 {
	if trak.Edts == nil || len(trak.Edts.Elst) == 0 {
		return 0
	}
	for _, e := range trak.Edts.Elst[0].Entries {
		if e.MediaTime >= 0 {
			return e.MediaTime
		}
	}
	return 0
}

// Read returns the bytes of sample i.
func (t *Track) Read(i int) ([]byte, error) {
	s := t.Samples[i]
	buf := make([]byte, s.Size)
	if _, err := t.r.ReadAt(buf, s.Offset); err != nil {
		return nil, fmt.Errorf("source: sample %d: %w", i, err)
	}
	return buf, nil
}

// Seconds converts ticks to seconds.
func (t *Track) Seconds(ticks uint64) float64 { return float64(ticks) / float64(t.Timescale) }

// Duration is the track's duration in seconds.
func (t *Track) Duration() float64 { return t.Seconds(t.EndTime) }

// Bytes is the total size of the samples.
func (t *Track) Bytes() int64 {
	var n int64
	for _, s := range t.Samples {
		n += int64(s.Size)
	}
	return n
}
