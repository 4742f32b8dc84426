package app

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/strata-media/strata/internal/bytesize"
	"github.com/strata-media/strata/internal/core/httpcache"
	"github.com/strata-media/strata/internal/core/tier"
	"github.com/strata-media/strata/internal/httpapi"
	"github.com/strata-media/strata/internal/media/images"
	"github.com/strata-media/strata/internal/node/edge"
	"github.com/strata-media/strata/internal/node/engine"
	"github.com/strata-media/strata/internal/node/files"
	"github.com/strata-media/strata/internal/storage/origin"
)

// ErrConfig reports a configuration that cannot run.
var ErrConfig = errors.New("app: invalid configuration")

// Config is one node's configuration: the keys of strata serve's TOML
// file, which its flags override. DefaultConfig holds every default.
type Config struct {
	// Data is the data directory: flash cache file, capacity tier, admin
	// token, synthetic library description.
	Data string `toml:"data"`
	// Listen is the HTTP listen address.
	Listen string `toml:"listen"`
	// RAM is the RAM buffer pool budget, bytes; 0: what the memory
	// budget leaves (SizeMemory), DefaultRAM without one. Resolve fills
	// it.
	RAM bytesize.Value `toml:"ram"`

	// Memory is the node's memory budget, which the RAM tier is sized
	// from when RAM is not set, and Go's memory limit kept within: a size
	// ("640MiB"), "auto" (the limit of the process's cgroup, if one is
	// set) or "none" (ParseMemory).
	Memory string `toml:"memory"`
	// sizing is how Resolve split the memory (MemorySizing).
	sizing *MemorySizing

	// Flash is the flash cache file or block device; Resolve makes it
	// <Data>/flash.cache when empty.
	Flash string `toml:"flash"`
	// FlashSize is the size of a flash cache file, created sparse, bytes
	// (ignored for block devices).
	FlashSize bytesize.Value `toml:"flash_size"`
	// NoFlash runs without a flash tier.
	NoFlash bool `toml:"no_flash"`
	// BlockSize is the flash block size, bytes: the device's optimal
	// write size (FlashStream §3.1).
	BlockSize bytesize.Value `toml:"block_size"`
	// Policy is the flash block replacement: reinsert (the core's
	// default: tinylfu with group-aware scores and reinsertion), tinylfu
	// (frequency-aware admission and eviction), lru, lfu-mean,
	// lfu-median or fifo.
	Policy string `toml:"policy"`
	// PolicySessions lets reinsert value segments by the viewers reading
	// their rendition in order (the core's session table, learnt from
	// segment keys that end in their number): what such a viewer will
	// ask for next is kept, and a rendition read through is scored by its
	// readings. False: segments are scored by their requests alone.
	PolicySessions bool `toml:"policy_sessions"`
	// Objective is what the flash policy maximizes: requests (the hit
	// ratio), bytes (the byte hit ratio, for an edge whose origin link
	// is the limit), balanced (bytes leaning toward the hit ratio) or
	// auto: bytes in edge mode (with upstreams), requests otherwise
	// (objective.go).
	Objective string `toml:"objective"`
	// MonitorRoom is the fraction of RAM segments, from the tail, copied
	// towards flash (FlashStream §3.2.1).
	MonitorRoom float64 `toml:"monitor_room"`
	// Ring is the ring buffer between RAM and flash, bytes; 0: two blocks.
	Ring bytesize.Value `toml:"ring"`
	// Threshold is the flash utilization above which caching writes wait
	// (FlashStream §4.4).
	Threshold float64 `toml:"threshold"`
	// Epoch is the utilization epoch.
	Epoch Duration `toml:"epoch"`
	// MonitorPeriod is the RAM monitor's period.
	MonitorPeriod Duration `toml:"monitor_period"`
	// Capacity is the capacity tier directory; Resolve makes it
	// <Data>/videos when empty. With Origin, it holds only the image
	// store's value log.
	Capacity string `toml:"capacity"`
	// Origin, when set, puts the capacity tier in a bucket of an
	// S3-compatible store instead of Capacity: the titles, the whole
	// files (".files/") and the image store's large variants
	// (".images/"):
	// "s3://BUCKET/PREFIX[?endpoint=URL&region=R&path_style=true]"
	// (origin.ParseS3URL). Credentials come from the AWS environment
	// variables or credentials file, never from here.
	Origin string `toml:"origin"`
	// OriginTimeout bounds one capacity-tier read (a miss), retries
	// included: past it the request answers 504.
	OriginTimeout Duration `toml:"origin_timeout"`
	// FlashReadDeadline bounds a flash read on the request path: past it
	// the request is served from the capacity tier and the read counts
	// as a timeout of the device (engine.DefaultFlashReadDeadline).
	FlashReadDeadline Duration `toml:"flash_read_deadline"`
	// FlashReadTarget is the average time of a flash read above which the
	// device counts as overloaded: the flash hits read at once are then
	// limited, and those past the limit are served from the capacity tier
	// at once (engine.Options.ReadLimit, health.Limit). Zero: a tenth of
	// FlashReadDeadline; negative: no limit.
	FlashReadTarget Duration `toml:"flash_read_target"`
	// FlashHitMemory bounds the bytes of flash hits' buffers, from the
	// read until the answer is written (a slow client holds one for as
	// long as it reads): a hit that finds it held waits in line up to
	// engine.DefaultHitQueueWait, then is answered 503 with Retry-After.
	// 0: HitMemory's default, a quarter of RAM within 16 to 256 MiB.
	FlashHitMemory bytesize.Value `toml:"flash_hit_memory"`
	// FlashSendfile sends a flash hit of verified records through the
	// Front (plain HTTP/1.1) with sendfile(2) straight from the flash
	// device, instead of reading it into a hit buffer and writing that
	// (decision 0031; engine.Options.NoSendfile).
	FlashSendfile bool `toml:"flash_sendfile"`
	// RAMSendfile keeps RAM's objects of 32 KiB and more in memory files
	// and sends their hits through the Front (plain HTTP/1.1) with
	// sendfile(2), the kernel referring to the file's pages instead of
	// copying the bytes into the socket (decision 0036;
	// engine.Options.RAMFiles). The files are outside Go's heap: Go's
	// memory limit leaves them the RAM tier's and the ring's bytes.
	RAMSendfile bool `toml:"ram_sendfile"`
	// RAMHugePages packs those memory files into 2 MiB regions the
	// kernel backs with huge pages (decision 0041; engine.Options.
	// RAMHugePages): 1 MiB hits cost the kernel a fifth to a third less.
	// Off by default: under churn at a tight memory cgroup (the `hot`
	// scenario's 640 MiB) it was killed where files of their own were
	// not.
	RAMHugePages bool `toml:"ram_huge_pages"`
	// RAMTmpfs is where those files are made (decision 0042;
	// engine.Options.RAMTmpfs): "auto" a tmpfs of the process's own,
	// mounted nowhere, with large folios (huge=within_size), where the
	// process may mount one (CAP_SYS_ADMIN), else memory files (memfd,
	// 4 KiB pages); "off" memory files; or a directory on a tmpfs the
	// operator mounted (say with huge=within_size), checked at start. A
	// 100 KiB hit's send costs the kernel half as much from large folios
	// as from 4 KiB pages, a 1 MiB hit's about a third less.
	RAMTmpfs string `toml:"ram_tmpfs"`
	// FlashPageCache sends those hits from a second, buffered descriptor
	// of the flash file, the kernel's page cache, instead of the O_DIRECT
	// one: a repeat hit reads no device and needs no aligned split
	// (decision 0034; device.FileOptions.PageCache). The cached pages
	// count against the node's memory cgroup. Needs flash_sendfile.
	FlashPageCache bool `toml:"flash_page_cache"`
	// FlashPageCacheEnds reads the small parts of those hits, a record's
	// header and the unaligned ends of its body, through the page cache
	// descriptor while the body's aligned middle still goes out from the
	// O_DIRECT one: the next hit of the record finds them in memory
	// instead of reading the device twice more (decision 0038;
	// device.FileOptions.PageCacheReads). A few KiB of page cache per
	// record hit, counted against the memory cgroup, reclaimable.
	// Applies with flash_sendfile; implied by flash_page_cache.
	FlashPageCacheEnds bool `toml:"flash_page_cache_ends"`
	// AdminToken is the admin bearer token; empty: the one in
	// <Data>/admin.token, generated at first start.
	AdminToken string `toml:"admin_token"`
	// Demo seeds the data directory with a synthetic library larger than
	// RAM and flash, and playable titles generated with ffmpeg.
	Demo bool `toml:"demo"`
	// LogLevel is debug, info, warn or error.
	LogLevel string `toml:"log_level"`
	// LogFormat is the format of the server's log: text or json.
	LogFormat string `toml:"log_format"`
	// AccessLog is the file of the access log, one JSON line per
	// request; "-": standard output; empty: off.
	AccessLog string `toml:"access_log"`
	// AccessLogFormat is the access log's format: json (one object per
	// line) or combined (Apache's and nginx's text format, with the cache
	// result, tier and upstream fields appended).
	AccessLogFormat string `toml:"access_log_format"`
	// DebugAddr serves Go's pprof profiles on this address; empty: off.
	DebugAddr string `toml:"debug_addr"`
	// TraceWrites records every flash write to this file; empty: off.
	TraceWrites string `toml:"trace_writes"`
	// Endurance is the flash's rated program/erase cycles, for the
	// projected lifetime in /stats.
	Endurance int `toml:"flash_endurance"`
	// CORSOrigins are the origins whose pages may read media, manifests,
	// files, images and edge routes: "*" for any, or exact origins
	// ("https://player.example"); empty: no CORS. Admin routes never
	// answer other origins.
	CORSOrigins []string `toml:"cors_origins"`
	// Upstreams are the HTTP origins of edge mode, by request path
	// prefix (the [[upstream]] tables): a GET under a prefix that no
	// local route answers, or a title the capacity tier does not hold,
	// is fetched from the upstream and cached in RAM and flash.
	Upstreams []UpstreamConfig `toml:"upstream"`
	// Edge configures how edge mode caches its upstreams' answers.
	Edge EdgeConfig `toml:"edge"`
	// Images configures the image store.
	Images ImagesConfig `toml:"images"`
	// Files configures the whole-file tier.
	Files FilesConfig `toml:"files"`
	// Timeouts bound slow clients.
	Timeouts TimeoutsConfig `toml:"timeouts"`
	// TLSCert is the PEM certificate chain of HTTPS on Listen, with
	// TLSKey; empty: plain HTTP. HTTP/2 is negotiated over TLS. SIGHUP
	// reads both files again.
	TLSCert string `toml:"tls_cert"`
	// TLSKey is the PEM private key of TLSCert.
	TLSKey string `toml:"tls_key"`
	// H2C serves HTTP/2 with prior knowledge beside HTTP/1.1 on the
	// plain listener, for a TLS-terminating load balancer in front.
	H2C bool `toml:"h2c"`
	// NoFront serves every request of the plain listener through
	// net/http, without the Front that answers plain segment reads
	// straight off the connection (front.Front). For comparison
	// and as a way out; TLS listeners never have the Front.
	NoFront bool `toml:"no_front"`
	// SignedURLs requires signed URLs for reads under path prefixes.
	SignedURLs SignedURLsConfig `toml:"signed_urls"`
}

// TimeoutsConfig is the HTTP server's limits on slow clients: the
// [timeouts] table.
type TimeoutsConfig struct {
	// ReadHeader is how long a request's headers may take. Default 10 s.
	ReadHeader Duration `toml:"read_header"`
	// Body is how long a request body may go without a byte arriving:
	// the server's read timeout, which every read of an upload moves on
	// (httpapi.Body). Default 1 min.
	Body Duration `toml:"body"`
	// Idle is how long a kept-alive connection may wait for its next
	// request. Default 2 min.
	Idle Duration `toml:"idle"`
	// Write is how long a response may take, except whole-file streams,
	// which move it on while the client reads. Default 5 min.
	Write Duration `toml:"write"`
}

// DefaultTimeouts is the [timeouts] table's defaults.
func DefaultTimeouts() TimeoutsConfig {
	return TimeoutsConfig{ReadHeader: Duration{10 * time.Second}, Body: Duration{time.Minute},
		Idle: Duration{2 * time.Minute}, Write: Duration{5 * time.Minute}}
}

// withDefaults fills zero timeouts with the defaults.
func (t TimeoutsConfig) withDefaults() TimeoutsConfig {
	d := DefaultTimeouts()
	for _, p := range []struct{ v, def *Duration }{{&t.ReadHeader, &d.ReadHeader}, {&t.Body, &d.Body},
		{&t.Idle, &d.Idle}, {&t.Write, &d.Write}} {
		if p.v.Duration <= 0 {
			*p.v = *p.def
		}
	}
	return t
}

// EdgeConfig is edge mode's caching policy: the [edge] table.
type EdgeConfig struct {
	// SetCookie is what the edge does with a cacheable upstream answer
	// that sets cookies: "strip" (the default) stores it without them, so
	// the client whose request fetched it gets its cookie and no other
	// client ever does; "skip" stores it only if the origin marked it
	// public or s-maxage (nginx's and Varnish's default), cookies
	// stripped; "store" keeps the cookies and replays them on every hit
	// (RFC 9111 §7.3 allows it; one client's cookie then reaches others).
	SetCookie string `toml:"set_cookie"`

	// The cache rules' defaults, for every path no [[edge.rule]] matches
	// (edge.Policy; docs/operations.md, "Edge in production").

	// DefaultTTL is the lifetime of a response without explicit freshness
	// (no max-age, s-maxage, Expires); 0: the Last-Modified heuristic.
	DefaultTTL Duration `toml:"default_ttl"`
	// HeuristicMin and HeuristicMax bound the heuristic lifetime (10% of
	// the time since Last-Modified); HeuristicMax 0: no heuristic.
	HeuristicMin Duration `toml:"heuristic_min"`
	HeuristicMax Duration `toml:"heuristic_max"`
	// TTL, if not 0, replaces every lifetime, the origin's max-age
	// included; MaxTTL, if not 0, caps it.
	TTL    Duration `toml:"ttl"`
	MaxTTL Duration `toml:"max_ttl"`
	// Immutable treats stored responses as Cache-Control: immutable.
	Immutable bool `toml:"immutable"`
	// Grace serves a stale response while it is revalidated, this long
	// past its freshness, when the origin sent no stale-while-revalidate;
	// 0: none.
	Grace Duration `toml:"grace"`
	// KeepOnError serves a stored response this long past its freshness
	// when the upstream fails, times out or answers 5xx (the origin's
	// stale-if-error replaces it); 0: never.
	KeepOnError Duration `toml:"keep_on_error"`
	// Query says which query parameters count in the cache key: all,
	// none, or list (QueryParams).
	Query       string   `toml:"query"`
	QueryParams []string `toml:"query_params"`
	// MaxObjectSize is the largest response stored.
	MaxObjectSize bytesize.Value `toml:"max_object_size"`
	// SliceSize is the size of the slices large responses are fetched
	// and stored in (not per rule; a change needs a restart).
	SliceSize bytesize.Value `toml:"slice_size"`
	// FillMemory bounds the upstream bodies held in memory at once while
	// they are read (edge.Options.FillMemory); a part of the memory
	// budget (MemoryParts.EdgeFills). Not per rule; a change needs a
	// restart.
	FillMemory bytesize.Value `toml:"fill_memory"`
	// MaxRelays bounds the requests relayed upstream at once because the
	// overloaded flash device shed the read of their copy
	// (edge.Options.MaxRelays): 0, the edge's upstream loads at once;
	// negative, no bound. Not per rule; a change needs a restart.
	MaxRelays int `toml:"max_relays"`
	// Rules are the [[edge.rule]] tables: the first whose prefix and
	// match fit a request path sets its keys over the defaults above.
	Rules []EdgeRuleConfig `toml:"rule"`
}

// EdgeRuleConfig is one [[edge.rule]] table: the requests under Prefix
// whose path matches Match (a glob on the last segment, or on the whole
// path when it holds a '/'), and the [edge] keys it sets for them; a key
// left out keeps the [edge] value.
type EdgeRuleConfig struct {
	Prefix        string          `toml:"prefix"`
	Match         string          `toml:"match"`
	DefaultTTL    *Duration       `toml:"default_ttl"`
	HeuristicMin  *Duration       `toml:"heuristic_min"`
	HeuristicMax  *Duration       `toml:"heuristic_max"`
	TTL           *Duration       `toml:"ttl"`
	MaxTTL        *Duration       `toml:"max_ttl"`
	Immutable     *bool           `toml:"immutable"`
	Grace         *Duration       `toml:"grace"`
	KeepOnError   *Duration       `toml:"keep_on_error"`
	Query         *string         `toml:"query"`
	QueryParams   []string        `toml:"query_params"`
	MaxObjectSize *bytesize.Value `toml:"max_object_size"`
}

// DefaultEdgeConfig is the [edge] table's defaults, chosen for a video
// edge (docs/operations.md says why): the origin's freshness as RFC 9111
// reads it, a day of keep-on-error, no grace, every query parameter in
// the key.
func DefaultEdgeConfig() EdgeConfig {
	return EdgeConfig{
		SetCookie:     httpcache.SetCookieStrip.String(),
		HeuristicMax:  Duration{httpcache.DefaultHeuristicMax},
		KeepOnError:   Duration{httpcache.DefaultKeepOnError},
		Query:         edge.QueryAll.String(),
		MaxObjectSize: httpcache.DefaultMaxObjectSize,
		SliceSize:     edge.DefaultSliceSize,
		FillMemory:    edge.DefaultFillMemory,
	}
}

// CacheOptions returns the httpcache options of the [edge] defaults.
func (e EdgeConfig) CacheOptions() (httpcache.Options, error) {
	p, _, err := e.Policies()
	return p.Cache, err
}

// Policies returns the edge's default cache policy and its rules, or an
// ErrConfig naming the key that is wrong.
func (e EdgeConfig) Policies() (edge.Policy, []edge.Rule, error) {
	sc, err := httpcache.ParseSetCookiePolicy(e.SetCookie)
	if err != nil {
		return edge.Policy{}, nil, fmt.Errorf("%w: edge.set_cookie: %v", ErrConfig, err)
	}
	def, err := e.policy(sc, "edge.")
	if err != nil {
		return edge.Policy{}, nil, err
	}
	rules := make([]edge.Rule, len(e.Rules))
	for i, r := range e.Rules {
		ec := e
		for _, o := range []struct {
			dst *Duration
			src *Duration
		}{{&ec.DefaultTTL, r.DefaultTTL}, {&ec.HeuristicMin, r.HeuristicMin}, {&ec.HeuristicMax, r.HeuristicMax},
			{&ec.TTL, r.TTL}, {&ec.MaxTTL, r.MaxTTL}, {&ec.Grace, r.Grace}, {&ec.KeepOnError, r.KeepOnError}} {
			if o.src != nil {
				*o.dst = *o.src
			}
		}
		if r.Immutable != nil {
			ec.Immutable = *r.Immutable
		}
		if r.Query != nil {
			ec.Query = *r.Query
		}
		if r.QueryParams != nil {
			ec.QueryParams = r.QueryParams
		}
		if r.MaxObjectSize != nil {
			ec.MaxObjectSize = *r.MaxObjectSize
		}
		p, err := ec.policy(sc, fmt.Sprintf("edge.rule[%d] (match %q): ", i+1, r.Match))
		if err != nil {
			return edge.Policy{}, nil, err
		}
		rules[i] = edge.Rule{Prefix: r.Prefix, Match: r.Match, Policy: p}
	}
	if err := edge.CheckRules(def, rules); err != nil {
		return edge.Policy{}, nil, fmt.Errorf("%w: [[edge.rule]]: %v", ErrConfig, err)
	}
	return def, rules, nil
}

// policy maps the keys of e to an edge.Policy; where names the table in
// errors ("edge.").
func (e EdgeConfig) policy(sc httpcache.SetCookiePolicy, where string) (edge.Policy, error) {
	for _, d := range []struct {
		key string
		v   time.Duration
	}{{"default_ttl", e.DefaultTTL.Duration}, {"heuristic_min", e.HeuristicMin.Duration}, {"heuristic_max", e.HeuristicMax.Duration},
		{"ttl", e.TTL.Duration}, {"max_ttl", e.MaxTTL.Duration}, {"grace", e.Grace.Duration}, {"keep_on_error", e.KeepOnError.Duration}} {
		if d.v < 0 {
			return edge.Policy{}, fmt.Errorf("%w: %s%s: negative duration %s", ErrConfig, where, d.key, d.v)
		}
	}
	if e.MaxObjectSize <= 0 {
		return edge.Policy{}, fmt.Errorf("%w: %smax_object_size must be positive", ErrConfig, where)
	}
	if e.HeuristicMax.Duration > 0 && e.HeuristicMin.Duration > e.HeuristicMax.Duration {
		return edge.Policy{}, fmt.Errorf("%w: %sheuristic_min %s is more than heuristic_max %s", ErrConfig, where, e.HeuristicMin.Duration, e.HeuristicMax.Duration)
	}
	q, err := edge.ParseQueryKey(e.Query)
	if err != nil {
		return edge.Policy{}, fmt.Errorf("%w: %squery: %v", ErrConfig, where, err)
	}
	o := httpcache.Options{
		SetCookie: sc, MaxObjectSize: int64(e.MaxObjectSize), HeuristicMax: e.HeuristicMax.Duration,
		DefaultTTL: e.DefaultTTL.Duration, HeuristicMin: e.HeuristicMin.Duration, TTL: e.TTL.Duration,
		MaxTTL: e.MaxTTL.Duration, Immutable: e.Immutable, Grace: e.Grace.Duration, KeepOnError: e.KeepOnError.Duration,
	}
	if o.HeuristicMax == 0 {
		o.HeuristicFraction = -1 // no heuristic lifetime
	}
	if o.KeepOnError == 0 {
		o.KeepOnError = -1 // never
	}
	p := edge.Policy{Cache: o, Query: q, QueryParams: e.QueryParams}
	if err := edge.CheckRules(p, nil); err != nil {
		return edge.Policy{}, fmt.Errorf("%w: %s%v", ErrConfig, where, strings.TrimPrefix(err.Error(), "edge: "))
	}
	return p, nil
}

// UpstreamConfig is one [[upstream]] table: an HTTP origin of edge mode.
type UpstreamConfig struct {
	// Prefix is the request path prefix, '/' first ("/" for every path
	// no local route answers).
	Prefix string `toml:"prefix"`
	// URL is the origin's base URL: a request for Prefix+rest is fetched
	// from URL+rest.
	URL string `toml:"url"`

	// How the edge talks to the upstream (upstream.go): zero values take
	// the defaults, filled by Resolve.
	UpstreamSettings
}

// Duration is a time.Duration usable in TOML ("1s", "100ms").
type Duration struct{ time.Duration }

// UnmarshalText parses a Go duration.
func (d *Duration) UnmarshalText(b []byte) (err error) {
	d.Duration, err = time.ParseDuration(string(b))
	return err
}

// ImagesConfig is the image store's part of the configuration: the
// [images] table.
type ImagesConfig struct {
	// Disabled runs without the image store.
	Disabled bool `toml:"disabled"`
	// Enabled opens the image store on an edge node (Config.EdgeOnly),
	// which otherwise has none: its memory goes to the RAM tier, and
	// image paths go to the upstream like any other. Other nodes open
	// it unless Disabled, which wins over Enabled.
	Enabled bool `toml:"enabled"`
	// LSM is the LSM directory, on flash; default beside the flash cache
	// file (<Data> for a block device), images-lsm.
	LSM string `toml:"lsm"`
	// VLog is the value log directory, on capacity storage; default
	// <Capacity>/.images-vlog.
	VLog string `toml:"vlog"`
	// SizeThreshold: variants of this size and more go to the value log
	// (MRIS SizeThreshold), bytes.
	SizeThreshold bytesize.Value `toml:"size_threshold"`
	// SplitThreshold is the value log file size (MRIS LargeSpace), bytes.
	SplitThreshold bytesize.Value `toml:"split_threshold"`
	// MaxUpload is the largest accepted upload, bytes.
	MaxUpload bytesize.Value `toml:"max_upload"`
	// MaxPixels is the largest accepted width x height.
	MaxPixels int64 `toml:"max_pixels"`
	// MaxDecode is the largest RAM an upload's decode may take, bytes
	// (images.DecodeCost: bytes per pixel count).
	MaxDecode bytesize.Value `toml:"max_decode"`
	// Ladder lists the variants made at upload (images.ParseLadder).
	Ladder string `toml:"ladder"`
	// Quality is the variants' JPEG quality (1-100).
	Quality int `toml:"quality"`
	// Resampler names the scaler.
	Resampler string `toml:"resampler"`
	// NoSync acknowledges uploads before they are fsynced (unsafe).
	NoSync bool `toml:"no_sync"`
	// MaxAge is the Cache-Control max-age of variants and info.json.
	MaxAge Duration `toml:"max_age"`
	// BaseURL is the public URL prefix of IIIF ids; empty: the request's
	// scheme and Host.
	BaseURL string `toml:"base_url"`
	// TrustForwarded takes IIIF ids' scheme and host from
	// X-Forwarded-Proto and X-Forwarded-Host when BaseURL is empty: only
	// behind a proxy that sets them.
	TrustForwarded bool `toml:"trust_forwarded"`
	// IIIFMaxArea is IIIF info.json's maxArea: the largest response, in
	// pixels; 0: images.DefaultIIIFMaxOutputPixels.
	IIIFMaxArea int64 `toml:"iiif_max_area"`
	// IIIFMaxDecodePixels bounds the stored variant an IIIF response is
	// derived from, in pixels (413 beyond); 0: the default.
	IIIFMaxDecodePixels int64 `toml:"iiif_max_decode_pixels"`
	// IIIFConcurrency bounds the IIIF derivations at once; 0: GOMAXPROCS.
	IIIFConcurrency int `toml:"iiif_concurrency"`
}

// IIIFOptions are the IIIF bounds of c.
func (c *ImagesConfig) IIIFOptions() images.IIIFOptions {
	return images.IIIFOptions{MaxOutputPixels: c.IIIFMaxArea, MaxDecodePixels: c.IIIFMaxDecodePixels,
		MaxConcurrent: c.IIIFConcurrency, Quality: c.Quality}
}

// FilesConfig configures the whole-file tier: the [files] table.
type FilesConfig struct {
	// Dir holds the whole files; default <Data>/files.
	Dir string `toml:"dir"`
	// Flash is the file of their flash copies; default <Data>/files.flash.
	Flash string `toml:"flash"`
	// FlashSize is its size, bytes; 0: no flash copies.
	FlashSize bytesize.Value `toml:"flash_size"`
	// FlashBandwidth is the bytes/s the flash may promise to streams.
	FlashBandwidth bytesize.Value `toml:"flash_bandwidth"`
	// DiskBandwidth is the bytes/s the capacity disk may promise.
	DiskBandwidth bytesize.Value `toml:"disk_bandwidth"`
	// Bitrate is the bytes/s of a file whose play-out time is unknown.
	Bitrate bytesize.Value `toml:"bitrate"`
	// WriteRate caps the flash write rate of copies, bytes/s; 0: none.
	WriteRate bytesize.Value `toml:"write_rate"`
	// RAM is the whole-file tier's RAM, bytes: the buffers of interval
	// caching, and the pool of pieces of files read from the bucket of an
	// S3 origin (which then gets half).
	RAM bytesize.Value `toml:"ram"`
	// Mechanism is what serves streams besides the disk: "lfu" (flash
	// copies of popular files), "interval" (interval caching in RAM, no
	// flash copies), "both", or "auto" (the default): "both", but "lfu"
	// on an edge node (upstreams and no origin), whose whole-file tier
	// is rarely used and whose memory budget then goes to its RAM tier
	// instead of interval buffers.
	Mechanism string `toml:"mechanism"`
	// StatTTL is how long the version of a file in the bucket is trusted
	// before it is asked again (one HEAD).
	StatTTL Duration `toml:"stat_ttl"`
}

// DefaultConfig returns the configuration of a node started without a
// config file or flags: the one place of every default, those of the
// packages it opens taken from them.
func DefaultConfig() Config {
	eng := *(&engine.Options{}).EnsureDefaults()
	return Config{
		Data:           "./strata-data",
		Listen:         "127.0.0.1:8080",
		Memory:         "auto",
		FlashSize:      2 << 30,
		BlockSize:      tier.DefaultBlockSize,
		Policy:         tier.BlockPolicy(0).String(),
		PolicySessions: true,
		Objective:      ObjectiveAuto,
		MonitorRoom:    tier.DefaultMonitorRoom,
		Threshold:      tier.DefaultThreshold,
		Epoch:          Duration{eng.Epoch},
		MonitorPeriod:  Duration{eng.MonitorPeriod},
		OriginTimeout:  Duration{eng.OriginTimeout},
		LogLevel:       "info",
		LogFormat:      "text",
		Endurance:      eng.EnduranceCycles,
		CORSOrigins:    []string{"*"},
		Images:         DefaultImagesConfig(),
		Files:          DefaultFilesConfig(),
		Timeouts:       DefaultTimeouts(),
		Edge:           DefaultEdgeConfig(),

		FlashReadDeadline:  Duration{eng.FlashReadDeadline},
		FlashSendfile:      true,
		FlashPageCacheEnds: true,
		RAMSendfile:        true,
		RAMTmpfs:           "auto",
		AccessLogFormat:    httpapi.AccessLogJSON,
	}
}

// DefaultImagesConfig is the [images] table's defaults, the image store's.
func DefaultImagesConfig() ImagesConfig {
	return ImagesConfig{
		SizeThreshold:  images.DefaultSizeThreshold,
		SplitThreshold: images.DefaultSplitThreshold,
		MaxUpload:      images.DefaultMaxUploadBytes,
		MaxPixels:      images.DefaultMaxPixels,
		MaxDecode:      images.DefaultMaxDecodeBytes,
		Ladder:         images.FormatLadder(images.DefaultLadder()),
		Quality:        images.DefaultQuality,
		Resampler:      images.DefaultResampler,
		MaxAge:         Duration{images.DefaultMaxAge},
	}
}

// DefaultFilesConfig is the [files] table's defaults: the whole-file
// tier's, and a 1 GiB flash file.
func DefaultFilesConfig() FilesConfig {
	o := files.DefaultOptions()
	return FilesConfig{FlashSize: 1 << 30, FlashBandwidth: bytesize.Value(o.FlashBandwidth),
		DiskBandwidth: bytesize.Value(o.DiskBandwidth), Bitrate: bytesize.Value(o.DefaultBitrate),
		RAM: bytesize.Value(o.RAMBytes), StatTTL: Duration{o.StatTTL}, Mechanism: MechanismAuto}
}

// MechanismAuto is [files] mechanism's default (FilesMechanism).
const MechanismAuto = "auto"

// FilesMechanism is the whole-file tier's mechanism: as set, or for
// "auto" "lfu" on an edge node (upstreams, no origin) and the files
// package's default elsewhere.
func (c *Config) FilesMechanism() (files.Mechanism, error) {
	if c.Files.Mechanism != MechanismAuto {
		return files.ParseMechanism(c.Files.Mechanism)
	}
	if c.EdgeOnly() {
		return files.MechanismLFU, nil
	}
	return files.DefaultMechanism, nil
}

// EdgeOnly reports whether c is an edge node with no media source of its
// own: upstreams, and no bucket origin.
func (c *Config) EdgeOnly() bool { return len(c.Upstreams) > 0 && c.Origin == "" }

// Why the node opens no image store (Config.ImagesOff).
const (
	ImagesOffDisabled = "--no-images"
	ImagesOffEdge     = "edge node; --images-enabled opens it"
)

// ImagesOff says why c opens no image store, "" when it opens one:
// [images] disabled (--no-images), or an edge node (EdgeOnly) without
// [images] enabled (--images-enabled). An edge has no images of its own
// unless configured: its image paths go to the upstream, and the image
// store's 128 MiB of memtable and block cache go to the RAM tier.
func (c *Config) ImagesOff() string {
	switch {
	case c.Images.Disabled:
		return ImagesOffDisabled
	case c.EdgeOnly() && !c.Images.Enabled:
		return ImagesOffEdge
	}
	return ""
}

// Resolve checks c and fills the paths derived from others, and the RAM
// tier from the memory budget when it is not set (resolveMemory).
func (c *Config) Resolve() error {
	if _, err := tier.ParseBlockPolicy(c.Policy); err != nil {
		return fmt.Errorf("%w: %v", ErrConfig, err)
	}
	if _, err := c.FlashObjective(); err != nil {
		return err
	}
	switch {
	case c.MonitorRoom <= 0 || c.MonitorRoom > 1:
		return fmt.Errorf("%w: --monitor-room %v must be in (0, 1]", ErrConfig, c.MonitorRoom)
	case c.Threshold <= 0:
		return fmt.Errorf("%w: --threshold %v must be positive", ErrConfig, c.Threshold)
	case c.RAM < 0:
		return fmt.Errorf("%w: --ram must be positive", ErrConfig)
	case c.OriginTimeout.Duration <= 0:
		return fmt.Errorf("%w: --origin-timeout must be positive", ErrConfig)
	case c.LogFormat != "text" && c.LogFormat != "json":
		return fmt.Errorf("%w: --log-format %q: want text or json", ErrConfig, c.LogFormat)
	case c.FlashPageCache && !c.FlashSendfile:
		return fmt.Errorf("%w: flash_page_cache sends flash hits from the page cache with sendfile: it needs flash_sendfile", ErrConfig)
	}
	if _, err := c.FilesMechanism(); err != nil {
		return fmt.Errorf("%w: [files] mechanism: %v (or auto)", ErrConfig, err)
	}
	if _, err := httpapi.ParseAccessLogFormat(c.AccessLogFormat); err != nil {
		return fmt.Errorf("%w: access_log_format: %v", ErrConfig, err)
	}
	if err := c.checkOrigin(); err != nil {
		return err
	}
	if _, _, err := c.Edge.Policies(); err != nil {
		return err
	}
	if err := c.checkUpstreams(); err != nil {
		return err
	}
	if err := c.checkEdge(); err != nil {
		return err
	}
	if err := c.checkServing(); err != nil {
		return err
	}
	c.ResolvePaths()
	if err := c.Images.Check(); err != nil {
		return err
	}
	return c.resolveMemory()
}

// checkEdge checks the upstreams (http or https URLs, one per prefix) and
// the edge's slice size, so that --print-config and a reload refuse what
// serve would.
func (c *Config) checkEdge() error {
	if err := edge.CheckUpstreamList(edgeUpstreams(c.Upstreams)); err != nil {
		return fmt.Errorf("%w: [[upstream]]: %v", ErrConfig, err)
	}
	if s := c.Edge.SliceSize; s < 4<<10 || s > 64<<20 {
		return fmt.Errorf("%w: edge.slice_size %d: want 4KiB to 64MiB", ErrConfig, s)
	}
	if m, s := c.Edge.FillMemory, c.Edge.SliceSize; m < s || m > 4<<30 {
		return fmt.Errorf("%w: edge.fill_memory %d: want the slice size (%d) to 4GiB", ErrConfig, m, s)
	}
	return nil
}

// checkOrigin checks the S3 URL of Origin, if any.
func (c *Config) checkOrigin() error {
	if c.Origin == "" {
		return nil
	}
	if _, err := origin.ParseS3URL(c.Origin); err != nil {
		return fmt.Errorf("%w: --origin: %v", ErrConfig, err)
	}
	if c.Demo {
		return fmt.Errorf("%w: --demo seeds a local capacity directory; it does not go with --origin", ErrConfig)
	}
	return nil
}

// ResolvePaths fills the paths derived from Data (flash cache file,
// capacity directory, whole files, image store): what strata ingest needs
// of a node's configuration.
func (c *Config) ResolvePaths() {
	if c.Flash == "" {
		c.Flash = filepath.Join(c.Data, "flash.cache")
	}
	if c.Capacity == "" {
		c.Capacity = filepath.Join(c.Data, "videos")
	}
	c.Files.Resolve(c.Data)
	c.Images.Resolve(c.Data, c.Flash, c.Capacity)
}

// Resolve fills the default directories of the whole-file tier.
func (c *FilesConfig) Resolve(data string) {
	if c.Dir == "" {
		c.Dir = filepath.Join(data, "files")
	}
	if c.Flash == "" {
		c.Flash = filepath.Join(data, "files.flash")
	}
}

// Resolve fills the default directories: the LSM beside the flash cache
// file (in the data directory when the flash tier is a block device), the
// value log in the capacity directory, hidden (a name starting with '.' is
// never a title of the catalog).
func (c *ImagesConfig) Resolve(data, flash, capacity string) {
	if c.LSM == "" {
		dir := filepath.Dir(flash)
		if flash == "" || strings.HasPrefix(flash, "/dev/") {
			dir = data
		}
		c.LSM = filepath.Join(dir, "images-lsm")
	}
	if c.VLog == "" {
		c.VLog = filepath.Join(capacity, ".images-vlog")
	}
}

// Check checks what Resolve cannot fill: the ladder.
func (c *ImagesConfig) Check() error {
	if _, err := images.ParseLadder(c.Ladder); err != nil {
		return fmt.Errorf("%w: --images-ladder: %v", ErrConfig, err)
	}
	return nil
}
