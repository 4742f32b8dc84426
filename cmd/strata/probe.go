package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"

	"github.com/strata-media/strata/internal/bytesize"
	"github.com/strata-media/strata/internal/storage/device"
	"github.com/strata-media/strata/internal/storage/model"
	"github.com/strata-media/strata/internal/tools/probe"
)

func runProbe(args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] != "blocksize" {
		fmt.Fprintln(stderr, "Usage: strata probe blocksize (--model NAME | --device PATH) [flags]")
		return fmt.Errorf("%w: the only probe is blocksize", errUsage)
	}
	return runProbeBlockSize(args[1:], stdout, stderr)
}

type probeFlags struct {
	model, dev        string
	region, budget    bytesize.Value
	pass              bytesize.Value
	minSize, maxSize  bytesize.Value
	count             int
	threshold         float64
	asJSON, yes, list bool
	seed              uint64
}

func runProbeBlockSize(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("probe blocksize", "(--model NAME | --device PATH) [flags]", stderr)
	f := probeFlags{minSize: 4 << 10, maxSize: 128 << 20, pass: 256 << 20, count: 640, threshold: 0.1}
	fs.StringVar(&f.model, "model", "", "probe a device model (see --list)")
	fs.StringVar(&f.dev, "device", "", "probe a real file or block device with O_DIRECT writes: ITS CONTENT IS OVERWRITTEN")
	fs.BoolVar(&f.list, "list", false, "list the device models")
	fs.Var(&f.minSize, "min-size", "smallest request size")
	fs.Var(&f.maxSize, "max-size", "largest request size")
	fs.IntVar(&f.count, "count", f.count, "writes per pattern and size (FlashStream: 640)")
	fs.Var(&f.pass, "pass-bytes", "cap on the bytes of one pattern's pass at a size (a real device; 0 = count writes always)")
	fs.Var(&f.region, "region", "bytes of the device probed, from offset 0 (default: all)")
	fs.Var(&f.budget, "budget", "cap on all bytes written, fill included (0 = none)")
	fs.Float64Var(&f.threshold, "threshold", f.threshold, "KL divergence under which random writes count as sequential")
	fs.Uint64Var(&f.seed, "seed", 1, "seed of the random offsets")
	fs.BoolVar(&f.asJSON, "json", false, "print the result as JSON")
	fs.BoolVar(&f.yes, "yes", false, "with --device: do not ask before overwriting")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if f.list {
		for _, p := range model.Presets() {
			fmt.Fprintf(stdout, "%-24s %s\n", p.Name, p.Summary)
		}
		return nil
	}
	target, closeFn, err := f.target(stderr)
	if err != nil {
		return err
	}
	defer closeFn()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	res, err := probe.Run(ctx, target, f.options(stderr))
	if err != nil {
		return err
	}
	return printProbe(stdout, f, res)
}

func (f *probeFlags) target(stderr io.Writer) (probe.Target, func(), error) {
	switch {
	case (f.model == "") == (f.dev == ""):
		return nil, nil, fmt.Errorf("%w: give exactly one of --model and --device", errUsage)
	case f.model != "":
		m, err := model.NewPreset(f.model)
		if err != nil {
			return nil, nil, fmt.Errorf("%w: %v (see --list)", errUsage, err)
		}
		return probe.ModelTarget(m), func() {}, nil
	}
	if !f.yes {
		return nil, nil, fmt.Errorf("%w: --device overwrites %s; add --yes to confirm", errUsage, f.dev)
	}
	d, err := device.OpenFile(f.dev, device.FileOptions{Size: int64(f.region), Logger: slog.New(slog.NewTextHandler(stderr, nil))})
	if err != nil {
		return nil, nil, err
	}
	return probe.DeviceTarget(d), func() { d.Close() }, nil
}

func (f *probeFlags) options(stderr io.Writer) probe.Options {
	o := probe.Options{Count: f.count, Threshold: f.threshold, Seed: f.seed,
		Region: int64(f.region), Budget: int64(f.budget)}
	if f.dev != "" {
		o.PassBytes = int64(f.pass)
	}
	for s := int64(f.minSize); s <= int64(f.maxSize); s *= 2 {
		o.Sizes = append(o.Sizes, s)
	}
	o.Progress = func(p probe.Progress) {
		switch p.Phase {
		case "fill":
			fmt.Fprintln(stderr, "probe: preconditioning (filling the region)")
		case "done":
			fmt.Fprintf(stderr, "probe: %9s  KL %.3f  seq p50 %v  random p50 %v\n", bytesize.Format(p.Size),
				p.Result.KL, p.Result.Sequential.P50, p.Result.Random.P50)
		}
	}
	return o
}

func printProbe(w io.Writer, f probeFlags, r probe.Result) error {
	if f.asJSON {
		type size struct {
			Size      int64   `json:"size"`
			KL        float64 `json:"kl"`
			SeqP50Ms  float64 `json:"seq_p50_ms"`
			RandP50Ms float64 `json:"random_p50_ms"`
			SeqP99Ms  float64 `json:"seq_p99_ms"`
			RandP99Ms float64 `json:"random_p99_ms"`
		}
		out := struct {
			Optimal   int64   `json:"optimal_block_size"`
			Threshold float64 `json:"threshold"`
			Sizes     []size  `json:"sizes"`
			Bytes     int64   `json:"bytes_written"`
			Truncated bool    `json:"truncated"`
		}{Optimal: r.OptimalBlockSize, Threshold: f.threshold, Bytes: r.BytesWritten, Truncated: r.Truncated}
		for _, s := range r.Sizes {
			out.Sizes = append(out.Sizes, size{s.Size, s.KL, ms(s.Sequential.P50), ms(s.Random.P50), ms(s.Sequential.P99), ms(s.Random.P99)})
		}
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(out)
	}
	fmt.Fprintf(w, "%10s %9s %12s %12s %12s %12s\n", "size", "KL", "seq p50", "random p50", "seq p99", "random p99")
	for _, s := range r.Sizes {
		fmt.Fprintf(w, "%10s %9.3f %12v %12v %12v %12v\n", bytesize.Format(s.Size), s.KL,
			s.Sequential.P50, s.Random.P50, s.Sequential.P99, s.Random.P99)
	}
	if r.OptimalBlockSize == 0 {
		fmt.Fprintf(w, "no size reached KL < %.2f: the optimal block size is above %s\n", f.threshold, bytesize.Format(int64(f.maxSize)))
		return nil
	}
	fmt.Fprintf(w, "optimal block size: %s (first size with KL < %.2f); use it with strata serve --block-size %s\n",
		bytesize.Format(r.OptimalBlockSize), f.threshold, bytesize.Compact(r.OptimalBlockSize))
	return nil
}

func ms(d interface{ Seconds() float64 }) float64 { return d.Seconds() * 1000 }
