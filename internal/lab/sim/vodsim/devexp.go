package vodsim

import (
	"fmt"
	"time"

	"github.com/strata-media/strata/internal/storage/model"
)

// Dev is §4's device finding: both drive models under the combined
// workload, closed loop as xdd ran it, and paced as a VoD server loads a
// drive (streams read at their rate, a copy writes at its).
type Dev struct {
	Capacity int64          `json:"capacity"`
	Aging    model.Aging    `json:"aging"`
	Closed   []DeviceResult `json:"closed"`
	Paced    []DeviceResult `json:"paced"`
	// PacedRead and PacedWrite are the paced run's rates, MB/s.
	PacedRead, PacedWrite float64
}

// deviceAging is the drives' state before the run, the same for both: full,
// then rewritten once at random in 1 MB pieces (a drive that has served
// writes, as the paper's had before Fig. 7's run; 4 KB random rewrites
// would cost a log-block model a merge each and take hours to simulate).
var deviceAging = model.Aging{Fill: 1, Overwrite: 1, WriteSize: MB}

func (r *Report) addDevice(b *batch, sc Scale) {
	presets := []string{"vod-low-end", "vod-high-end"}
	r.Device = Dev{Capacity: sc.DeviceCapacity, Aging: deviceAging, PacedRead: 100, PacedWrite: 20,
		Closed: make([]DeviceResult, len(presets)), Paced: make([]DeviceResult, len(presets))}
	for i, preset := range presets {
		closed := DeviceConfig{Preset: preset, Capacity: sc.DeviceCapacity, Duration: sc.DeviceRun, Readers: 4, Writers: 1,
			Aging: deviceAging, Seed: r.Seed}
		paced := closed
		paced.ReadRate, paced.WriteRate = r.Device.PacedRead*float64(MB), r.Device.PacedWrite*float64(MB)
		paced.Duration = min(closed.Duration, 5*time.Minute)
		b.add(fmt.Sprintf("device %s closed", preset), func() (err error) {
			r.Device.Closed[i], err = RunDevice(closed)
			return err
		})
		b.add(fmt.Sprintf("device %s paced", preset), func() (err error) {
			r.Device.Paced[i], err = RunDevice(paced)
			return err
		})
	}
}
