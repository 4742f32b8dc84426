package app

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/strata-media/strata/internal/workload"
)

// SyntheticLibrary describes the synthetic titles a data directory serves
// beside its capacity directory, as <data>/synthetic.json holds it.
type SyntheticLibrary = workload.Library

// DemoLibrary is --demo's library: 48 titles of the DASH dataset's sources
// (FlashStream Table 4), five renditions each, at most 10 minutes: about
// 14 GiB, seven times the default flash cache and 55 times the default RAM,
// the proportions of FlashStream's 545 GB library over 75 GB of flash.
var DemoLibrary = SyntheticLibrary{Titles: 48, AllRenditions: true, MaxLengthS: 600, SegmentDurationS: 10, Seed: 1, Prefix: "demo-"}

// syntheticPath is where a data directory describes its synthetic library.
func syntheticPath(data string) string { return filepath.Join(data, "synthetic.json") }

// readSynthetic reads <data>/synthetic.json, writing DemoLibrary there
// first when demo is set and it does not exist.
func readSynthetic(data string, demo bool) (SyntheticLibrary, bool, error) {
	p := syntheticPath(data)
	if demo {
		if _, err := os.Stat(p); errors.Is(err, fs.ErrNotExist) {
			b, _ := json.MarshalIndent(DemoLibrary, "", "  ")
			if err := os.WriteFile(p, append(b, '\n'), 0o644); err != nil {
				return SyntheticLibrary{}, false, err
			}
		}
	}
	b, err := os.ReadFile(p)
	if errors.Is(err, fs.ErrNotExist) {
		return SyntheticLibrary{}, false, nil
	}
	if err != nil {
		return SyntheticLibrary{}, false, err
	}
	var lib SyntheticLibrary
	if err := json.Unmarshal(b, &lib); err != nil || lib.Titles <= 0 {
		return lib, false, fmt.Errorf("%s: not a synthetic library description: %v", p, err)
	}
	return lib, true, nil
}
