package main

import (
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/strata-media/strata/internal/lab/sim/mrissim"
	"github.com/strata-media/strata/internal/progress"
)

// runSimMRIS runs the MRIS benchmark (§4.3-4.4): the three device setups
// of Table 1 in virtual time, and the same workload through the image
// store's Badger configuration on real directories. Flags follow strata
// sim's: progress on stderr, the report in --out, JSON on stdout with
// --json.
func runSimMRIS(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("sim mris", "[--scale small|paper] [--out DIR] [--json] [flags]", stderr)
	var c mrissim.Config
	fs.StringVar(&c.Scale, "scale", "small", "small (CI, seconds) or paper (MRIS: 10,000 groups written, 10,000 reads over 100,000 groups)")
	out := fs.String("out", "", "directory for report.md, report.json and the SVG figures (default sim-mris-<scale>)")
	asJSON := fs.Bool("json", false, "print the results as JSON on stdout")
	noReal := fs.Bool("no-real", false, "skip the run on real directories")
	fs.StringVar(&c.RealDir, "real-dir", "", "where the real run makes its two directories (default the system temporary directory)")
	fs.BoolVar(&c.RealSync, "real-sync", false, "fsync every real insert, as the image store does (MRIS's LevelDB benchmark did not)")
	fs.StringVar(&c.SSD, "ssd", mrissim.DefaultSSD, "SSD model: "+strings.Join(mrissim.SSDNames(), ", "))
	fs.StringVar(&c.HDD, "hdd", mrissim.DefaultHDD, "HDD model preset (see internal/storage/model)")
	fs.DurationVar(&c.CPUPerOp, "cpu-per-op", 20*time.Microsecond, "simulated software time of one get or put")
	fs.Uint64Var(&c.Seed, "seed", 1, "seed of the key orders and the reads")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *out == "" {
		*out = "sim-mris-" + c.Scale
	}
	c.Real = !*noReal
	rep, err := mrissim.Run(c, progress.Writer(progress.To(stderr)))
	if err != nil {
		return err
	}
	if err := rep.WriteFiles(*out, strings.TrimSpace("strata-lab sim mris "+strings.Join(args, " "))); err != nil {
		return err
	}
	fmt.Fprintf(stderr, "report   %s\n", filepath.Join(*out, "report.md"))
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(rep)
	}
	return nil
}
