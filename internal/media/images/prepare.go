package images

import (
	"fmt"
	"image"
)

// A Pipeline checks uploads and generates their variants.
type Pipeline struct {
	ladder   []Spec
	limits   Limits
	maxBytes int64
	quality  int
	renderer Renderer
}

// NewPipeline returns the pipeline of opts (after EnsureDefaults).
func NewPipeline(opts Options) (*Pipeline, error) {
	opts.EnsureDefaults()
	r, err := resamplerNamed(opts.Resampler)
	if err != nil {
		return nil, err
	}
	if err := validateLadder(opts.Ladder); err != nil {
		return nil, err
	}
	return &Pipeline{ladder: opts.Ladder, limits: opts.Limits(), maxBytes: opts.MaxUploadBytes,
		quality: opts.Quality, renderer: r}, nil
}

// A Prepared image is an original with its generated variants, ready for
// Store.Put.
type Prepared struct {
	Source   Source
	Variants []Variant         // the ladder's rungs, then the original
	blobs    map[string][]byte // variant name -> bytes, for variants with their own key
}

// Blob returns the bytes of variant name.
func (p *Prepared) Blob(name string) []byte {
	for _, v := range p.Variants {
		if v.Name == name {
			return p.blobs[v.BlobName()]
		}
	}
	return nil
}

// Prepare checks an original (type, size, pixels: Probe) and renders every
// rung of the ladder. Nothing is stored.
func (p *Pipeline) Prepare(body []byte) (*Prepared, error) {
	if int64(len(body)) > p.maxBytes {
		return nil, fmt.Errorf("%w: %d bytes, limit %d", ErrTooLarge, len(body), p.maxBytes)
	}
	src, err := Probe(body, p.limits)
	if err != nil {
		return nil, err
	}
	plan := p.plan(src)
	sizes := make([]image.Point, len(plan.render))
	for i, v := range plan.render {
		sizes[i] = image.Pt(v.Width, v.Height)
	}
	encoded, err := p.renderer.Render(body, src, sizes, p.quality)
	if err != nil {
		return nil, err
	}
	return plan.finish(src, body, encoded), nil
}

// plan is which rungs to render and which share another's bytes.
type plan struct {
	variants []Variant // every rung; shared ones have Blob set
	render   []Variant // the rungs to render, in order
}

// plan sizes each rung: one that would be enlarged keeps the original's
// size, and shares the bytes of the original (an upright JPEG) or of the
// previous rung of the same size instead of storing a copy.
func (p *Pipeline) plan(src Source) plan {
	var pl plan
	bySize := map[image.Point]string{}
	if src.Format == "jpeg" && src.Orientation == 1 {
		bySize[image.Pt(src.Width, src.Height)] = OriginalName
	}
	for _, s := range p.ladder {
		size := fit(src.Width, src.Height, image.Pt(s.Width, s.Height))
		v := Variant{Name: s.Name, Width: size.X, Height: size.Y, ContentType: "image/jpeg"}
		if shared, ok := bySize[size]; ok {
			v.Blob = shared
		} else {
			bySize[size] = s.Name
			pl.render = append(pl.render, v)
		}
		pl.variants = append(pl.variants, v)
	}
	return pl
}

// finish fills in the bytes and entity tags.
func (pl plan) finish(src Source, body []byte, encoded [][]byte) *Prepared {
	blobs := map[string][]byte{OriginalName: body}
	for i, v := range pl.render {
		blobs[v.Name] = encoded[i]
	}
	orig := Variant{Name: OriginalName, Width: src.Width, Height: src.Height, ContentType: src.ContentType()}
	vs := append(pl.variants, orig)
	for i := range vs {
		data := blobs[vs[i].BlobName()]
		vs[i].Bytes, vs[i].ETag = int64(len(data)), etagOf(data)
	}
	return &Prepared{Source: src, Variants: vs, blobs: blobs}
}
