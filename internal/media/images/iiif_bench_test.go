package images

import "testing"

// BenchmarkIIIF makes 200-pixel-wide IIIF responses of a 12 MP JPEG
// (benchPhoto): the whole image and a 1200x900 region, each derived from
// the variant PlanIIIF picks and, for comparison, from the original (what
// a server without a ladder decodes). Each iteration reads the variant
// from the store, decodes, crops, scales and encodes: a cache miss.
func BenchmarkIIIF(b *testing.B) {
	st := openTestStore(b, nil)
	m, _, err := st.Ingest("bench", benchPhoto())
	if err != nil {
		b.Fatal(err)
	}
	orig, _ := m.Variant(OriginalName)
	o := (&IIIFOptions{}).EnsureDefaults()
	for _, c := range []struct{ name, region string }{{"full", "full"}, {"region", "1000,750,1200,900"}} {
		q, err := ParseIIIF(c.region, "200,", "0", "default.jpg")
		if err != nil {
			b.Fatal(err)
		}
		p, err := PlanIIIF(&m, q, o)
		if err != nil {
			b.Fatal(err)
		}
		fromOrig := p
		fromOrig.Variant, fromOrig.Crop = orig, cropIn(orig, &m, p.Region)
		for _, pp := range []IIIFPlan{p, fromOrig} {
			b.Run(c.name+"/from="+pp.Variant.Name, func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					body, err := st.Blob(m.ID, m.Generation, pp.Variant.BlobName())
					if err != nil {
						b.Fatal(err)
					}
					if _, err := deriveIIIF(body, pp, o.Quality); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
