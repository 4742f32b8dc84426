// Package app turns one Config into a running node: it opens every part in order, serves HTTP until its context ends, and closes the parts in reverse order.
package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/strata-media/strata/internal/httpapi"
	"github.com/strata-media/strata/internal/ident"
	"github.com/strata-media/strata/internal/media"
	"github.com/strata-media/strata/internal/media/demo"
	"github.com/strata-media/strata/internal/media/images"
	"github.com/strata-media/strata/internal/media/player"
	"github.com/strata-media/strata/internal/node/edge"
	"github.com/strata-media/strata/internal/node/engine"
	"github.com/strata-media/strata/internal/node/files"
	"github.com/strata-media/strata/internal/node/server"
	"github.com/strata-media/strata/internal/storage/device"
	"github.com/strata-media/strata/internal/storage/origin"
	"github.com/strata-media/strata/internal/wtrace"
)

// Options are how a node is run, as opposed to what it serves (Config).
type Options struct {
	// Logger receives every part's messages. Nil: slog.Default().
	Logger *slog.Logger
	// Drain is how long requests may finish on their own at shutdown.
	// Default 10 s.
	Drain time.Duration
	// Wait is how long, after Drain, the handlers of the connections
	// then closed may take to return (and capacity-tier reads to end)
	// before the devices under them close. Default 5 s.
	Wait time.Duration
	// Level, if set, is the level of Logger's handler: Reload sets it
	// when log_level changes. Nil: the log level needs a restart.
	Level *slog.LevelVar
	// WrapFlash, if set, wraps the segment cache's flash device (fault
	// injection, write checks).
	WrapFlash func(device.Device) device.Device
	// AccessOut receives the access log when Config.AccessLog is "-".
	// Nil: standard output.
	AccessOut io.Writer
	// GoLimit is the Go memory limit SetMemoryLimit set for this node
	// (strata serve): while the node serves, it lowers the limit by the
	// bytes of RAM's memory files (ram_sendfile), which are outside
	// Go's heap (followRAMFiles). 0: the limit is left alone (tests,
	// GOMEMLIMIT set, several nodes in one process).
	GoLimit int64
}

// EnsureDefaults fills zero fields with defaults and returns o.
func (o *Options) EnsureDefaults() *Options {
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.Drain == 0 {
		o.Drain = 10 * time.Second
	}
	if o.Wait == 0 {
		o.Wait = 5 * time.Second
	}
	return o
}

// A Node is a running strata node: its parts are open and its listener
// bound; Serve serves HTTP on it.
type Node struct {
	cfg   Config
	opts  Options
	log   *slog.Logger
	parts cleanup
	org   origin.Origin
	// titles is the directory or bucket of the titles within org.
	titles capacityOrigin
	flash  device.Device     // nil without flash
	busy   device.BusySource // nil without a utilization signal
	trace  *wtrace.Writer    // nil without --trace-writes
	eng    *engine.Engine
	health *server.Health
	api    *httpapi.API
	// originLatency times the capacity tier's reads.
	originLatency originLatency
	// history is what the dashboard plots, sampled while Serve runs.
	history *server.History
	ln      net.Listener
	access  *httpapi.AccessLog // nil without --access-log
	desc    Description

	// What Reload changes (reload.go).
	reloadMu sync.Mutex    // serializes Reload; guards live and token
	live     Config        // the configuration in force
	token    string        // the admin token in force
	edge     *edge.Handler // nil without upstreams
	files    *files.Tier
	guard    *signedGuard
	certs    *certStore // nil without TLS
}

// Open opens every part of the node cfg describes (cfg must have been
// resolved), in order: the data directory's lock, capacity tier, flash
// device, write trace, segment engine, HTTP modules (and the edge), image
// store, video ingest (and --demo's titles), whole-file tier, listener,
// debug listener. If one fails, those already
// open are closed in reverse order and its error is returned.
func Open(ctx context.Context, cfg Config, opts Options) (n *Node, err error) {
	opts.EnsureDefaults()
	n = &Node{cfg: cfg, opts: opts, log: opts.Logger, parts: cleanup{log: opts.Logger}}
	n.desc = Description{Data: cfg.Data, RAMBytes: int64(cfg.RAM), Memory: cfg.MemorySizing(), Policy: cfg.Policy}
	logMemory(opts.Logger, n.desc.Memory)
	defer func() {
		if err != nil {
			err = errors.Join(err, n.parts.close())
			n = nil
		}
	}()
	for _, open := range []func(context.Context) error{n.openLock, n.openAccessLog, n.openStorage, n.openEngine, n.openHTTP, n.openImages,
		n.openVideo, n.openFiles, n.openServing, n.openListeners} {
		if err := open(ctx); err != nil {
			return n, err
		}
	}
	n.desc.Engine = n.eng.Stats()
	return n, nil
}

// Description says what Open opened.
func (n *Node) Description() Description { return n.desc }

// Parts lists the node's open parts in opening order; Close closes them
// in the reverse order.
func (n *Node) Parts() []string { return n.parts.names() }

// Close stops capacity-tier reads and closes every part, last opened
// first. Call it after Serve has returned.
func (n *Node) Close() error { return n.parts.close() }

// openLock takes the data directory's lock (lockData), first, so that a
// second node on the directory opens nothing.
func (n *Node) openLock(context.Context) error {
	unlock, err := lockData(n.cfg.Data)
	if err != nil {
		return err
	}
	n.parts.push("data directory lock", unlock)
	return nil
}

// openStorage opens the capacity tier, the flash device and the write
// trace.
func (n *Node) openStorage(ctx context.Context) error {
	if err := os.MkdirAll(n.cfg.Capacity, 0o755); err != nil {
		return err // with an S3 origin, the image store's value log lives here
	}
	org, titles, cd, err := openCapacity(ctx, &n.cfg, n.log)
	if err != nil {
		return err
	}
	n.titles = titles
	n.desc.Capacity = cd
	if c, ok := org.(io.Closer); ok {
		n.parts.push("capacity tier", c.Close)
	}
	file, busy, fd, err := openFlash(&n.cfg, n.log)
	if err != nil {
		return err
	}
	n.desc.Flash = fd
	var dev device.Device // nil interface without flash
	if file != nil {
		n.parts.push("flash device", file.Close)
		dev = file
		if n.opts.WrapFlash != nil {
			dev = n.opts.WrapFlash(dev)
		}
	}
	trace, closeTrace, err := openTrace(n.cfg.TraceWrites)
	if err != nil {
		return err
	}
	n.parts.push("write trace", closeTrace)
	n.originLatency = newOriginLatency()
	n.org, n.flash, n.busy, n.trace = origin.Timed(org, n.originLatency.observe), dev, busy, trace
	return nil
}

// openEngine opens the segment engine over the flash device and the
// capacity tier.
func (n *Node) openEngine(context.Context) error {
	eng, err := engine.New(engineOptions(&n.cfg, n.busy, n.trace, n.log), n.flash, n.org)
	if err != nil {
		return err
	}
	n.eng = eng
	n.parts.push("segment engine", eng.Close)
	return nil
}

// openHTTP makes the API with the segment engine's modules and, in edge
// mode, the edge.
func (n *Node) openHTTP(context.Context) error {
	token, file, err := adminToken(&n.cfg)
	if err != nil {
		return err
	}
	n.desc.AdminTokenFile = file
	n.token = token
	n.api = httpapi.New(httpapi.Options{AdminToken: token, Logger: n.log, CORSOrigins: n.cfg.CORSOrigins})
	edge, err := n.openEdge()
	if err != nil {
		return err
	}
	vo := server.Options{Logger: n.log}
	var mods []httpapi.Module
	if edge != nil { // a nil *edge.Handler must not become a non-nil Fallback
		vo.Fallback = edge
		mods = append(mods, edge)
		n.api.SetFallback(edge) // whole files and images too: a local 404 asks the upstream
	}
	dash := server.NewDashboard(n.eng, n.org)
	n.history = dash.History()
	if edge != nil {
		n.history.SetEdge(func() server.EdgeSample { return edgeSample(edge) })
	}
	mods = append(mods, server.NewVideos(n.eng, n.org, vo), server.NewAdmin(n.eng, n.log), dash, n.originLatency.module())
	if m := s3Requests(n.titles); m != nil {
		mods = append(mods, m)
	}
	mods = append(mods, n.openHealth(), memoryStats(n.desc.Memory))
	return n.api.Mount(mods...)
}

// sampleHistory records the dashboard's samples, one now and one every
// server.HistoryInterval, until ctx ends or stop is called.
func (n *Node) sampleHistory(ctx context.Context) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	n.history.Sample(time.Now())
	go func() {
		defer close(done)
		tick := time.NewTicker(server.HistoryInterval)
		defer tick.Stop()
		for {
			select {
			case now := <-tick.C:
				n.history.Sample(now)
			case <-ctx.Done():
				return
			}
		}
	}()
	return func() { cancel(); <-done }
}

// openEdge opens the pull-through cache over the segment engine when
// upstreams are configured (nil otherwise); it closes before the engine.
func (n *Node) openEdge() (*edge.Handler, error) {
	if len(n.cfg.Upstreams) == 0 {
		return nil, nil
	}
	ups := edgeUpstreams(n.cfg.Upstreams)
	def, rules, err := n.cfg.Edge.Policies()
	if err != nil {
		return nil, err
	}
	h, err := edge.New(n.eng, edge.Options{Upstreams: ups, Cache: def.Cache, Logger: n.log.With("component", "edge"),
		Query: def.Query, QueryParams: def.QueryParams, Rules: rules, SliceSize: int64(n.cfg.Edge.SliceSize),
		FillMemory: int64(n.cfg.Edge.FillMemory), MaxRelays: n.cfg.Edge.MaxRelays, TagPurgeFile: filepath.Join(n.cfg.Data, TagPurgeFile)})
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrConfig, err)
	}
	n.parts.push("edge", h.Close)
	n.edge = h
	n.desc.Upstreams = n.cfg.Upstreams
	return h, nil
}

// openImages opens the image store and mounts it; large variants are
// cached by the segment engine. An edge node opens none unless told to
// (Config.ImagesOff); one that holds a store from before says so.
func (n *Node) openImages(ctx context.Context) error {
	c := &n.cfg.Images
	if n.desc.ImagesOff = n.cfg.ImagesOff(); n.desc.ImagesOff == ImagesOffEdge {
		if _, err := os.Stat(c.LSM); err == nil {
			n.log.Warn("an image store is in the data directory but an edge node opens it only with [images] enabled (--images-enabled): its images are not served",
				"lsm", c.LSM)
		}
	}
	st, d, err := OpenImagesWithOrigin(ctx, &n.cfg, n.log)
	if err != nil || st == nil {
		return err
	}
	n.desc.Images = d
	n.parts.push("image store", st.Close)
	return n.api.Mount(images.NewHandler(st, n.eng, images.HandlerOptions{MaxAge: c.MaxAge.Duration, BaseURL: c.BaseURL,
		TrustForwarded: c.TrustForwarded, IIIF: c.IIIFOptions(), Logger: n.log.With("component", "images")}))
}

// openVideo mounts video uploads and the watch page, after removing the
// staging directories of ingests that died, and with --demo starts
// generating the playable demo titles; closing stops that and waits.
func (n *Node) openVideo(context.Context) error {
	ing := media.NewIngester(n.cfg.Capacity, media.IngestOptions{
		Options:    media.Options{Logger: n.log},
		Invalidate: func(video string) error { return n.eng.Invalidate(ident.VideoPrefix(video)) },
		Published:  n.refreshCatalog,
	})
	if c, err := ing.CleanStale(); err != nil {
		return err
	} else if c > 0 {
		n.log.Info("removed the staging directories of interrupted ingests", "count", c)
	}
	if ids, err := ing.RecoverReplacements(); err != nil {
		return err
	} else if len(ids) > 0 {
		n.log.Info("invalidated the titles whose replacement was interrupted", "videos", ids)
	}
	mods := []httpapi.Module{player.Module}
	if n.cfg.Origin == "" {
		// Uploads package into the capacity directory; a bucket is
		// written by strata ingest video --origin.
		mods = append(mods, ing.Module(media.DefaultMaxUpload))
	}
	if err := n.api.Mount(mods...); err != nil {
		return err
	}
	if !n.cfg.Demo {
		return nil
	}
	// The generation outlives Open's context: it runs until Close.
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { demo.Seed(ctx, ing, n.cfg.Capacity, n.log) })
	n.parts.push("demo titles", func() error { cancel(); wg.Wait(); return nil })
	return nil
}

// refreshCatalog rescans the titles' catalog after an upload published
// one, so that GET /videos lists it as soon as the upload is answered
// rather than after the catalog TTL.
func (n *Node) refreshCatalog(video string) {
	if err := n.titles.Refresh(context.Background()); err != nil {
		n.log.Warn("refreshing the catalog after an upload", "video", video, "err", err)
	}
}

// openFiles opens the whole-file tier and mounts it.
func (n *Node) openFiles(ctx context.Context) error {
	t, dev, d, err := openFiles(ctx, &n.cfg, n.busy, n.trace, n.log)
	if err != nil {
		return err
	}
	n.desc.Files = d
	n.files = t
	if dev != nil {
		n.parts.push("whole-file flash device", dev.Close)
	}
	n.parts.push("whole-file tier", t.Close)
	return n.api.Mount(t)
}

// openListeners binds the HTTP listener and the debug one. Before the
// listener closes, capacity-tier reads are stopped: they can outlive
// their requests, and the stores they read close next.
func (n *Node) openListeners(context.Context) error {
	n.parts.push("capacity-tier reads", func() error {
		if !n.eng.StopLoads(n.opts.Wait) {
			n.log.Warn("capacity-tier reads still running at shutdown", "waited", n.opts.Wait)
		}
		return nil
	})
	ln, err := net.Listen("tcp", n.cfg.Listen)
	if err != nil {
		return err
	}
	n.ln = ln
	n.desc.URL = "http://" + ln.Addr().String()
	if n.certs != nil {
		n.desc.URL = "https://" + ln.Addr().String()
	}
	n.parts.push("listener", func() error {
		if err := ln.Close(); !errors.Is(err, net.ErrClosed) {
			return err
		}
		return nil
	})
	if n.cfg.DebugAddr == "" {
		return nil
	}
	stop, err := servePprof(n.cfg.DebugAddr, n.log)
	if err != nil {
		// As before: profiles are a debugging aid, not worth failing for.
		n.log.Warn("debug listener", "addr", n.cfg.DebugAddr, "err", err)
		return nil
	}
	n.desc.DebugAddr = n.cfg.DebugAddr
	n.parts.push("debug listener", stop)
	return nil
}

// Serve serves the API on the node's listener until ctx is done, then
// shuts down gracefully (see Options.Drain and Options.Wait). Close the
// node after it returns.
func (n *Node) Serve(ctx context.Context) error {
	stop := n.sampleHistory(ctx)
	defer stop()
	defer n.followRAMFiles(ctx)()
	defer context.AfterFunc(ctx, n.health.Drain)()
	return serveHTTP(ctx, n.ln, n.handler(), n.front, n.opts, n.cfg.Timeouts, n.transport(), n.log)
}
