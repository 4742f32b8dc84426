package mrissim

import (
	"fmt"
	"io"
	"time"
)

// Report is a benchmark run's results.
type Report struct {
	Config Config     `json:"config"`
	Writes []writeRow `json:"writes"`
	Reads  []readRow  `json:"reads"`
	// Lines are the read cost lines fitted to each setup.
	Lines map[string]line `json:"lines"`
	// Costs are Table 3's variables from the SSD and HDD setups' lines.
	Costs costs `json:"costs"`
	// FlashFraction is the hybrid setup's flash share of the stored bytes
	// (MRIS: 5.9%).
	FlashFraction float64 `json:"flash_fraction"`
	// Calibrated is the read benchmark again with the software time per
	// get raised so that a small read from flash costs the paper's t_SF
	// (1482 us): what the device models give with MRIS's software path.
	Calibrated    []readRow     `json:"calibrated_reads"`
	CalibratedCPU time.Duration `json:"calibrated_cpu_per_op_ns"`
	Real          *realReport   `json:"real,omitempty"`
	Elapsed       float64       `json:"elapsed_s"`
}

// A writeRow is the write benchmark of one setup and key order.
type writeRow struct {
	Setup string `json:"setup"`
	Order string `json:"order"`
	Result
}

// A readRow is the read benchmark of one setup at one ratio.
type readRow struct {
	Setup string `json:"setup"`
	Ratio int    `json:"ratio"`
	Result
}

// Run runs the benchmark, printing progress lines to progress.
func Run(c Config, progress io.Writer) (*Report, error) {
	c, err := c.withDefaults()
	if err != nil {
		return nil, err
	}
	start := time.Now()
	rep := &Report{Config: c, Lines: map[string]line{}}
	if err := rep.simulateWrites(progress); err != nil {
		return nil, err
	}
	if err := rep.simulateReads(progress); err != nil {
		return nil, err
	}
	if err := rep.calibrate(progress); err != nil {
		return nil, err
	}
	if c.Real {
		if rep.Real, err = runReal(c, progress); err != nil {
			return nil, err
		}
	}
	rep.Elapsed = time.Since(start).Seconds()
	return rep, nil
}

func (rep *Report) simulateWrites(progress io.Writer) error {
	c := rep.Config
	for _, s := range setups {
		for _, random := range []bool{false, true} {
			res, err := simWrites(c, s, insertOrder(c.Groups, random, c.Seed))
			if err != nil {
				return err
			}
			fmt.Fprintf(progress, "%-8s write %-10s %8.0f ops/s %7.1f MB/s\n", s.Name, orderName(random), res.OpsPerS, res.MBPerS)
			rep.Writes = append(rep.Writes, writeRow{Setup: s.Name, Order: orderName(random), Result: res})
		}
	}
	return nil
}

// simulateReads runs every ratio on every setup, then fits the cost lines.
func (rep *Report) simulateReads(progress io.Writer) error {
	rows, err := readAll(rep.Config, "", progress)
	if err != nil {
		return err
	}
	rep.Reads = rows
	lay := newLayout(rep.Config, rep.Config.DBGroups, nil)
	rep.FlashFraction = float64(lay.lsmBytes()) / float64(lay.lsmBytes()+lay.vlogBytes())
	for _, s := range setups {
		rep.Lines[s.Name] = fitLine(rep.Config.Ratios, rep.results(rows, s.Name), rep.Config.Reads)
	}
	ssd, hdd := rep.Lines["SSD"], rep.Lines["HDD"]
	rep.Costs = costs{SmallFlash: ssd.Small, LargeFlash: ssd.Large, SmallHDD: hdd.Small, LargeHDD: hdd.Large}
	return nil
}

// calibrate reruns the reads with the paper's software cost per get.
func (rep *Report) calibrate(progress io.Writer) error {
	c := rep.Config
	extra := time.Duration((paperCosts.SmallFlash - rep.Costs.SmallFlash) * float64(time.Microsecond))
	if extra <= 0 {
		return nil
	}
	c.CPUPerOp += extra
	rows, err := readAll(c, "cal. ", progress)
	rep.Calibrated, rep.CalibratedCPU = rows, c.CPUPerOp
	return err
}

// readAll runs every ratio on every setup over a database loaded in
// random key order.
func readAll(c Config, tag string, progress io.Writer) ([]readRow, error) {
	lay := newLayout(c, c.DBGroups, insertOrder(c.DBGroups, true, c.Seed+1))
	var rows []readRow
	for _, s := range setups {
		for _, ratio := range c.Ratios {
			r, err := simReads(c, s, lay, readSequence(c.Reads, c.DBGroups, ratio, c.Seed))
			if err != nil {
				return nil, err
			}
			fmt.Fprintf(progress, "%-8s read  ratio %-4d %8.0f ops/s %7.1f MB/s\n", tag+s.Name, ratio, r.OpsPerS, r.MBPerS)
			rows = append(rows, readRow{Setup: s.Name, Ratio: ratio, Result: r})
		}
	}
	return rows, nil
}

// results are the read results of setup, by ratio.
func (rep *Report) results(rows []readRow, setup string) []Result {
	var out []Result
	for _, r := range rows {
		if r.Setup == setup {
			out = append(out, r.Result)
		}
	}
	return out
}

// read returns the read result of setup at ratio.
func (rep *Report) read(setup string, ratio int) (Result, bool) { return find(rep.Reads, setup, ratio) }

// find returns the row of setup at ratio.
func find(rows []readRow, setup string, ratio int) (Result, bool) {
	for _, r := range rows {
		if r.Setup == setup && r.Ratio == ratio {
			return r.Result, true
		}
	}
	return Result{}, false
}
