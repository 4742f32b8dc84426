package probe

import (
	"context"
	"errors"
	"math"
	"testing"
	"time"

	"github.com/strata-media/strata/internal/storage/device"
	"github.com/strata-media/strata/internal/storage/model"
)

func newSSD(t testing.TB, p model.SSDParams) *model.SSD {
	t.Helper()
	s, err := model.NewSSD(p)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func logResult(t *testing.T, res Result) {
	t.Helper()
	for _, r := range res.Sizes {
		t.Logf("%8d KiB  KL %6.3f  seq mean %v p99 %v  random mean %v p99 %v", r.Size>>10, r.KL,
			r.Sequential.Mean.Round(time.Microsecond), r.Sequential.P99.Round(time.Microsecond),
			r.Random.Mean.Round(time.Microsecond), r.Random.P99.Round(time.Microsecond))
	}
	t.Logf("optimal block size %d KiB", res.OptimalBlockSize>>10)
}

// TestLogBlockModels runs FlashStream's protocol (fill, then 640 writes per
// pattern and size, threshold 0.1) on the log-block presets, over 75 GB of
// the OCZ as in FlashStream §5. The answer is not set anywhere: it follows
// from each model's unit, channels x ways x planes x erase block. FlashStream
// Fig. 3 reports 16 MB for the OCZ Core V2 and 4 MB for the Samsung SLC.
func TestLogBlockModels(t *testing.T) {
	cases := []struct {
		p      model.SSDParams
		region int64
		want   int64
	}{
		{model.OCZCoreV2(), 75e9, 16 << 20},
		{model.SamsungSLC64(), 0, 4 << 20},
		{model.MtronMSDSATA3025(), 0, 2 << 20},
	}
	for _, c := range cases {
		t.Run(c.p.Name, func(t *testing.T) {
			res, err := Run(context.Background(), ModelTarget(newSSD(t, c.p)), Options{Region: c.region, PassBytes: 8 << 30})
			if err != nil {
				t.Fatal(err)
			}
			logResult(t, res)
			if res.OptimalBlockSize != c.want || res.OptimalBlockSize != c.p.UnitSize() {
				t.Errorf("optimal block size %d, want %d (the unit is %d)", res.OptimalBlockSize, c.want, c.p.UnitSize())
			}
		})
	}
}

// TestPageMappedModel probes a 4 GiB-scaled Intel X25-M G1 (40 MiB write
// frontier) with one capacity of steady-state warmup per pattern; without
// it a page-mapped drive's spare absorbs FlashStream's 640 writes and
// small sizes look optimal. FlashStream Fig. 3 reports 64 MB; the model's
// answer depends on the spare left per die, so it is logged, not checked,
// beyond lying between 1 MiB and the first power of two above the frontier.
func TestPageMappedModel(t *testing.T) {
	if testing.Short() {
		t.Skip("about 10 s of garbage collection")
	}
	p := model.IntelX25MG1().WithCapacity(4 << 30)
	res, err := Run(context.Background(), ModelTarget(newSSD(t, p)), Options{
		Sizes: sizes(1<<20, 128<<20), Warmup: p.Capacity, PassBytes: 2 << 30, StopAtOptimal: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	logResult(t, res)
	if res.OptimalBlockSize < 1<<20 || res.OptimalBlockSize > 64<<20 {
		t.Errorf("optimal block size %d outside [1 MiB, 64 MiB]", res.OptimalBlockSize)
	}
}

func sizes(lo, hi int64) []int64 {
	var s []int64
	for x := lo; x <= hi; x *= 2 {
		s = append(s, x)
	}
	return s
}

// TestDeviceTarget runs the probe on an in-memory device: it works end to
// end; its timings mean nothing.
func TestDeviceTarget(t *testing.T) {
	d := device.NewMem(64<<20, 4096)
	var phases []string
	res, err := Run(context.Background(), DeviceTarget(d), Options{
		Sizes: sizes(4096, 1<<20), Count: 16, Seed: 1,
		Progress: func(p Progress) {
			if p.Phase != "sequential" && p.Phase != "random" {
				phases = append(phases, p.Phase)
			}
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Sizes) != 9 || len(phases) != 10 || phases[0] != "fill" {
		t.Errorf("%d sizes, phases %v", len(res.Sizes), phases)
	}
	if d.Writes() == 0 {
		t.Error("nothing written to the device")
	}
}

func TestBudgetAndErrors(t *testing.T) {
	s := newSSD(t, model.OCZCoreV2().WithCapacity(1<<30))
	res, err := Run(context.Background(), ModelTarget(s), Options{Budget: 2 << 30, Count: 64})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Truncated || res.BytesWritten > 2<<30 || len(res.Sizes) == 0 {
		t.Errorf("truncated %v, %d bytes, %d sizes", res.Truncated, res.BytesWritten, len(res.Sizes))
	}
	if _, err := Run(context.Background(), ModelTarget(s), Options{Region: 4096}); !errors.Is(err, ErrRegion) {
		t.Errorf("tiny region: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Run(ctx, DeviceTarget(device.NewMem(16<<20, 4096)), Options{SkipFill: true}); !errors.Is(err, context.Canceled) {
		t.Errorf("canceled: %v", err)
	}
}

func TestKL(t *testing.T) {
	ms := func(xs ...float64) []time.Duration {
		d := make([]time.Duration, len(xs))
		for i, x := range xs {
			d[i] = time.Duration(x * float64(time.Millisecond))
		}
		return d
	}
	same := ms(1, 1, 2, 4, 8)
	if kl := KL(same, same, 4); kl != 0 {
		t.Errorf("KL of identical samples = %g", kl)
	}
	// Two samples one bin apart: p = (1.5, .5)/2, q = (.5, 1.5)/2.
	want := 0.75*math.Log(3) + 0.25*math.Log(1.0/3)
	if kl := KL(ms(1), ms(1.3), 1); math.Abs(kl-want) > 1e-12 {
		t.Errorf("KL one bin apart = %g, want %g", kl, want)
	}
	far := KL(ms(1, 1, 1, 1), ms(1000, 1000, 1000, 1000), 4)
	if math.IsInf(far, 0) || far < 1 {
		t.Errorf("KL of disjoint samples = %g, want large and finite", far)
	}
	if KL(ms(1, 1.01, 0.99), ms(1, 1, 1), 4) != 0 {
		t.Error("nearly constant samples in one bin differ")
	}
}
