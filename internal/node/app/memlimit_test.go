package app

import (
	"context"
	"errors"
	"net/http/httptest"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"
	"time"

	"github.com/strata-media/strata/internal/bytesize"
	"github.com/strata-media/strata/internal/storage/ramfile"
)

// The default configuration's cache budget: a 256 MiB RAM pool, a ring of
// two 4 MiB blocks, the image LSM's 64 MiB memtable and 64 MiB block cache,
// 4 KiB for each of the 512 blocks of the 2 GiB flash cache, 64 MiB
// of flash hit buffers (a quarter of the pool), and [files] ram for
// interval caching's buffers (the default mechanism, both, has them).
func TestCacheBudget(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Memory = "none"
	if err := cfg.Resolve(); err != nil {
		t.Fatal(err)
	}
	slack := ramfile.Slack(256<<20 + 16<<20) // RAM's memory files past the tier and the ring
	want := int64(256<<20+16<<20+128<<20+512*4<<10+64<<20) + int64(cfg.Files.RAM) + slack
	if got := cfg.CacheBudget(); got != want {
		t.Fatalf("budget %d, want %d", got, want)
	}
	cfg.NoFlash, cfg.Ring = true, 1<<20
	want += ramfile.Slack(256<<20+1<<20) - slack
	if got := cfg.CacheBudget(); got != want-15<<20-512*4<<10-64<<20 {
		t.Fatalf("without flash, a 1 MiB ring: budget %d", got)
	}
	cfg.Images.Disabled = true
	if got := cfg.CacheBudget(); got != want-15<<20-512*4<<10-64<<20-128<<20 {
		t.Fatalf("without flash and images, a 1 MiB ring: budget %d", got)
	}
	cfg.NoFlash = false
	for _, c := range []struct{ ram, set, want int64 }{
		{256 << 20, 0, 64 << 20}, {16 << 20, 0, 16 << 20}, {4 << 30, 0, 256 << 20}, {256 << 20, 8 << 20, 8 << 20},
	} {
		cfg.RAM, cfg.FlashHitMemory = bytesize.Value(c.ram), bytesize.Value(c.set)
		if got := cfg.HitMemory(); got != c.want {
			t.Errorf("ram %d, flash_hit_memory %d: hit memory %d, want %d", c.ram, c.set, got, c.want)
		}
	}
}

const mib = 1 << 20

// SizeMemory splits a budget: the RAM tier is what the budget leaves after
// the rest (the default configuration's rest: ring 16 MiB, image store
// 128 MiB, flash index 2 MiB, headroom 64 MiB, 32 MiB outside Go: 242 MiB,
// flash hit buffers of a quarter of the tier within 16 and 256 MiB, and
// the slack of RAM's memory files, a thirty-second of the tier and the
// ring and 8 MiB), in whole MiB; an explicit ram is kept, flagged when
// over; a budget that leaves less than MinRAM is refused.
func TestSizeMemory(t *testing.T) {
	// The arithmetic without interval buffers (mechanism lfu); the
	// default mechanism's [files] ram is its own row.
	def := DefaultConfig()
	def.Files.Mechanism = "lfu"
	noImages := def
	noImages.Images.Disabled, noImages.NoFlash = true, true
	withFiles := def
	withFiles.Origin, withFiles.Files.RAM = "s3://b/p", 100*mib
	edgeDefault := DefaultConfig()
	edgeDefault.Upstreams = []UpstreamConfig{{Prefix: "/", URL: "http://127.0.0.1:1/"}}
	edgeBoth := edgeDefault
	edgeBoth.Files.Mechanism = "both"
	edgeImages := edgeDefault
	edgeImages.Images.Enabled = true
	edgeS3 := edgeDefault
	edgeS3.Origin, edgeS3.Files.RAM = "s3://b/p", 100*mib
	for _, c := range []struct {
		name      string
		cfg       Config
		ram       int64 // explicit; 0: unset
		budget    int64
		wantRAM   int64
		from      string
		goLimit   int64
		over      int64
		errSubstr string // a refusal's message names the key and the minimum
	}{
		{name: "no budget, default", cfg: def, wantRAM: 256 * mib, from: "default", goLimit: (256+146+64+64)*mib + (256+16)*mib/32 + 8*mib},
		{name: "no budget, explicit", cfg: def, ram: 1 << 30, wantRAM: 1 << 30, from: "ram", goLimit: (1024+146+256+64)*mib + (1024+16)*mib/32 + 8*mib},
		{name: "640MiB", cfg: def, budget: 640 * mib, wantRAM: 304 * mib, from: "budget", goLimit: 608 * mib},
		{name: "not whole MiB", cfg: def, budget: 640*mib + 777, wantRAM: 304 * mib, from: "budget", goLimit: 608*mib + 777},
		{name: "4GiB", cfg: def, budget: 4 << 30, wantRAM: 3480 * mib, from: "budget", goLimit: (4096 - 32) * mib},
		{name: "no images, no flash", cfg: noImages, budget: 640 * mib, wantRAM: 503 * mib, from: "budget", goLimit: 608 * mib},
		{name: "files pool with a bucket", cfg: withFiles, budget: 640 * mib, wantRAM: 225 * mib, from: "budget", goLimit: 608 * mib},
		{name: "interval buffers, the default", cfg: DefaultConfig(), budget: 640 * mib, wantRAM: 254 * mib, from: "budget", goLimit: 608 * mib},
		// An edge: no interval buffers, no image store (its 128 MiB go
		// to the tier), 32 MiB of upstream bodies being read:
		// 378 + 94.5 + 20.3 <= 640 - 32 - 64 - 16 - 2 - 32.
		{name: "an edge, the default: no interval buffers, no images", cfg: edgeDefault, budget: 640 * mib, wantRAM: 378 * mib, from: "budget", goLimit: 608 * mib},
		{name: "an edge with images enabled", cfg: edgeImages, budget: 640 * mib, wantRAM: 279 * mib, from: "budget", goLimit: 608 * mib},
		{name: "an edge with interval caching set", cfg: edgeBoth, budget: 640 * mib, wantRAM: 328 * mib, from: "budget", goLimit: 608 * mib},
		// With a bucket origin the node has media of its own: images on.
		{name: "an edge with a bucket origin", cfg: edgeS3, budget: 640 * mib, wantRAM: 200 * mib, from: "budget", goLimit: 608 * mib},
		{name: "the smallest", cfg: def, budget: 300 * mib, wantRAM: MinRAM, from: "budget", goLimit: 268 * mib},
		{name: "explicit within", cfg: def, ram: 192 * mib, budget: 640 * mib, wantRAM: 192 * mib, from: "ram", goLimit: 608 * mib},
		{name: "explicit over", cfg: def, ram: 512 * mib, budget: 640 * mib, wantRAM: 512 * mib, from: "ram", goLimit: 608 * mib, over: 242*mib + (512+16)*mib/32 + 8*mib},
		{name: "too small", cfg: def, budget: 299 * mib, errSubstr: "set memory (--memory) to 300MiB or more"},
		{name: "too small, explicit ram", cfg: def, ram: 64 * mib, budget: 200 * mib, errSubstr: "300MiB"},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg := c.cfg
			cfg.RAM = bytesize.Value(c.ram)
			s, err := SizeMemory(cfg, c.budget, MemoryFromKey)
			if c.errSubstr != "" {
				if err == nil || !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), c.errSubstr) {
					t.Fatalf("err %v, want ErrConfig with %q", err, c.errSubstr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if s.Parts.RAM != c.wantRAM || s.RAMFrom != c.from || s.GoLimit != c.goLimit || s.Over != c.over {
				t.Fatalf("ram %s from %s, Go limit %s, over %s; want %s from %s, %s, %s", bytesize.Compact(s.Parts.RAM), s.RAMFrom,
					bytesize.Compact(s.GoLimit), bytesize.Compact(s.Over), bytesize.Compact(c.wantRAM), c.from,
					bytesize.Compact(c.goLimit), bytesize.Compact(c.over))
			}
			if c.budget > 0 && c.ram == 0 {
				if s.Need() > c.budget {
					t.Fatalf("need %d over budget %d", s.Need(), c.budget)
				}
				bigger := cfg
				bigger.RAM = bytesize.Value(s.Parts.RAM + mib)
				if more, _ := SizeMemory(bigger, c.budget, MemoryFromKey); more.Over == 0 {
					t.Fatalf("a RAM tier 1 MiB larger (%s) still fits: the budget is not used", bytesize.Compact(int64(bigger.RAM)))
				}
			}
		})
	}
}

func TestParseMemory(t *testing.T) {
	for _, c := range []struct {
		in     string
		budget int64
		auto   bool
		bad    bool
	}{
		{in: "", auto: true}, {in: "auto", auto: true}, {in: " Auto ", auto: true}, {in: "none"},
		{in: "640MiB", budget: 640 * mib}, {in: "1G", budget: 1 << 30}, {in: "lots", bad: true}, {in: "-1", bad: true},
	} {
		b, auto, err := ParseMemory(c.in)
		if (err != nil) != c.bad || b != c.budget || auto != c.auto {
			t.Errorf("%q: %d, auto %v, err %v", c.in, b, auto, err)
		}
		if err != nil && !strings.Contains(err.Error(), "--memory") {
			t.Errorf("%q: error %v does not name --memory", c.in, err)
		}
	}
}

// The cgroup's limit read from fixtures of /proc/self/cgroup and the
// cgroup file systems (testdata/cgroup): v1 with the group's limit and its
// ancestors' "no limit" (the page counter's maximum), v1 with no limit at
// all, a parent's smaller limit, a container whose mount is its group,
// v2 with a limit and with "max", and a malformed value.
func TestCgroupMemoryLimit(t *testing.T) {
	for _, c := range []struct {
		dir   string
		limit int64
		file  string
		bad   bool
	}{
		{dir: "v1", limit: 640 * mib, file: "/sys/fs/cgroup/memory/strata-peers/strata/memory.limit_in_bytes"},
		{dir: "v1-nolimit"},
		{dir: "v1-parent", limit: 512 * mib, file: "/sys/fs/cgroup/memory/box/memory.limit_in_bytes"},
		{dir: "v1-container", limit: 1 << 30, file: "/sys/fs/cgroup/memory/memory.limit_in_bytes"},
		{dir: "v2", limit: 640 * mib, file: "/sys/fs/cgroup/system.slice/strata.service/memory.max"},
		{dir: "v2-max"},
		{dir: "v2-bad", bad: true},
		{dir: "missing", bad: true},
	} {
		limit, file, err := CgroupMemoryLimit(filepath.Join("testdata/cgroup", c.dir))
		if (err != nil) != c.bad || limit != c.limit || file != c.file {
			t.Errorf("%s: limit %d from %q, err %v; want %d from %q", c.dir, limit, file, err, c.limit, c.file)
		}
	}
}

// Resolve with memory auto takes the cgroup's limit as the budget and
// sizes the RAM tier from it; an explicit size takes precedence over the
// cgroup, and none ignores it.
func TestResolveMemoryFromCgroup(t *testing.T) {
	old := cgroupRoot
	cgroupRoot = "testdata/cgroup/v1"
	defer func() { cgroupRoot = old }()
	for _, c := range []struct {
		memory  string
		ram     bytesize.Value
		budget  int64
		source  string
		wantRAM int64
	}{
		{memory: "auto", budget: 640 * mib, source: "cgroup /sys/fs/cgroup/memory/strata-peers/strata/memory.limit_in_bytes", wantRAM: 254 * mib},
		{memory: "1GiB", budget: 1 << 30, source: "memory", wantRAM: 553 * mib},
		{memory: "none", source: "none", wantRAM: DefaultRAM},
		{memory: "auto", ram: 100 * mib, budget: 640 * mib, source: "cgroup /sys/fs/cgroup/memory/strata-peers/strata/memory.limit_in_bytes", wantRAM: 100 * mib},
	} {
		cfg := DefaultConfig()
		cfg.Data, cfg.Memory, cfg.RAM = t.TempDir(), c.memory, c.ram
		if err := cfg.Resolve(); err != nil {
			t.Fatal(err)
		}
		s := cfg.MemorySizing()
		if s.Budget != c.budget || s.Source != c.source || int64(cfg.RAM) != c.wantRAM || s.Parts.RAM != c.wantRAM {
			t.Errorf("memory %q ram %d: budget %d from %q, ram %d (sizing %d); want %d from %q, ram %d",
				c.memory, c.ram, s.Budget, s.Source, cfg.RAM, s.Parts.RAM, c.budget, c.source, c.wantRAM)
		}
	}
	cfg := DefaultConfig()
	cfg.Memory = "200MiB"
	if err := cfg.Resolve(); err == nil || !strings.Contains(err.Error(), "memory (--memory)") {
		t.Fatalf("a 200 MiB budget: %v, want a refusal naming memory", err)
	}
}

// SetMemoryLimit sets Go's limit to the sizing's, within the budget, and
// leaves the collector's GOGC alone; /stats reports the GOGC in force.
func TestSetMemoryLimitWithinBudget(t *testing.T) {
	t.Setenv("GOMEMLIMIT", "")
	t.Setenv("GOGC", "")
	prev := debug.SetMemoryLimit(-1)
	defer debug.SetMemoryLimit(prev)
	prevGC := debug.SetGCPercent(100)
	defer debug.SetGCPercent(prevGC)
	cfg := DefaultConfig()
	cfg.Memory = "640MiB"
	if err := cfg.Resolve(); err != nil {
		t.Fatal(err)
	}
	if got := SetMemoryLimit(&cfg); got != 608*mib || debug.SetMemoryLimit(-1) != 608*mib {
		t.Fatalf("limit %d, want %d", got, 608*mib)
	}
	if got := gcPercent(); got != 100 {
		t.Fatalf("GOGC %d after SetMemoryLimit, want Go's 100 left alone", got)
	}
	if got := memoryStatsOf(cfg.MemorySizing()).GCPercent; got != 100 {
		t.Fatalf("/stats memory.go_gc_percent %d, want 100", got)
	}
	debug.SetGCPercent(-1)
	if got := memoryStatsOf(cfg.MemorySizing()).GCPercent; got != -1 {
		t.Fatalf("/stats memory.go_gc_percent %d with the collector off, want -1", got)
	}
}

// memoryStatsOf is the "memory" section of GET /stats for s, now.
func memoryStatsOf(s MemorySizing) memoryStatsSection {
	return memorySection(s).now().(memoryStatsSection)
}

// The banner's line names the budget, its source and every part the node
// has, and leaves out those it has not.
func TestMemorySizingString(t *testing.T) {
	cfg := DefaultConfig()
	s, err := SizeMemory(cfg, 640*mib, "cgroup /sys/fs/cgroup/memory/x/memory.limit_in_bytes")
	if err != nil {
		t.Fatal(err)
	}
	line := s.String()
	for _, want := range []string{"budget 640MiB (cgroup /sys/fs/cgroup/memory/x/memory.limit_in_bytes): RAM tier 254MiB (budget)", "RAM files' slack 16.4MiB", "files pool 64MiB",
		"ring 16MiB", "image memtable 64MiB + block cache 64MiB", "flash index 2MiB", "headroom 64MiB", "outside Go 32MiB",
		"Go memory limit 608MiB"} {
		if !strings.Contains(line, want) {
			t.Errorf("%q lacks %q", line, want)
		}
	}
	cfg.Images.Disabled, cfg.NoFlash = true, true
	s, _ = SizeMemory(cfg, 0, MemoryFromNone)
	if line := s.String(); strings.Contains(line, "image") || strings.Contains(line, "flash") || !strings.HasPrefix(line, "no budget: RAM tier 256MiB (default)") {
		t.Errorf("without a budget, images or flash: %q", line)
	}
}

// With flash_page_cache, a budget that sizes the RAM tier leaves the page
// cache as much room as the tier, outside Go's limit: an edge's 640 MiB
// (its rest 114 MiB: ring, flash index, headroom and outside Go; flash
// hit buffers a quarter of the tier, RAM's memory files' slack) is a
// 226 MiB tier, 56.5 MiB of hit buffers and 226 MiB of page cache room,
// under a Go limit of 608 - 226 MiB (237 in the hot benchmark's run D,
// before the files' slack and the ring's 16 MiB were counted). An explicit ram leaves
// no room of its own, nor does a node without flash_sendfile or flash.
func TestSizeMemoryPageCacheRoom(t *testing.T) {
	edge := DefaultConfig()
	edge.Upstreams = []UpstreamConfig{{Prefix: "/", URL: "http://127.0.0.1:1/"}}
	edge.FlashPageCache = true
	s, err := SizeMemory(edge, 640*mib, MemoryFromKey)
	if err != nil {
		t.Fatal(err)
	}
	if p := s.Parts; p.RAM != 212*mib || p.PageCache != 212*mib || p.FlashHits != 212*mib/4 || p.EdgeFills != 32*mib || s.GoLimit != (608-212)*mib || s.Need() > 640*mib {
		t.Fatalf("sizing %s", s)
	}
	if !strings.Contains(s.String(), "page cache room 212MiB") || !strings.Contains(s.String(), "upstream bodies 32MiB") {
		t.Fatalf("the start banner's sizing does not show the page cache's room: %s", s)
	}
	for name, mod := range map[string]func(*Config){
		"explicit ram":     func(c *Config) { c.RAM = 192 * mib },
		"no sendfile":      func(c *Config) { c.FlashSendfile = false },
		"no flash":         func(c *Config) { c.NoFlash = true },
		"page cache unset": func(c *Config) { c.FlashPageCache = false },
	} {
		c := edge
		mod(&c)
		s, err := SizeMemory(c, 640*mib, MemoryFromKey)
		if err != nil || s.Parts.PageCache != 0 || s.GoLimit != 608*mib {
			t.Errorf("%s: %v, sizing %s", name, err, s)
		}
	}
}

// followRAMFiles lowers Go's memory limit by the bytes of RAM's memory
// files while the node serves, and restores it after.
func TestFollowRAMFiles(t *testing.T) {
	orig := debug.SetMemoryLimit(-1)
	defer debug.SetMemoryLimit(orig)
	const base = 1 << 30
	n, _ := edgeNodes(t, "/edge/", func(c *Config) { c.RAM = 16 << 20 }, Options{Logger: quiet, GoLimit: base})
	stop := n.followRAMFiles(context.Background())
	h := n.handler()
	for _, p := range []string{"/edge/seg.m4s", "/edge/big.mp4"} { // 100 KiB and 2 MiB
		for range 2 {
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest("GET", p, nil))
			if rec.Code != 200 {
				t.Fatalf("%s: %d", p, rec.Code)
			}
		}
	}
	st, ok := n.eng.RAMFiles()
	if !ok || st.Bytes == 0 {
		t.Fatalf("no memory files: %+v", st)
	}
	// The files can go as far past the tier and the ring as the memory
	// sizing counts them: the arena's limit is the sizing's.
	if p := n.cfg.MemoryParts(); p.RAMFiles == 0 || st.LimitBytes != p.RAM+p.Ring+p.RAMFiles {
		t.Fatalf("files' limit %d, the sizing's RAM %d + ring %d + files' slack %d", st.LimitBytes, p.RAM, p.Ring, p.RAMFiles)
	}
	for stop := time.Now().Add(5 * time.Second); debug.SetMemoryLimit(-1) != base-st.Bytes; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(stop) {
			t.Fatalf("Go's limit %d, want %d less the files' %d bytes", debug.SetMemoryLimit(-1), base, st.Bytes)
		}
		st, _ = n.eng.RAMFiles()
	}
	stop()
	if got := debug.SetMemoryLimit(-1); got != base {
		t.Fatalf("Go's limit %d after, want %d", got, base)
	}
}
