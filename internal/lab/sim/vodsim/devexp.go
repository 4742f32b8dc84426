package vodsim

import (
	"fmt"
	"time"

	"github.com/strata-media/strata/internal/storage/model"
)

// dev is §4's device finding: both drive models under the combined
// workload, closed loop as xdd ran it, and paced as a VoD server loads a
// drive (streams read at their rate, a copy writes at its).
type dev struct {
	Capacity int64          `json:"capacity"`
	Aging    model.Aging    `json:"aging"`
	Closed   []deviceResult `json:"closed"`
	Paced    []deviceResult `json:"paced"`
	// PacedRead and PacedWrite are the paced run's rates, MB/s.
	PacedRead, PacedWrite float64
}

// deviceAging is the drives' state before the run, the same for both: full,
// then rewritten once at random in 1 MB pieces (a drive that has served
// writes, as the paper's had before Fig. 7's run; 4 KB random rewrites
// would cost a log-block model a merge each and take hours to simulate).
var deviceAging = model.Aging{Fill: 1, Overwrite: 1, WriteSize: mb}

func (r *Report) addDevice(b *batch, sc scale) {
	presets := []string{"vod-low-end", "vod-high-end"}
	r.Device = dev{Capacity: sc.DeviceCapacity, Aging: deviceAging, PacedRead: 100, PacedWrite: 20,
		Closed: make([]deviceResult, len(presets)), Paced: make([]deviceResult, len(presets))}
	for i, preset := range presets {
		closed := deviceConfig{Preset: preset, Capacity: sc.DeviceCapacity, Duration: sc.DeviceRun, Readers: 4, Writers: 1,
			Aging: deviceAging, Seed: r.Seed}
		paced := closed
		paced.ReadRate, paced.WriteRate = r.Device.PacedRead*float64(mb), r.Device.PacedWrite*float64(mb)
		paced.Duration = min(closed.Duration, 5*time.Minute)
		b.add(fmt.Sprintf("device %s closed", preset), func() (err error) {
			r.Device.Closed[i], err = runDevice(closed)
			return err
		})
		b.add(fmt.Sprintf("device %s paced", preset), func() (err error) {
			r.Device.Paced[i], err = runDevice(paced)
			return err
		})
	}
}
