package vod_test

import (
	"fmt"
	"time"

	"github.com/strata-media/strata/internal/core/vod"
)

// Example shows the calls a live server makes around one whole-file
// stream: count the request, admit it by Algorithm 2, pin the file while
// it streams from flash, and let the LFU plan copies of popular files.
func Example() {
	const rate = 245 * vod.KB // the file's bitrate
	const size = 3600 * rate  // a 60-minute file
	lfu, _ := vod.NewLFU[string](vod.LFUOptions{
		Capacity: 2 * size, HalfLife: time.Hour, Confidence: 1,
		Budget: vod.WriteBudget{Rate: vod.LifetimeRate(64*vod.GB, 10000, 5*365*24*time.Hour)},
	})
	adm := vod.Admission{Flash: vod.Ledger{Capacity: 155 * vod.MB}, Disk: vod.Ledger{Capacity: 100 * vod.MB}}

	now := time.Duration(0)
	for range 3 {
		onFlash := lfu.Request(now, "movie", size)
		src := adm.Admit(onFlash, rate) // Rejected: answer 503 with Retry-After
		fmt.Println("stream from", src)
		if src == vod.FromFlash && !lfu.Acquire("movie") {
			panic("admitted on flash but not resident")
		}
		// After a request, ask whether to copy something to flash. The
		// copy runs in the background at adm.Spare(max) bytes/s, writing
		// whole aligned blocks; delete plan.Freed now, plan.Draining
		// when Release reports them freed.
		if plan, ok := lfu.Plan(now); ok {
			fmt.Println("plan copy of", plan.ID)
		}
		if id, n, ok := lfu.Ready(); ok {
			fmt.Println("copying", id, n>>20, "MB")
			_ = lfu.Installed(id) // when the copy is on flash
		}
		now += time.Minute
	}
	// When a stream ends: adm.Release(src, rate), and for a flash
	// stream lfu.Release(id).
	// Output:
	// stream from disk
	// plan copy of movie
	// copying movie 861 MB
	// stream from flash
	// stream from flash
}
