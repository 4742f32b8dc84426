package workload

import (
	"math"
	"math/rand/v2"
	"testing"
)

func TestZipfMatchesLaw(t *testing.T) {
	z, err := NewZipf(300, 0.271)
	if err != nil {
		t.Fatal(err)
	}
	// docs/design.md: the VoD paper's top 74 of 300 titles draw 0.356 with s = 0.271.
	if m := z.TopMass(74); math.Abs(m-0.356) > 0.005 {
		t.Fatalf("top-74 mass %.4f, want about 0.356", m)
	}
	r := rand.New(rand.NewPCG(1, 2))
	counts := make([]int, 300)
	const n = 200_000
	for range n {
		counts[z.Draw(r)]++
	}
	for _, i := range []int{0, 9, 99} {
		if got := float64(counts[i]) / n; math.Abs(got-z.P(i)) > 4*math.Sqrt(z.P(i)/n) {
			t.Errorf("rank %d drawn %.5f, want %.5f", i, got, z.P(i))
		}
	}
	if _, err := NewZipf(0, 1); err == nil {
		t.Error("empty law accepted")
	}
	if _, err := NewZipfTheta(10, 1.5); err == nil {
		t.Error("theta 1.5 accepted")
	}
}

func TestDatasetPaperScale(t *testing.T) {
	d := NewDataset(DatasetOptions{Seed: 1})
	if len(d.Titles) != 2000 {
		t.Fatalf("%d titles", len(d.Titles))
	}
	gb := float64(d.TotalBytes()) / 1e9
	if gb < 500 || gb > 590 {
		t.Fatalf("library of %.0f GB, FlashStream §5.1 states about 545 GB", gb)
	}
	// Deterministic.
	d2 := NewDataset(DatasetOptions{Seed: 1})
	tt := d.Titles[7]
	if d2.Titles[7].ID != tt.ID || d.SegmentSize(tt.ID, tt.Renditions[0], 3) != d2.SegmentSize(tt.ID, tt.Renditions[0], 3) {
		t.Fatal("dataset not deterministic")
	}
}

func TestDatasetAllRenditions(t *testing.T) {
	d := NewDataset(DatasetOptions{Titles: 3, AllRenditions: true, MaxLength: 60e9})
	for _, tt := range d.Titles {
		if len(tt.Renditions) != 5 || tt.Renditions[0].Segments != 6 {
			t.Fatalf("title %+v", tt)
		}
	}
}
