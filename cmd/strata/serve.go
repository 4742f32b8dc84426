package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/BurntSushi/toml"

	"github.com/strata-media/strata/internal/bytesize"
	"github.com/strata-media/strata/internal/core/tier"
	"github.com/strata-media/strata/internal/node/engine"
	"github.com/strata-media/strata/internal/node/httpapi"
	"github.com/strata-media/strata/internal/node/server"
	"github.com/strata-media/strata/internal/storage/device"
	"github.com/strata-media/strata/internal/storage/origin"
	"github.com/strata-media/strata/internal/workload"
	"github.com/strata-media/strata/internal/wtrace"
)

// serveConfig is strata serve's configuration: defaults, then a TOML
// config file (--config), then flags.
type serveConfig struct {
	Data          string         `toml:"data"`
	Listen        string         `toml:"listen"`
	RAM           bytesize.Value `toml:"ram"`
	Flash         string         `toml:"flash"`
	FlashSize     bytesize.Value `toml:"flash_size"`
	NoFlash       bool           `toml:"no_flash"`
	BlockSize     bytesize.Value `toml:"block_size"`
	Policy        string         `toml:"policy"`
	MonitorRoom   float64        `toml:"monitor_room"`
	Ring          bytesize.Value `toml:"ring"`
	Threshold     float64        `toml:"threshold"`
	Epoch         duration       `toml:"epoch"`
	MonitorPeriod duration       `toml:"monitor_period"`
	Capacity      string         `toml:"capacity"`
	AdminToken    string         `toml:"admin_token"`
	Demo          bool           `toml:"demo"`
	LogLevel      string         `toml:"log_level"`
	DebugAddr     string         `toml:"debug_addr"`
	TraceWrites   string         `toml:"trace_writes"`
	Endurance     int            `toml:"flash_endurance"`
	Images        imagesConfig   `toml:"images"`
	Files         filesConfig    `toml:"files"`

	// Test hooks: wrapFlash wraps the flash device, onListen receives the
	// server's URL.
	wrapFlash func(device.Device) device.Device
	onListen  func(url string)
}

// duration is a time.Duration usable in TOML ("1s", "100ms").
type duration struct{ time.Duration }

func (d *duration) UnmarshalText(b []byte) (err error) {
	d.Duration, err = time.ParseDuration(string(b))
	return err
}

func defaultServeConfig() serveConfig {
	return serveConfig{
		Data:          "./strata-data",
		Listen:        "127.0.0.1:8080",
		RAM:           256 << 20,
		FlashSize:     2 << 30,
		BlockSize:     tier.DefaultBlockSize,
		Policy:        "lru",
		MonitorRoom:   tier.DefaultMonitorRoom,
		Threshold:     tier.DefaultThreshold,
		Epoch:         duration{time.Second},
		MonitorPeriod: duration{100 * time.Millisecond},
		LogLevel:      "info",
		Endurance:     3000,
		Images:        defaultImagesConfig(),
		Files:         defaultFilesConfig(),
	}
}

func (c *serveConfig) flags(fs *flag.FlagSet) {
	fs.StringVar(&c.Data, "data", c.Data, "data directory: flash cache file, capacity tier, admin token")
	fs.StringVar(&c.Listen, "listen", c.Listen, "HTTP listen address")
	fs.Var(&c.RAM, "ram", "RAM buffer pool budget (e.g. 256MiB)")
	fs.StringVar(&c.Flash, "flash", c.Flash, "flash cache file or block device (default <data>/flash.cache)")
	fs.Var(&c.FlashSize, "flash-size", "size of the flash cache file, created sparse (ignored for block devices)")
	fs.BoolVar(&c.NoFlash, "no-flash", c.NoFlash, "run without a flash tier")
	fs.Var(&c.BlockSize, "block-size", "flash block size: the device's optimal write size (see strata probe)")
	fs.StringVar(&c.Policy, "policy", c.Policy, "flash block replacement: lru, lfu-mean, lfu-median or fifo")
	fs.Float64Var(&c.MonitorRoom, "monitor-room", c.MonitorRoom, "fraction of RAM segments, from the tail, copied towards flash")
	fs.Var(&c.Ring, "ring", "ring buffer between RAM and flash (default two blocks)")
	fs.Float64Var(&c.Threshold, "threshold", c.Threshold, "flash utilization above which caching writes wait (0-1)")
	fs.DurationVar(&c.Epoch.Duration, "epoch", c.Epoch.Duration, "utilization epoch")
	fs.DurationVar(&c.MonitorPeriod.Duration, "monitor-period", c.MonitorPeriod.Duration, "RAM monitor period")
	fs.StringVar(&c.Capacity, "capacity", c.Capacity, "capacity tier directory (default <data>/videos)")
	fs.StringVar(&c.AdminToken, "admin-token", c.AdminToken, "admin bearer token (default: generated into <data>/admin.token)")
	fs.BoolVar(&c.Demo, "demo", c.Demo, "seed the data directory with a synthetic library larger than RAM and flash")
	fs.StringVar(&c.LogLevel, "log-level", c.LogLevel, "debug, info, warn or error")
	fs.StringVar(&c.TraceWrites, "trace-writes", c.TraceWrites, "record every flash write (time, offset, length, lifetime class, stream) to this file, for strata sim streams")
	fs.IntVar(&c.Endurance, "flash-endurance", c.Endurance, "rated program/erase cycles of the flash, for the projected lifetime in /stats")
	fs.StringVar(&c.DebugAddr, "debug-addr", c.DebugAddr, "serve Go's pprof profiles on this address (e.g. 127.0.0.1:6060); off by default")
	c.Images.flags(fs)
	c.Files.flags(fs)
}

// configPath finds --config in args before the other flags are parsed, so
// that the file's values become the flags' defaults.
func configPath(args []string) string {
	for i, a := range args {
		name, val, hasVal := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if !strings.HasPrefix(a, "-") || name != "config" {
			continue
		}
		if hasVal {
			return val
		}
		if i+1 < len(args) {
			return args[i+1]
		}
	}
	return ""
}

func loadServeConfig(args []string, stderr io.Writer) (serveConfig, error) {
	cfg := defaultServeConfig()
	if p := configPath(args); p != "" {
		md, err := toml.DecodeFile(p, &cfg)
		if err != nil {
			return cfg, fmt.Errorf("%w: config %s: %v", errUsage, p, err)
		}
		if und := md.Undecoded(); len(und) > 0 {
			return cfg, fmt.Errorf("%w: config %s: unknown keys %v", errUsage, p, und)
		}
	}
	fs := newFlags("serve", "[--config FILE] [flags]", stderr)
	fs.String("config", "", "TOML config file; flags override it")
	cfg.flags(fs)
	if err := parseFlags(fs, args); err != nil {
		return cfg, err
	}
	return cfg, cfg.validate()
}

func (c *serveConfig) validate() error {
	if _, err := tier.ParseBlockPolicy(c.Policy); err != nil {
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	switch {
	case c.MonitorRoom <= 0 || c.MonitorRoom > 1:
		return fmt.Errorf("%w: --monitor-room %v must be in (0, 1]", errUsage, c.MonitorRoom)
	case c.Threshold <= 0:
		return fmt.Errorf("%w: --threshold %v must be positive", errUsage, c.Threshold)
	case c.RAM <= 0:
		return fmt.Errorf("%w: --ram must be positive", errUsage)
	}
	if c.Flash == "" {
		c.Flash = filepath.Join(c.Data, "flash.cache")
	}
	if c.Capacity == "" {
		c.Capacity = filepath.Join(c.Data, "videos")
	}
	c.Files.resolve(c.Data)
	return c.Images.resolve(c.Data, c.Flash, c.Capacity)
}

func runServe(args []string, stdout, stderr io.Writer) error {
	cfg, err := loadServeConfig(args, stderr)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return serve(ctx, cfg, stdout, stderr)
}

// serve runs the server until ctx is done, then shuts down gracefully.
func serve(ctx context.Context, cfg serveConfig, stdout, stderr io.Writer) error {
	log := newLogger(stderr, cfg.LogLevel)
	if err := os.MkdirAll(cfg.Capacity, 0o755); err != nil {
		return err
	}
	token, err := adminToken(cfg)
	if err != nil {
		return err
	}
	org, orgDesc, err := openCapacity(cfg, log)
	if err != nil {
		return err
	}
	if c, ok := org.(io.Closer); ok {
		defer c.Close()
	}
	file, busy, flashDesc, err := openFlash(cfg, log)
	if err != nil {
		return err
	}
	var dev device.Device // nil interface without flash
	if file != nil {
		defer file.Close()
		dev = file
		if cfg.wrapFlash != nil {
			dev = cfg.wrapFlash(dev)
		}
	}
	trace, closeTrace, err := openTrace(cfg.TraceWrites)
	if err != nil {
		return err
	}
	defer closeTrace()
	eopts := engineOptions(cfg, busy, log)
	eopts.Trace, eopts.EnduranceCycles = trace, cfg.Endurance
	eng, err := engine.New(eopts, dev, org)
	if err != nil {
		return err
	}
	defer eng.Close()
	srv := httpapi.New(httpapi.Options{AdminToken: token, Logger: log})
	if err := srv.Mount(server.NewVideos(eng, org, server.Options{Logger: log}), server.NewAdmin(eng, log), server.NewDashboard(eng, org)); err != nil {
		return err
	}
	imgs, imgDesc, err := openImages(cfg.Images, log)
	if err != nil {
		return err
	}
	defer imgs.Close()
	if err := mountImages(srv, imgs, eng, cfg.Images, log); err != nil {
		return err
	}
	stopVideo, err := setupVideo(ctx, cfg, srv, eng, log)
	if err != nil {
		return err
	}
	defer stopVideo()
	ft, closeFiles, filesDesc, err := openFiles(cfg, busy, trace, log)
	if err != nil {
		return err
	}
	defer closeFiles()
	if err := srv.Mount(ft); err != nil {
		return err
	}
	ln, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		return err
	}
	if cfg.DebugAddr != "" {
		go servePprof(cfg.DebugAddr, log)
	}
	url := "http://" + ln.Addr().String()
	printStart(stdout, cfg, orgDesc, flashDesc, imgDesc, filesDesc, eng.Stats(), url)
	if cfg.onListen != nil {
		cfg.onListen(url)
	}
	err = runHTTP(ctx, ln, srv.Handler(), log)
	// Capacity-tier reads can outlive their requests; the stores they
	// read close next.
	if !eng.StopLoads(shutdownWait) {
		log.Warn("capacity-tier reads still running at shutdown", "waited", shutdownWait)
	}
	return err
}

func newLogger(w io.Writer, level string) *slog.Logger {
	var l slog.Level
	if err := l.UnmarshalText([]byte(level)); err != nil {
		l = slog.LevelInfo
	}
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: l}))
}

func engineOptions(cfg serveConfig, busy device.BusySource, log *slog.Logger) engine.Options {
	policy, _ := tier.ParseBlockPolicy(cfg.Policy)
	return engine.Options{
		Tier: tier.Options{
			RAMBytes: int64(cfg.RAM), BlockSize: int64(cfg.BlockSize), BlockPolicy: policy,
			MonitorRoom: cfg.MonitorRoom, RingBytes: int64(cfg.Ring),
		},
		MonitorPeriod: cfg.MonitorPeriod.Duration,
		Epoch:         cfg.Epoch.Duration,
		Threshold:     cfg.Threshold,
		Busy:          busy,
		Logger:        log,
	}
}

// adminToken returns the configured token, or the one in <data>/admin.token,
// generated with 0600 permissions at first start.
func adminToken(cfg serveConfig) (string, error) {
	if cfg.AdminToken != "" {
		return cfg.AdminToken, nil
	}
	p := filepath.Join(cfg.Data, "admin.token")
	b, err := os.ReadFile(p)
	if err == nil && len(strings.TrimSpace(string(b))) > 0 {
		return strings.TrimSpace(string(b)), nil
	}
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return "", err
	}
	var raw [24]byte
	if _, err := rand.Read(raw[:]); err != nil {
		return "", err
	}
	tok := hex.EncodeToString(raw[:])
	if err := os.WriteFile(p, []byte(tok+"\n"), 0o600); err != nil {
		return "", fmt.Errorf("writing the admin token: %w", err)
	}
	return tok, nil
}

// openFlash opens the flash cache device and its utilization source.
func openFlash(cfg serveConfig, log *slog.Logger) (*device.File, device.BusySource, string, error) {
	if cfg.NoFlash {
		return nil, nil, "none (--no-flash)", nil
	}
	dev, err := device.OpenFile(cfg.Flash, device.FileOptions{Size: int64(cfg.FlashSize), Logger: log})
	if err != nil {
		return nil, nil, "", err
	}
	desc := fmt.Sprintf("%s (%s", cfg.Flash, bytesize.Format(dev.Size()))
	if !dev.IsBlockDevice() {
		desc += " file"
	}
	if dev.Direct() {
		desc += ", O_DIRECT"
	}
	desc += ")"
	dev.SetLifetime(device.LifetimeMedium)
	desc += "\n             write hint: " + dev.HintReport()
	busy, err := device.NewDiskStats(cfg.Flash)
	if err != nil {
		log.Warn("no utilization signal for the flash device; admission sees 0%", "err", err)
		return dev, nil, desc + "\n             utilization: unavailable (" + err.Error() + ")", nil
	}
	_, streams := device.WriteStreams("", busy.Name())
	return dev, busy, desc + "\n             utilization: /dev/" + busy.Name() + " io_ticks\n             " + streams, nil
}

// openTrace opens the write trace file, if one is configured.
func openTrace(path string) (*wtrace.Writer, func(), error) {
	if path == "" {
		return nil, func() {}, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, nil, fmt.Errorf("--trace-writes: %w", err)
	}
	w := wtrace.NewWriter(f, time.Now())
	return w, func() { w.Flush(); f.Close() }, nil
}

// Shutdown grace periods: how long requests may finish on their own, and
// then how long handlers of the connections force-closed after that may
// take to return before the devices under them are closed.
var (
	shutdownDrain = 10 * time.Second
	shutdownWait  = 5 * time.Second
)

// runHTTP serves until ctx is done, then drains requests for up to
// shutdownDrain. Connections still busy then (long whole-file streams) are
// closed, and it waits up to shutdownWait for their handlers to return, so
// that the caller closes the engine and devices only under handlers that
// have finished.
func runHTTP(ctx context.Context, ln net.Listener, h http.Handler, log *slog.Logger) error {
	var inflight atomic.Int64 // handlers running
	hs := &http.Server{
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			inflight.Add(1)
			defer inflight.Add(-1)
			h.ServeHTTP(w, r)
		}),
		// Headers must arrive promptly (slow-header clients hold nothing
		// longer than this). Bodies have no overall limit: only uploads
		// have them, behind the bearer token, and they take as long as
		// their size needs. A response has 5 minutes, except whole-file
		// streams, which move their deadline on while the client reads.
		ReadHeaderTimeout: 10 * time.Second,
		WriteTimeout:      5 * time.Minute,
		IdleTimeout:       2 * time.Minute,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err := <-errc:
		// The listener failed: the connections already open still have
		// handlers running over the tiers the caller closes next.
		hs.Close()
		if waitHandlers(&inflight, log) != nil {
			return fmt.Errorf("serving: %w (and handlers still running)", err)
		}
		return err
	case <-ctx.Done():
	}
	log.Info("shutting down")
	sctx, cancel := context.WithTimeout(context.Background(), shutdownDrain)
	defer cancel()
	if err := hs.Shutdown(sctx); err == nil {
		return nil
	}
	log.Warn("requests still running after the drain period; closing their connections", "drain", shutdownDrain)
	hs.Close()
	return waitHandlers(&inflight, log)
}

// waitHandlers waits up to shutdownWait for the handlers counted by
// inflight to return. It polls a counter rather than waiting on a
// WaitGroup, as a handler may still be starting on a connection accepted
// just before the close.
func waitHandlers(inflight *atomic.Int64, log *slog.Logger) error {
	for deadline := time.Now().Add(shutdownWait); inflight.Load() > 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			n := inflight.Load()
			log.Warn("handlers still running; closing the tiers under them", "handlers", n, "waited", shutdownWait)
			return fmt.Errorf("shutdown: %d handlers still running after %v", n, shutdownDrain+shutdownWait)
		}
	}
	return nil
}

func printStart(w io.Writer, cfg serveConfig, orgDesc, flashDesc, imgDesc, filesDesc string, st engine.Stats, url string) {
	fmt.Fprintf(w, "strata serve %s\n", Version)
	fmt.Fprintf(w, "  data       %s\n", cfg.Data)
	fmt.Fprintf(w, "  ram        %s\n", bytesize.Format(int64(cfg.RAM)))
	fmt.Fprintf(w, "  flash      %s\n", flashDesc)
	if st.SSD.Enabled {
		fmt.Fprintf(w, "             %d blocks of %s, policy %s; recovered %d segments (%s)\n",
			st.SSD.Blocks, bytesize.Format(st.SSD.BlockSize), cfg.Policy, st.SSD.RecoveredSegments, bytesize.Format(st.SSD.RecoveredBytes))
	}
	fmt.Fprintf(w, "  capacity   %s\n", orgDesc)
	fmt.Fprintf(w, "  images     %s\n", imgDesc)
	fmt.Fprintf(w, "  files      %s\n", filesDesc)
	fmt.Fprintf(w, "  admin      bearer token %s\n", tokenSource(cfg))
	fmt.Fprintf(w, "  listening  %s\n", url)
	fmt.Fprintf(w, "  try        curl %s/videos\n", url)
	fmt.Fprintf(w, "  watch      %s/watch\n", url)
}

func tokenSource(cfg serveConfig) string {
	if cfg.AdminToken != "" {
		return "from the configuration"
	}
	return "in " + filepath.Join(cfg.Data, "admin.token")
}

// syntheticLibrary describes the synthetic titles a data directory serves
// beside its capacity directory; --demo writes it to <data>/synthetic.json.
type syntheticLibrary struct {
	Titles           int     `json:"titles"`
	AllRenditions    bool    `json:"all_renditions"`
	MaxLengthS       float64 `json:"max_length_s"`
	SegmentDurationS float64 `json:"segment_duration_s"`
	Seed             uint64  `json:"seed"`
	Prefix           string  `json:"prefix"`
}

// demoLibrary is --demo's library: 48 titles of the DASH dataset's sources
// (FlashStream Table 4), five renditions each, at most 10 minutes: about
// 14 GiB, seven times the default flash cache and 55 times the default RAM,
// the proportions of FlashStream's 545 GB library over 75 GB of flash.
var demoLibrary = syntheticLibrary{Titles: 48, AllRenditions: true, MaxLengthS: 600, SegmentDurationS: 10, Seed: 1, Prefix: "demo-"}

func (l syntheticLibrary) dataset() *workload.Dataset {
	return workload.NewDataset(workload.DatasetOptions{
		Titles: l.Titles, AllRenditions: l.AllRenditions, Seed: l.Seed, Prefix: l.Prefix,
		MaxLength:       time.Duration(l.MaxLengthS * float64(time.Second)),
		SegmentDuration: time.Duration(l.SegmentDurationS * float64(time.Second)),
	})
}

// openCapacity opens the capacity tier: the directory, and the synthetic
// library if the data directory has one (seeded by --demo).
func openCapacity(cfg serveConfig, log *slog.Logger) (origin.Origin, string, error) {
	dir, err := origin.NewDir(cfg.Capacity, origin.DirOptions{Logger: log})
	if err != nil {
		return nil, "", err
	}
	titles, err := dir.Catalog(context.Background())
	if err != nil {
		dir.Close()
		return nil, "", err
	}
	desc := fmt.Sprintf("%s (directory, %d titles)", cfg.Capacity, len(titles))
	lib, ok, err := syntheticFor(cfg)
	if err != nil {
		dir.Close()
		return nil, "", err
	}
	if !ok {
		return dir, desc, nil
	}
	ds := lib.dataset()
	syn, err := origin.NewSynthetic(ds, origin.SyntheticOptions{Seed: lib.Seed})
	if err != nil {
		dir.Close()
		return nil, "", err
	}
	desc += fmt.Sprintf("\n             + synthetic library: %d titles, %s (%s)",
		len(ds.Titles), bytesize.Format(ds.TotalBytes()), filepath.Join(cfg.Data, "synthetic.json"))
	return origin.NewMulti(dir, syn), desc, nil
}

// syntheticFor reads <data>/synthetic.json, writing the demo library there
// first with --demo.
func syntheticFor(cfg serveConfig) (syntheticLibrary, bool, error) {
	p := filepath.Join(cfg.Data, "synthetic.json")
	if cfg.Demo {
		if _, err := os.Stat(p); errors.Is(err, fs.ErrNotExist) {
			b, _ := json.MarshalIndent(demoLibrary, "", "  ")
			if err := os.WriteFile(p, append(b, '\n'), 0o644); err != nil {
				return syntheticLibrary{}, false, err
			}
		}
	}
	b, err := os.ReadFile(p)
	if errors.Is(err, fs.ErrNotExist) {
		return syntheticLibrary{}, false, nil
	}
	if err != nil {
		return syntheticLibrary{}, false, err
	}
	var lib syntheticLibrary
	if err := json.Unmarshal(b, &lib); err != nil || lib.Titles <= 0 {
		return lib, false, fmt.Errorf("%s: not a synthetic library description: %v", p, err)
	}
	return lib, true, nil
}

// servePprof serves net/http/pprof's handlers on their own listener, so
// they are never exposed on the public address.
func servePprof(addr string, log *slog.Logger) {
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	if err := http.ListenAndServe(addr, mux); err != nil {
		log.Warn("debug listener", "addr", addr, "err", err)
	}
}
