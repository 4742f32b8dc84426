package app

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"os"
	"runtime/debug"
	"runtime/metrics"
	"strings"
	"time"

	"github.com/strata-media/strata/internal/bytesize"
	"github.com/strata-media/strata/internal/core/tier"
	"github.com/strata-media/strata/internal/httpapi"
	"github.com/strata-media/strata/internal/node/files"
	"github.com/strata-media/strata/internal/storage/ramfile"
)

// FlashIndexPerBlock bounds the RAM the flash index holds per flash block,
// bytes: the block's header and the index entries of the segments it
// holds.
const FlashIndexPerBlock = 4 << 10

// MemoryHeadroom is the memory a node may hold beyond its caches' budgets
// before the Go collector works harder (runtime, request buffers, decoder
// state), bytes: 64 MiB.
const MemoryHeadroom = 64 << 20

// MemoryOutsideGo is the part of a memory budget left out of Go's memory
// limit, bytes: what the cgroup charges that the Go runtime does not count
// (the binary's pages, kernel socket buffers) and the soft limit's
// overshoot, so that the kernel's hard limit is not reached first.
const MemoryOutsideGo = 32 << 20

// DefaultRAM is the RAM tier's pool (ram) when neither it nor a memory
// budget is set: 256 MiB.
const DefaultRAM = 256 << 20

// MinRAM is the smallest RAM tier a memory budget may leave: below it
// the budget is refused (a few segments of each of a handful of streams).
const MinRAM = 32 << 20

// MemoryParts are the RAM budgets of the node's caches.
type MemoryParts struct {
	// RAM is the segment tier's pool (ram).
	RAM int64
	// Ring is the ring buffer between RAM and flash (ring; two blocks).
	Ring int64
	// ImageMemTable and ImageBlockCache are the image store's LSM
	// memtable and block cache; 0 without the image store (ImagesOff).
	ImageMemTable, ImageBlockCache int64
	// FlashIndex is the flash index: FlashIndexPerBlock per block.
	FlashIndex int64
	// Files is the whole-file tier's pool of pieces ([files] ram), only
	// with a bucket origin.
	Files int64
	// FlashHits bounds the flash hits' buffers in flight (HitMemory).
	FlashHits int64
	// EdgeFills bounds the upstream bodies an edge holds while it reads
	// them ([edge] fill_memory); 0 without upstreams.
	EdgeFills int64
	// RAMFiles is how far RAM's memory files may go past the RAM tier
	// and the ring (ram_sendfile, decision 0036: ramfile.Slack): page
	// rounding and files waiting for a collection, outside Go's heap.
	RAMFiles int64
	// PageCache is the room a memory budget leaves the kernel's page
	// cache for flash hits sent from it (flash_page_cache, decision
	// 0034): as much as the RAM tier when the tier is sized from the
	// budget, 0 otherwise. It is outside Go's memory limit.
	PageCache int64
}

// Total is the sum of the parts.
func (p MemoryParts) Total() int64 {
	return p.RAM + p.Ring + p.ImageMemTable + p.ImageBlockCache + p.FlashIndex + p.Files + p.FlashHits + p.EdgeFills + p.RAMFiles + p.PageCache
}

// HitMemory is the bound on the bytes of flash hits' buffers in flight
// (FlashHitMemory): as set, or a quarter of the RAM pool's budget within
// 16 and 256 MiB (64 MiB for the default 256 MiB pool), 0 without flash.
func (c *Config) HitMemory() int64 {
	switch {
	case c.NoFlash:
		return 0
	case c.FlashHitMemory > 0:
		return int64(c.FlashHitMemory)
	}
	return min(max(int64(c.RAM)/4, 16<<20), 256<<20)
}

// MemoryParts are c's caches' RAM budgets: the segment tier's pool (ram,
// as set: 0 before Resolve when it is left to the memory budget) and
// ring, the image store's memtable and block cache, the flash index, the
// flash hits' buffers in flight (HitMemory), an edge's upstream bodies
// being read ([edge] fill_memory), and with a bucket origin the
// whole-file tier's pool of pieces.
func (c *Config) MemoryParts() MemoryParts {
	p := MemoryParts{RAM: int64(c.RAM), Ring: int64(c.Ring), FlashHits: c.HitMemory()}
	if p.Ring == 0 {
		p.Ring = tier.DefaultRingBytes(int64(c.BlockSize)) // as the tier sizes it
	}
	if c.ImagesOff() == "" {
		o := c.Images.ImagesOptions(slog.New(slog.DiscardHandler))
		o.EnsureDefaults()
		p.ImageMemTable, p.ImageBlockCache = o.MemTableSize, o.BlockCacheSize
	}
	if !c.NoFlash && c.BlockSize > 0 {
		p.FlashIndex = int64(c.FlashSize) / int64(c.BlockSize) * FlashIndexPerBlock
	}
	if len(c.Upstreams) > 0 {
		p.EdgeFills = int64(c.Edge.FillMemory)
	}
	if c.RAMSendfile && p.RAM > 0 {
		p.RAMFiles = ramfile.Slack(p.RAM + p.Ring)
	}
	// The pool of pieces of files in a bucket, and interval caching's
	// buffers: [files] ram holds both.
	if m, err := c.FilesMechanism(); c.Origin != "" || (err == nil && m != files.MechanismLFU) {
		p.Files = int64(c.Files.RAM)
	}
	return p
}

// CacheBudget is the RAM the configuration gives the node's caches: the
// sum of its MemoryParts.
func (c *Config) CacheBudget() int64 { return c.MemoryParts().Total() }

// Memory budget sources (MemorySizing.Source).
const (
	MemoryFromKey  = "memory"
	MemoryFromNone = "none"
)

// MemorySizing is how a node's memory is split: the budget it was given
// (memory, or the cgroup's limit), the RAM tier and the other parts, and
// Go's memory limit.
type MemorySizing struct {
	// Budget is the memory budget, bytes; 0: none known.
	Budget int64
	// Source is where Budget comes from: "memory" (the key or
	// --memory), the cgroup file it was read from, or "none".
	Source string
	// RAMFrom says how the RAM tier was sized: "budget" (derived from
	// Budget), "ram" (set explicitly) or "default" (DefaultRAM, without
	// a budget).
	RAMFrom string
	// Parts are the caches' budgets, RAM the tier's pool.
	Parts MemoryParts
	// Headroom is MemoryHeadroom: the runtime and requests beyond the
	// caches.
	Headroom int64
	// OutsideGo is MemoryOutsideGo with a budget, 0 without.
	OutsideGo int64
	// GoLimit is Go's soft memory limit: Budget less OutsideGo, or
	// without a budget the caches plus Headroom. With ram_sendfile the
	// node lowers it, as it runs, by the bytes of RAM's memory files,
	// which are outside Go's heap (followRAMFiles).
	GoLimit int64
	// Over is by how much an explicit ram and the rest exceed Budget,
	// bytes; 0 when they fit.
	Over int64
}

// pageCacheRoom reports whether c's flash hits come from the page cache
// (flash_page_cache), which a budget then leaves room for.
func (c *Config) pageCacheRoom() bool { return c.FlashPageCache && c.FlashSendfile && !c.NoFlash }

// Need is the memory the sizing's parts need: caches, headroom and,
// with a budget, what is outside Go.
func (s MemorySizing) Need() int64 { return s.Parts.Total() + s.Headroom + s.OutsideGo }

// String is the sizing on one line, as the start banner shows it.
func (s MemorySizing) String() string {
	f := bytesize.Compact
	var b strings.Builder
	if s.Budget > 0 {
		fmt.Fprintf(&b, "budget %s (%s): ", f(s.Budget), s.Source)
	} else {
		b.WriteString("no budget: ")
	}
	p := s.Parts
	fmt.Fprintf(&b, "RAM tier %s (%s), ring %s", f(p.RAM), s.RAMFrom, f(p.Ring))
	if p.ImageMemTable+p.ImageBlockCache > 0 {
		fmt.Fprintf(&b, ", image memtable %s + block cache %s", f(p.ImageMemTable), f(p.ImageBlockCache))
	}
	if p.FlashIndex > 0 {
		fmt.Fprintf(&b, ", flash index %s", f(p.FlashIndex))
	}
	if p.Files > 0 {
		fmt.Fprintf(&b, ", files pool %s", f(p.Files))
	}
	if p.FlashHits > 0 {
		fmt.Fprintf(&b, ", flash hits %s", f(p.FlashHits))
	}
	if p.EdgeFills > 0 {
		fmt.Fprintf(&b, ", upstream bodies %s", f(p.EdgeFills))
	}
	if p.RAMFiles > 0 {
		fmt.Fprintf(&b, ", RAM files' slack %s", f(p.RAMFiles))
	}
	if p.PageCache > 0 {
		fmt.Fprintf(&b, ", page cache room %s", f(p.PageCache))
	}
	fmt.Fprintf(&b, ", headroom %s", f(s.Headroom))
	if s.OutsideGo > 0 {
		fmt.Fprintf(&b, ", outside Go %s", f(s.OutsideGo))
	}
	fmt.Fprintf(&b, "; Go memory limit %s", f(s.GoLimit))
	if s.Over > 0 {
		fmt.Fprintf(&b, "; OVER the budget by %s", f(s.Over))
	}
	return b.String()
}

// ParseMemory parses the memory key: a size, "auto" or "" (the cgroup's
// limit, if one is set), or "none" (no budget). It returns the size, 0 for
// none, and whether the cgroup is to be asked.
func ParseMemory(s string) (budget int64, auto bool, err error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "", "auto":
		return 0, true, nil
	case "none":
		return 0, false, nil
	}
	n, err := bytesize.Parse(s)
	if err != nil {
		return 0, false, fmt.Errorf("%w: --memory %q: want a size (640MiB), auto or none", ErrConfig, s)
	}
	return n, false, nil
}

// SizeMemory splits the memory budget (bytes; 0: none) among c's parts.
// With a budget and no ram set (c.RAM 0), the RAM tier is what the budget
// leaves after the other caches, MemoryHeadroom and MemoryOutsideGo, in
// whole MiB; a budget that leaves less than MinRAM is refused. An explicit
// ram is kept; Over says by how much it and the rest exceed the budget.
// With flash_page_cache and no ram set, the budget leaves the page cache
// as much room as the RAM tier (MemoryParts.PageCache), outside Go's
// limit. Without a budget an unset ram is DefaultRAM. Go's limit is the
// budget less MemoryOutsideGo and the page cache's room (the collector
// need not work harder while the node is within what it was given), or
// without a budget the caches plus MemoryHeadroom.
func SizeMemory(c Config, budget int64, source string) (MemorySizing, error) {
	s := MemorySizing{Budget: budget, Source: source, Headroom: MemoryHeadroom, RAMFrom: "ram"}
	if budget <= 0 {
		s.Budget, s.Source = 0, MemoryFromNone
		if c.RAM == 0 {
			c.RAM, s.RAMFrom = DefaultRAM, "default"
		}
		s.Parts = c.MemoryParts()
		s.GoLimit = s.Parts.Total() + s.Headroom
		return s, nil
	}
	s.OutsideGo = MemoryOutsideGo
	explicit := c.RAM
	parts := func(ram int64) MemoryParts {
		c.RAM = bytesize.Value(ram)
		p := c.MemoryParts()
		if explicit == 0 && c.pageCacheRoom() {
			p.PageCache = ram
		}
		return p
	}
	need := func(ram int64) int64 { return parts(ram).Total() + s.Headroom + s.OutsideGo }
	if minNeed := need(MinRAM); minNeed > budget {
		minNeed = (minNeed + 1<<20 - 1) &^ (1<<20 - 1) // whole MiB, up
		return s, fmt.Errorf("%w: the memory budget %s (from %s) is too small for this configuration: it needs at least %s "+
			"(a RAM tier of %s and %s besides it: the other caches, headroom and what is outside Go); set memory (--memory) to %s or more",
			ErrConfig, bytesize.Compact(budget), source, bytesize.Compact(minNeed), bytesize.Compact(MinRAM),
			bytesize.Compact(minNeed-MinRAM), bytesize.Compact(minNeed))
	}
	ram := int64(explicit)
	if explicit == 0 {
		// The largest whole MiB whose need fits: need grows with the pool
		// (by one byte a byte, or more where a part scales with it).
		lo, hi := int64(MinRAM>>20), budget>>20
		for lo < hi {
			mid := (lo + hi + 1) / 2
			if need(mid<<20) <= budget {
				lo = mid
			} else {
				hi = mid - 1
			}
		}
		ram, s.RAMFrom = lo<<20, "budget"
	}
	s.Over = max(need(ram)-budget, 0)
	s.Parts = parts(ram)
	s.GoLimit = budget - s.OutsideGo - s.Parts.PageCache
	return s, nil
}

// resolveMemory sizes c's memory (SizeMemory) from the memory key or,
// when it is auto, the limit of the process's cgroup read under
// cgroupRoot; it fills c.RAM when unset and keeps the sizing for
// SetMemoryLimit and the node's description.
func (c *Config) resolveMemory() error {
	budget, auto, err := ParseMemory(c.Memory)
	if err != nil {
		return err
	}
	source := MemoryFromKey
	if auto {
		// No readable cgroup is no budget: the node runs as it would
		// without one.
		limit, file, err := CgroupMemoryLimit(cgroupRoot)
		if err == nil && limit > 0 {
			budget, source = limit, "cgroup "+file
		}
	}
	s, err := SizeMemory(*c, budget, source)
	if err != nil {
		return err
	}
	c.RAM, c.sizing = bytesize.Value(s.Parts.RAM), &s
	return nil
}

// cgroupRoot is where CgroupMemoryLimit reads /proc and /sys: "/", a
// fixture directory in tests.
var cgroupRoot = "/"

// MemorySizing is the sizing Resolve made; without Resolve, the one of c
// as it is, without a budget.
func (c *Config) MemorySizing() MemorySizing {
	if c.sizing != nil {
		return *c.sizing
	}
	s, _ := SizeMemory(*c, 0, MemoryFromNone)
	return s
}

// logMemory logs the sizing at start, and a warning when an explicit ram
// and the rest exceed the budget.
func logMemory(log *slog.Logger, s MemorySizing) {
	p := s.Parts
	log.Info("memory", "budget", s.Budget, "source", s.Source, "ram", p.RAM, "ram_from", s.RAMFrom,
		"ring", p.Ring, "image_memtable", p.ImageMemTable, "image_block_cache", p.ImageBlockCache,
		"flash_index", p.FlashIndex, "files_pool", p.Files, "flash_hits", p.FlashHits, "edge_fills", p.EdgeFills, "ram_files_slack", p.RAMFiles, "page_cache", p.PageCache, "headroom", s.Headroom, "outside_go", s.OutsideGo,
		"go_limit", s.GoLimit)
	if s.Over > 0 {
		log.Warn("ram and the rest of the node's memory exceed the memory budget: the kernel may kill the node under load; lower ram or leave it to the budget",
			"ram", p.RAM, "need", s.Need(), "budget", s.Budget, "source", s.Source, "over", s.Over)
	}
}

// SetMemoryLimit makes the Go collector keep the process's memory within
// the sizing's Go limit (MemorySizing: the memory budget less
// MemoryOutsideGo, or the caches' budgets plus MemoryHeadroom), by debug.SetMemoryLimit, a
// soft limit, unless GOMEMLIMIT already set one: without it the heap of a
// full RAM pool grows to twice the pool between collections (a 256 MiB
// pool held 700 MiB resident under the soak). The collector's GOGC is
// left at Go's default (or the environment's): at 400 the heap leaned on
// the limit, which the runtime gives up under CPU overload, and the
// soak's node reached 1,009 MiB resident against 265 (decision 0048).
// It returns the limit.
func SetMemoryLimit(c *Config) int64 {
	if os.Getenv("GOMEMLIMIT") != "" {
		return debug.SetMemoryLimit(-1)
	}
	limit := c.MemorySizing().GoLimit
	if limit <= 0 {
		limit = math.MaxInt64
	}
	debug.SetMemoryLimit(limit)
	return limit
}

// followRAMFiles lowers Go's memory limit (Options.GoLimit) by the bytes
// of RAM's memory files as they come and go (every quarter second, when
// they changed by a MiB or more), down to MemoryHeadroom at least: the
// files are outside Go's heap, and RAM's objects below their minimum or
// past their limit stay in it, so that neither kind is squeezed by a
// limit sized for the other. It returns the function that stops it and
// restores the limit; it does nothing without Options.GoLimit or files.
func (n *Node) followRAMFiles(ctx context.Context) (stop func()) {
	base := n.opts.GoLimit
	if base <= 0 || base == math.MaxInt64 {
		return func() {}
	}
	if _, ok := n.eng.RAMFiles(); !ok {
		return func() {}
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(250 * time.Millisecond)
		defer t.Stop()
		last := int64(-1)
		for {
			st, _ := n.eng.RAMFiles()
			if d := st.Bytes - last; d >= 1<<20 || d <= -(1<<20) || last < 0 {
				debug.SetMemoryLimit(max(base-st.Bytes, MemoryHeadroom))
				last = st.Bytes
			}
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	}()
	return func() {
		cancel()
		<-done
		debug.SetMemoryLimit(base)
	}
}

// memoryStatsSection is GET /stats's "memory" section: the sizing, bytes.
type memoryStatsSection struct {
	Budget          int64  `json:"budget_bytes"`
	Source          string `json:"source"`
	RAM             int64  `json:"ram_bytes"`
	RAMFrom         string `json:"ram_from"`
	Ring            int64  `json:"ring_bytes"`
	ImageMemTable   int64  `json:"image_memtable_bytes"`
	ImageBlockCache int64  `json:"image_block_cache_bytes"`
	FlashIndex      int64  `json:"flash_index_bytes"`
	Files           int64  `json:"files_pool_bytes"`
	FlashHits       int64  `json:"flash_hits_bytes"`
	EdgeFills       int64  `json:"edge_fills_bytes"`
	RAMFiles        int64  `json:"ram_files_slack_bytes"`
	PageCache       int64  `json:"page_cache_bytes"`
	Headroom        int64  `json:"headroom_bytes"`
	OutsideGo       int64  `json:"outside_go_bytes"`
	GoLimit         int64  `json:"go_limit_bytes"`
	Over            int64  `json:"over_bytes"`
	// GCPercent is the collector's GOGC now (Go's 100 unless GOGC is
	// set), -1 when off.
	GCPercent int64 `json:"go_gc_percent"`
}

// memoryStats mounts the "memory" section of GET /stats: how s split the
// node's memory, and the collector's GOGC at the time.
func memoryStats(s MemorySizing) httpapi.Module {
	sec := memorySection(s)
	return httpapi.ModuleFunc(func(m *httpapi.Mounter) { m.Stats("memory", sec.now) })
}

// memorySection is the section of s, without its GOGC.
func memorySection(s MemorySizing) memoryStatsSection {
	p := s.Parts
	return memoryStatsSection{Budget: s.Budget, Source: s.Source, RAM: p.RAM, RAMFrom: s.RAMFrom, Ring: p.Ring,
		ImageMemTable: p.ImageMemTable, ImageBlockCache: p.ImageBlockCache, FlashIndex: p.FlashIndex, Files: p.Files, FlashHits: p.FlashHits, EdgeFills: p.EdgeFills, RAMFiles: p.RAMFiles, PageCache: p.PageCache,
		Headroom: s.Headroom, OutsideGo: s.OutsideGo, GoLimit: s.GoLimit, Over: s.Over}
}

// now is sec with the collector's GOGC now.
func (sec memoryStatsSection) now() any {
	sec.GCPercent = gcPercent()
	return sec
}

// gcPercent is the collector's GOGC now, -1 when it is off.
func gcPercent() int64 {
	sample := []metrics.Sample{{Name: "/gc/gogc:percent"}}
	metrics.Read(sample)
	if sample[0].Value.Kind() != metrics.KindUint64 || sample[0].Value.Uint64() > math.MaxInt32 {
		return -1
	}
	return int64(sample[0].Value.Uint64())
}
