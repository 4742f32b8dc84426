package media

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strings"

	"github.com/strata-media/strata/internal/core/framegroup"
	"github.com/strata-media/strata/internal/ident"
	"github.com/strata-media/strata/internal/media/framestore"
	"github.com/strata-media/strata/internal/media/manifest"
	"github.com/strata-media/strata/internal/media/source"
)

// FramesDir is the directory of a title that holds the frame-grouped
// stores, one subdirectory per video rendition. Its leading '.' keeps it
// out of the catalog and of HTTP.
const FramesDir = ".frames"

// Input is one rendition file to package.
type Input struct {
	// Name is the rendition name; "" derives "<kbps>k" from the video
	// bitrate.
	Name string
	// Path is the MP4 file.
	Path string
}

// Result describes a packaged title.
type Result struct {
	Video      string          `json:"video"`
	Duration   float64         `json:"duration_s"`
	Renditions []RenditionInfo `json:"renditions"`
	Files      []string        `json:"manifests"`
	Replaced   bool            `json:"replaced"`
}

// RenditionInfo describes one packaged rendition.
type RenditionInfo struct {
	Name      string  `json:"name"`
	Of        string  `json:"of,omitempty"` // the L1 rendition of a play level
	Level     int     `json:"level,omitempty"`
	Source    string  `json:"source,omitempty"`
	Codec     string  `json:"codec"`
	Width     int     `json:"width,omitempty"`
	Height    int     `json:"height,omitempty"`
	FrameRate string  `json:"frame_rate,omitempty"`
	Bandwidth int     `json:"bandwidth"` // average, bits per second
	Peak      int     `json:"peak_bandwidth"`
	Segments  int     `json:"segments"`
	Duration  float64 `json:"duration_s"`
}

// title collects what packaging produced.
type title struct {
	id       string
	dir      string
	opts     *Options
	levels   map[framegroup.Level][]manifest.Rendition
	audio    *manifest.Rendition
	info     []RenditionInfo
	stores   map[string]framestore.Summary
	duration float64
}

// Package packages inputs into dir, an empty (or missing) directory that
// becomes title id. It writes everything there and nothing elsewhere;
// on error the caller removes dir.
func Package(ctx context.Context, dir, id string, inputs []Input, opts Options) (*Result, error) {
	opts.EnsureDefaults()
	if err := checkOptions(id, inputs, &opts); err != nil {
		return nil, err
	}
	files, err := openAll(inputs, &opts)
	defer closeAll(files)
	if err != nil {
		return nil, err
	}
	names, err := renditionNames(inputs, files)
	if err != nil {
		return nil, err
	}
	if err := checkDurations(files, opts.DurationTolerance.Seconds()); err != nil {
		return nil, err
	}
	t := &title{id: id, dir: dir, opts: &opts, levels: map[framegroup.Level][]manifest.Rendition{}, stores: map[string]framestore.Summary{}}
	if err := t.build(ctx, files, names); err != nil {
		return nil, err
	}
	return t.result(), nil
}

func checkOptions(id string, inputs []Input, opts *Options) error {
	if err := ident.ValidName(id); err != nil {
		return fmt.Errorf("%w: video id: %w", ErrInvalidInput, err)
	}
	if len(inputs) == 0 {
		return fmt.Errorf("%w: no input files", ErrInvalidInput)
	}
	for _, l := range opts.Levels {
		if !l.Valid() || l == framegroup.L1 {
			return fmt.Errorf("media: play level %d: want L2 to L5 (L1 is always built)", int(l))
		}
	}
	return nil
}

func openAll(inputs []Input, opts *Options) ([]*source.File, error) {
	var files []*source.File
	for _, in := range inputs {
		f, err := source.Open(in.Path)
		if err != nil {
			return files, classify(err)
		}
		files = append(files, f)
		opts.progress("%s: %s", filepath.Base(in.Path), describe(f))
	}
	return files, nil
}

func closeAll(files []*source.File) {
	for _, f := range files {
		f.Close()
	}
}

// describe summarizes an input for progress output.
func describe(f *source.File) string {
	v := f.Video
	s := fmt.Sprintf("%dx%d %s, %d pictures, %.2f s, %.0f kb/s", v.Width, v.Height, v.Codec,
		len(v.Samples), v.Duration(), bitrate(v)/1000)
	if a := f.Audio; a != nil {
		s += fmt.Sprintf("; %s %d Hz %d ch", a.Codec, a.SampleRate, a.Channels)
	}
	return s
}

// renditionNames validates the given names and derives missing ones from
// the video bitrate ("712k"), suffixed to stay unique.
func renditionNames(inputs []Input, files []*source.File) ([]string, error) {
	names := make([]string, len(inputs))
	seen := map[string]bool{}
	for i, in := range inputs {
		name := in.Name
		if name == "" {
			name = uniqueName(fmt.Sprintf("%dk", int(math.Round(bitrate(files[i].Video)/1000))), seen)
		}
		if err := checkRenditionName(name); err != nil {
			return nil, err
		}
		if seen[name] {
			return nil, fmt.Errorf("%w: rendition name %q given twice", ErrInvalidInput, name)
		}
		seen[name], names[i] = true, name
	}
	return names, nil
}

func uniqueName(base string, seen map[string]bool) string {
	name := base
	for i := 2; seen[name]; i++ {
		name = fmt.Sprintf("%s-%d", base, i)
	}
	return name
}

// checkRenditionName refuses names that would collide with the audio
// rendition or a play level's.
func checkRenditionName(name string) error {
	if err := ident.ValidName(name); err != nil {
		return fmt.Errorf("%w: rendition name: %w", ErrInvalidInput, err)
	}
	if name == audioName || len(name) > ident.MaxNameLen-3 {
		return fmt.Errorf("%w: rendition name %q is reserved or too long", ErrInvalidInput, name)
	}
	if i := strings.LastIndex(name, "-L"); i >= 0 {
		if _, err := framegroup.ParseLevel(name[i+1:]); err == nil {
			return fmt.Errorf("%w: rendition name %q ends like a play level", ErrInvalidInput, name)
		}
	}
	return nil
}

// checkDurations refuses renditions whose video durations differ by more
// than tol seconds: they would not be the same title.
func checkDurations(files []*source.File, tol float64) error {
	ref := files[0].Video.Duration()
	for _, f := range files[1:] {
		if d := f.Video.Duration(); math.Abs(d-ref) > tol {
			return fmt.Errorf("%w: mismatched durations: %s is %.3f s, %s is %.3f s",
				ErrInvalidInput, filepath.Base(files[0].Path), ref, filepath.Base(f.Path), d)
		}
	}
	return nil
}

// build packages every video rendition and its levels, the audio of the
// first input that has audio, and the manifests.
func (t *title) build(ctx context.Context, files []*source.File, names []string) error {
	var ref *manifest.Rendition
	for i, f := range files {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("media: %w", err)
		}
		r, err := t.buildVideo(names[i], f)
		if err != nil {
			return err
		}
		if ref == nil {
			ref = &r
		}
	}
	if err := t.buildAudio(files, ref); err != nil {
		return err
	}
	return t.writeManifests()
}

func (t *title) buildAudio(files []*source.File, ref *manifest.Rendition) error {
	i := slices.IndexFunc(files, func(f *source.File) bool { return f.Audio != nil })
	if i < 0 {
		return nil
	}
	var starts []float64
	for _, s := range ref.Segments {
		starts = append(starts, float64(s.Start)/float64(ref.Timescale))
	}
	base := float64(ref.PresentationTimeOffset) / float64(ref.Timescale)
	a, err := packageAudio(files[i].Audio, starts, base, t.dir)
	if err != nil {
		return fmt.Errorf("media: audio: %w", err)
	}
	t.audio = &a
	t.addInfo(a, "", 0, filepath.Base(files[i].Path))
	t.opts.progress("audio: %d segments from %s", len(a.Segments), filepath.Base(files[i].Path))
	return nil
}

// buildVideo analyzes one rendition, writes its frame-grouped store and
// builds L1 and the other levels from it. It returns L1.
func (t *title) buildVideo(name string, f *source.File) (manifest.Rendition, error) {
	v, err := analyze(name, f.Video, t.opts.SegmentDuration.Seconds())
	if err != nil {
		return manifest.Rendition{}, err
	}
	storeDir := filepath.Join(t.dir, FramesDir, name)
	sum, err := framestore.Create(storeDir, v.storeInput(), t.opts.Store)
	if err != nil {
		return manifest.Rendition{}, fmt.Errorf("media: %s: frame store: %w", name, err)
	}
	t.stores[name] = sum
	t.opts.progress("%s: frame store: %d pictures in %d blocks of %d KiB (%s)", name, len(v.frames),
		sum.DataBlocks, sum.BlockSize>>10, streamSummary(sum))
	st, err := framestore.Open(storeDir, t.opts.Store)
	if err != nil {
		return manifest.Rendition{}, fmt.Errorf("media: %s: %w", name, err)
	}
	defer st.Close()
	return t.buildLevels(st, v, filepath.Base(f.Path))
}

func (t *title) buildLevels(st *framestore.Store, v *video, src string) (manifest.Rendition, error) {
	var l1 manifest.Rendition
	for _, l := range append([]framegroup.Level{framegroup.L1}, t.opts.Levels...) {
		before := st.Stats().DataBlocks
		r, err := buildLevel(st, v, l, t.dir)
		if err != nil {
			return l1, err
		}
		if l == framegroup.L1 {
			l1 = r
			t.duration = max(t.duration, r.Duration())
		}
		t.levels[l] = append(t.levels[l], r)
		t.addInfo(r, v.name, l, src)
		t.opts.progress("%s: %d segments, %s pictures/s, read %d blocks", r.Name, len(r.Segments),
			r.FrameRate, st.Stats().DataBlocks-before)
	}
	return l1, nil
}

func streamSummary(s framestore.Summary) string {
	var parts []string
	for st := range framegroup.Stream(framegroup.NumStreams) {
		parts = append(parts, fmt.Sprintf("%s %d/%d", st, s.Frames[st], s.StreamBlock[st]))
	}
	return "pictures/blocks: " + strings.Join(parts, ", ")
}

func (t *title) addInfo(r manifest.Rendition, of string, l framegroup.Level, src string) {
	info := RenditionInfo{Name: r.Name, Source: src, Codec: r.Codec, Width: r.Width, Height: r.Height,
		FrameRate: r.FrameRate, Bandwidth: r.AverageBandwidth(), Peak: r.Bandwidth(),
		Segments: len(r.Segments), Duration: r.Duration()}
	if l > framegroup.L1 {
		info.Of, info.Level = of, int(l)
	}
	t.info = append(t.info, info)
}

func (t *title) result() *Result {
	res := &Result{Video: t.id, Duration: t.duration, Renditions: t.info}
	for _, name := range manifestNames(t.opts.Levels) {
		res.Files = append(res.Files, name)
	}
	slices.SortStableFunc(res.Renditions, func(a, b RenditionInfo) int { return cmp.Compare(a.Level, b.Level) })
	return res
}
