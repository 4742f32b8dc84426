package flashstream

import (
	"math"
	"testing"
	"time"

	"github.com/strata-media/strata/internal/core/tier"
	"github.com/strata-media/strata/internal/lab/sim/des"
	"github.com/strata-media/strata/internal/storage/model"
	"github.com/strata-media/strata/internal/workload"
)

// TestFlashStreamRuns drives one FlashStream(LRU) system, the paper's
// block policy rather than the core's default, cold, through four
// ten-minute trials at rates well under its small-scale maximum and checks
// the shape FlashStream §5 reports: no deadline misses below the maximum,
// a flash cache that fills and then serves a steady share of requests
// whatever the rate, a RAM pool that serves little next to it, and device
// load that grows with the request rate.
func TestFlashStreamRuns(t *testing.T) {
	ds := workload.NewDataset(workload.DatasetOptions{Titles: 200, Seed: 1})
	hddM, err := model.NewHDD(model.Generic7200(550e9))
	if err != nil {
		t.Fatal(err)
	}
	ssdM, err := model.NewSSD(model.OCZCoreV2().WithCapacity(12e9))
	if err != nil {
		t.Fatal(err)
	}
	l := &des.Loop{}
	cat := des.NewCatalog(ds, hddM.Size())
	sys, err := newFlashStream(l, cat, des.NewDisk(l, ssdM), des.NewDisk(l, hddM), flashStreamOptions{
		Tier: tier.Options{RAMBytes: 200 << 20, BlockSize: 16 << 20, DeviceSize: 7500 << 20, BlockPolicy: tier.BlockLRU},
	})
	if err != nil {
		t.Fatal(err)
	}
	sys.Start()
	z, err := workload.NewZipfTheta(cat.Titles(), 0.2)
	if err != nil {
		t.Fatal(err)
	}
	var rs []Result
	for _, rate := range []float64{20, 30, 40, 50} {
		r := Run(l, sys, cat, Workload{Rate: rate, Duration: 10 * time.Minute, Zipf: z, Seed: 1})
		drain(l, sys, time.Minute)
		rs = append(rs, r)
		if r.Requests != int64(rate*600) || r.Misses != 0 {
			t.Errorf("%v req/s: %d requests, %d misses; want %v and none", rate, r.Requests, r.Misses, rate*600)
		}
		if r.RAMHitRatio > r.SSDHitRatio/10 {
			t.Errorf("%v req/s: RAM hit ratio %.3f not far below the flash's %.3f", rate, r.RAMHitRatio, r.SSDHitRatio)
		}
	}
	if rs[0].SSDFill < 0.95 || rs[1].SSDFill < 0.99 {
		t.Errorf("flash did not fill: %.3f after the first trial, %.3f after the second", rs[0].SSDFill, rs[1].SSDFill)
	}
	warm := rs[1].SSDHitRatio
	if rs[0].SSDHitRatio >= warm {
		t.Errorf("cold trial hit ratio %.3f not below the warm one's %.3f", rs[0].SSDHitRatio, warm)
	}
	for i, r := range rs[1:] {
		if math.Abs(r.SSDHitRatio-warm) > 0.03 {
			t.Errorf("warm trial %d: SSD hit ratio %.3f, not steady near %.3f", i+1, r.SSDHitRatio, warm)
		}
	}
	for i := 1; i < len(rs); i++ {
		if rs[i].HDDUtil <= rs[i-1].HDDUtil || rs[i].SSDUtil <= rs[i-1].SSDUtil {
			t.Errorf("device load does not grow with the rate: %v req/s HDD %.2f SSD %.2f, %v req/s HDD %.2f SSD %.2f",
				rs[i-1].Rate, rs[i-1].HDDUtil, rs[i-1].SSDUtil, rs[i].Rate, rs[i].HDDUtil, rs[i].SSDUtil)
		}
	}
}
