package flashstream

import (
	"testing"
	"time"

	"github.com/strata-media/strata/internal/core/tier"
	"github.com/strata-media/strata/internal/sim/des"
	"github.com/strata-media/strata/internal/storage/model"
	"github.com/strata-media/strata/internal/workload"
)

func TestFlashStreamRuns(t *testing.T) {
	ds := workload.NewDataset(workload.DatasetOptions{Titles: 200, Seed: 1})
	hddM, _ := model.NewHDD(model.Generic7200(550e9))
	ssdM, _ := model.NewSSD(model.OCZCoreV2().WithCapacity(12e9))
	l := &des.Loop{}
	cat := des.NewCatalog(ds, hddM.Size())
	t.Logf("catalog: %d titles, %d segments, %.1f GB", cat.Titles(), cat.Segments(), float64(cat.TotalBytes())/1e9)
	sys, err := NewFlashStream(l, cat, des.NewDisk(l, ssdM), des.NewDisk(l, hddM), FlashStreamOptions{
		Tier: tier.Options{RAMBytes: 200 << 20, BlockSize: 16 << 20, DeviceSize: 7500 << 20},
	})
	if err != nil {
		t.Fatal(err)
	}
	sys.Start()
	z, _ := workload.NewZipfTheta(cat.Titles(), 0.2)
	start := time.Now()
	for _, rate := range []float64{20, 30, 40, 50} {
		r := Run(l, sys, cat, Workload{Rate: rate, Duration: 10 * time.Minute, Zipf: z, Seed: 1})
		t.Logf("%+v", r)
		Drain(l, sys, time.Minute)
	}
	t.Logf("wall %v, sim %v", time.Since(start), l.Now())
}
