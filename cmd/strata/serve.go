package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"regexp"
	"strings"
	"syscall"

	"github.com/strata-media/strata/internal/banner"
	"github.com/strata-media/strata/internal/httpapi"
	"github.com/strata-media/strata/internal/node/app"
)

// serveFlags registers strata serve's flags on fs, their defaults c's
// values (app.DefaultConfig, then the config file).
func serveFlags(fs *flag.FlagSet, c *app.Config) {
	fs.StringVar(&c.Data, "data", c.Data, "data directory: flash cache file, capacity tier, admin token")
	fs.StringVar(&c.Listen, "listen", c.Listen, "HTTP listen address")
	fs.Var(&c.RAM, "ram", "RAM buffer pool budget (e.g. 256MiB); 0: what --memory leaves after the rest of the node, 256MiB without a memory budget")
	fs.StringVar(&c.Memory, "memory", c.Memory, "the node's memory budget (e.g. 640MiB), which sizes --ram when unset and bounds Go's memory limit: auto (the cgroup's memory limit, if set) or none")
	fs.StringVar(&c.Flash, "flash", c.Flash, "flash cache file or block device (default <data>/flash.cache)")
	fs.Var(&c.FlashSize, "flash-size", "size of the flash cache file, created sparse (ignored for block devices)")
	fs.BoolVar(&c.NoFlash, "no-flash", c.NoFlash, "run without a flash tier")
	fs.BoolVar(&c.NoFront, "no-front", c.NoFront, "serve every request through net/http (no Front for plain segment reads)")
	fs.Var(&c.BlockSize, "block-size", "flash block size: the device's optimal write size (see strata probe)")
	fs.StringVar(&c.Policy, "policy", c.Policy, "flash block replacement: reinsert, tinylfu, lru, lfu-mean, lfu-median or fifo")
	fs.BoolVar(&c.PolicySessions, "policy-sessions", c.PolicySessions, "reinsert values segments by the viewers reading their rendition in order (what they ask for next is kept); false: by their requests alone")
	fs.StringVar(&c.Objective, "objective", c.Objective, "what the flash policy maximizes: requests (hit ratio), bytes (byte hit ratio), balanced (bytes leaning to hits) or auto (bytes with --upstream, requests otherwise)")
	fs.Float64Var(&c.MonitorRoom, "monitor-room", c.MonitorRoom, "fraction of RAM segments, from the tail, copied towards flash")
	fs.Var(&c.Ring, "ring", "ring buffer between RAM and flash (default two blocks)")
	fs.Float64Var(&c.Threshold, "threshold", c.Threshold, "flash utilization above which caching writes wait (0-1)")
	fs.DurationVar(&c.Epoch.Duration, "epoch", c.Epoch.Duration, "utilization epoch")
	fs.DurationVar(&c.MonitorPeriod.Duration, "monitor-period", c.MonitorPeriod.Duration, "RAM monitor period")
	fs.StringVar(&c.Capacity, "capacity", c.Capacity, "capacity tier directory (default <data>/videos)")
	fs.StringVar(&c.Origin, "origin", c.Origin, "capacity tier (titles, whole files, large image variants) in an S3 bucket instead: s3://BUCKET/PREFIX[?endpoint=URL&region=R&path_style=true]; credentials from AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY or the AWS credentials file")
	fs.DurationVar(&c.OriginTimeout.Duration, "origin-timeout", c.OriginTimeout.Duration, "bound on one capacity-tier read, retries included (then 504)")
	fs.DurationVar(&c.FlashReadDeadline.Duration, "flash-read-deadline", c.FlashReadDeadline.Duration, "bound on one flash read of a request (then served from the capacity tier)")
	fs.DurationVar(&c.FlashReadTarget.Duration, "flash-read-target", c.FlashReadTarget.Duration, "average flash read time above which the device counts as overloaded and hits past a limit go to the capacity tier (0: a tenth of flash_read_deadline; negative: no limit)")
	fs.BoolVar(&c.FlashSendfile, "flash-sendfile", c.FlashSendfile, "send flash hits of verified records with sendfile(2) straight from the device (plain HTTP/1.1 through the Front); false: read each into a hit buffer")
	fs.BoolVar(&c.RAMHugePages, "ram-huge-pages", c.RAMHugePages, "pack RAM's memory files into 2 MiB regions backed by huge pages (cheaper sends of large objects; off: under churn at a tight memory limit it used more memory)")
	fs.StringVar(&c.RAMTmpfs, "ram-tmpfs", c.RAMTmpfs, "where RAM's files are made: auto (a tmpfs of the process's own with large folios where it may mount one, else memfd), off (memfd), or a directory on a tmpfs")
	fs.BoolVar(&c.RAMSendfile, "ram-sendfile", c.RAMSendfile, "keep RAM's objects of 32KiB and more in memory files and send their hits with sendfile(2) (plain HTTP/1.1 through the Front), without copying them; false: in Go's heap, copied into each answer")
	fs.BoolVar(&c.FlashPageCache, "flash-page-cache", c.FlashPageCache, "send those flash hits from the kernel's page cache (a buffered descriptor of the flash file) instead of O_DIRECT reads; the cached pages count against the memory cgroup; needs --flash-sendfile")
	fs.BoolVar(&c.FlashPageCacheEnds, "flash-page-cache-ends", c.FlashPageCacheEnds, "read a flash hit's record header and the unaligned ends of its body through the page cache (kept there for the next hit), its aligned middle still sent from the O_DIRECT descriptor; needs --flash-sendfile")
	fs.Var(&c.FlashHitMemory, "flash-hit-memory", "bound on the bytes of flash hits being sent (then a hit waits, then 503); default a quarter of --ram within 16-256MiB")
	fs.StringVar(&c.AdminToken, "admin-token", c.AdminToken, "admin bearer token (default: generated into <data>/admin.token)")
	fs.BoolVar(&c.Demo, "demo", c.Demo, "seed the data directory with a synthetic library larger than RAM and flash")
	fs.StringVar(&c.LogLevel, "log-level", c.LogLevel, "debug, info, warn or error")
	fs.StringVar(&c.LogFormat, "log-format", c.LogFormat, "format of the server's log on standard error: text or json")
	fs.StringVar(&c.AccessLog, "access-log", c.AccessLog, `access log file, one line per request ("-": standard output); off by default`)
	fs.StringVar(&c.AccessLogFormat, "access-log-format", c.AccessLogFormat, "access log format: json (one object per line) or combined (Apache/nginx combined, then rt, cache, tier and the upstream's status, bytes and time)")
	fs.StringVar(&c.TraceWrites, "trace-writes", c.TraceWrites, "record every flash write (time, offset, length, lifetime class, stream) to this file, for strata-lab sim streams")
	fs.IntVar(&c.Endurance, "flash-endurance", c.Endurance, "rated program/erase cycles of the flash, for the projected lifetime in /stats")
	fs.StringVar(&c.DebugAddr, "debug-addr", c.DebugAddr, "serve Go's pprof profiles on this address (e.g. 127.0.0.1:6060); off by default")
	fs.Var(&upstreamList{list: &c.Upstreams}, "upstream", "edge mode: cache the HTTP origin URL for request paths under PREFIX, as PREFIX=URL or URL (prefix /); repeatable")
	fs.Var((*commaList)(&c.CORSOrigins), "cors-origins", `origins whose pages may read media, files, images and edge routes, comma-separated: "*" for any, "" for none`)
	fs.StringVar(&c.Edge.SetCookie, "edge-set-cookie", c.Edge.SetCookie, "edge mode, cacheable answers that set cookies: strip (store without them: no client gets another's), skip (store only if public or s-maxage, stripped) or store (replay them on hits, RFC 9111)")
	edgeRuleFlags(fs, &c.Edge)
	imagesFlags(fs, &c.Images)
	filesFlags(fs, &c.Files)
	timeoutsFlags(fs, &c.Timeouts)
	servingFlags(fs, c)
}

// upstreamList is the repeatable --upstream flag: its first use replaces
// the config file's [[upstream]] tables, the others add to it.
type upstreamList struct {
	list *[]app.UpstreamConfig
	set  bool
}

func (u *upstreamList) String() string {
	if u.list == nil {
		return ""
	}
	var s []string
	for _, x := range *u.list {
		s = append(s, x.Prefix+"="+x.URL)
	}
	return strings.Join(s, " ")
}

func (u *upstreamList) Set(v string) error {
	up := app.UpstreamConfig{Prefix: "/", URL: v}
	if p, url, ok := strings.Cut(v, "="); ok && strings.HasPrefix(p, "/") {
		up = app.UpstreamConfig{Prefix: p, URL: url}
	}
	if !u.set {
		*u.list, u.set = nil, true
	}
	*u.list = append(*u.list, up)
	return nil
}

// commaList is a flag of comma-separated values; the flag replaces the
// default (or the config file's) list.
type commaList []string

func (l *commaList) String() string { return strings.Join(*l, ",") }

func (l *commaList) Set(s string) error {
	*l = nil
	for v := range strings.SplitSeq(s, ",") {
		if v = strings.TrimSpace(v); v != "" {
			*l = append(*l, v)
		}
	}
	return nil
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

// loadServeConfig is strata serve's configuration: defaults, then a TOML
// config file (--config), then flags (parseServeArgs).
func loadServeConfig(args []string, stderr io.Writer) (app.Config, error) {
	cfg, _, err := parseServeArgs(args, stderr)
	return cfg, err
}

// usageError marks a configuration error as a usage error (exit 2).
func usageError(err error) error {
	if errors.Is(err, app.ErrConfig) {
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	return err
}

func runServe(args []string, stdout, stderr io.Writer) error {
	cfg, pr, err := parseServeArgs(args, stderr)
	if err != nil {
		return err
	}
	if pr.print {
		printConfig(stdout, cfg, pr.defaults)
		return nil
	}
	var opts app.Options
	if limit := app.SetMemoryLimit(&cfg); os.Getenv("GOMEMLIMIT") == "" {
		opts.GoLimit = limit // lowered by RAM's memory files as they come
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	rl, stopHUP := notifyHUP(args, stderr)
	defer stopHUP()
	return serve(ctx, cfg, opts, rl, stdout, stderr)
}

// serve opens the node, prints what it opened, serves until ctx is done
// (reloading the configuration with rl, if not nil) and closes the node.
func serve(ctx context.Context, cfg app.Config, opts app.Options, rl *reloader, stdout, stderr io.Writer) error {
	opts.Logger, opts.Level = newLogger(stderr, cfg.LogLevel, cfg.LogFormat)
	if opts.AccessOut == nil {
		opts.AccessOut = stdout
	}
	n, err := app.Open(ctx, cfg, opts)
	if err != nil {
		return err
	}
	printStart(stdout, n.Description(), cfg.LogFormat)
	stopReloads := rl.watch(n, opts.Logger)
	err = n.Serve(ctx)
	stopReloads()
	return errors.Join(err, n.Close())
}

// newLogger is a logger at level, which a reload can change (the
// LevelVar), in format text or json.
func newLogger(w io.Writer, level, format string) (*slog.Logger, *slog.LevelVar) {
	lv := new(slog.LevelVar)
	var l slog.Level
	if err := l.UnmarshalText([]byte(level)); err == nil {
		lv.Set(l)
	}
	o := &slog.HandlerOptions{Level: lv}
	if format == "json" {
		return slog.New(slog.NewJSONHandler(w, o)), lv
	}
	return slog.New(slog.NewTextHandler(w, o)), lv
}

// warnLogger is the tools' logger: text, warnings and errors only.
func warnLogger(w io.Writer) *slog.Logger { l, _ := newLogger(w, "warn", "text"); return l }

// printStart prints the start banner: for people, aligned lines of text;
// with --log-format json, one JSON log line of the same fields instead
// (logStart), so that a journal gets one format.
func printStart(w io.Writer, d app.Description, format string) {
	if format == "json" {
		logStart(w, d)
		return
	}
	fmt.Fprintf(w, "strata serve %s\n", httpapi.ReadBuild())
	for _, f := range d.Banner() {
		fmt.Fprintf(w, "  %-11s%s\n", f.Label, f.Text)
	}
}

// logStart writes the start banner as one JSON log line (msg
// banner.JSONMessage): the build, then each field of the text banner
// under its label (its continuation lines joined with "; "), and the
// node's URL, which banner.URL reads.
func logStart(w io.Writer, d app.Description) {
	b := httpapi.ReadBuild()
	attrs := []slog.Attr{slog.String("version", b.Version), slog.String("revision", b.Revision)}
	for _, f := range d.Banner() {
		key := strings.TrimSpace(f.Label)
		if key == strings.TrimSpace(banner.Listening) {
			continue // the url, below
		}
		attrs = append(attrs, slog.String(key, continuation.ReplaceAllString(f.Text, "; ")))
	}
	attrs = append(attrs, slog.String("url", d.URL))
	slog.New(slog.NewJSONHandler(w, nil)).LogAttrs(context.Background(), slog.LevelInfo, banner.JSONMessage, attrs...)
}

// continuation matches the line breaks of a banner field's text.
var continuation = regexp.MustCompile(`\n\s*`)
