package streamsim

import "strings"

// Kind is what a write is to the system that issues it, the columns of the
// paper's Table 1: the file system's own data, an application's log, or an
// application's data.
type Kind uint8

// The kinds of writes.
const (
	// kindData is application data (SSTables, cache blocks, files).
	kindData Kind = iota
	// kindLog is an application's log or metadata journal (Cassandra's
	// CommitLog, an LSM write-ahead log, the segment cache's metadata).
	kindLog
	// kindSystem is data the workload did not create: file system
	// metadata and journal, and whatever else was on the drive.
	kindSystem
)

var kindNames = [...]string{"data", "log", "system"}

// String returns "data", "log" or "system".
func (k Kind) String() string { return kindNames[k] }

// Rank is a lifetime class, in the order of Linux's RWH_WRITE_LIFE_*
// hints: the expected time until the data is overwritten or deleted.
type Rank uint8

// The lifetime ranks.
const (
	short Rank = iota
	medium
	long
	extreme
)

var rankNames = [...]string{"short", "medium", "long", "extreme"}

// String returns "short", "medium", "long" or "extreme".
func (r Rank) String() string { return rankNames[r] }

// A Class is the lifetime class a write is tagged with: its name as the
// writer labelled it (a trace's class column, e.g. "lsm-l0"), what kind of
// write it is and its lifetime rank.
type Class struct {
	Name string
	Kind Kind
	Rank Rank
}

// ClassOf interprets a write trace's device and class names. Known names:
// the kernel's hint names (short, medium, long, extreme; not-set and none
// are medium-lived data, as an unhinted write is to a drive that must
// guess), the LSM classes of the stream-mapping study (lsm-wal short log, lsm-l0 medium,
// lsm-l1+ long, vlog long), and devices whose name ends in "-meta",
// "-wal" or "journal" (logs). Anything else is medium-lived data, and
// keeps its name so the report can show it.
func ClassOf(device, class string) Class {
	c := Class{Name: class, Kind: kindData, Rank: medium}
	switch {
	case class == "system" || device == "system":
		c.Kind, c.Rank = kindSystem, short
	case isLogName(device) || isLogName(class):
		c.Kind, c.Rank = kindLog, short
	default:
		c.Rank = rankOfName(class)
	}
	return c
}

func isLogName(s string) bool {
	for _, suffix := range []string{"-meta", "-wal", "wal", "journal", "commitlog"} {
		if strings.HasSuffix(s, suffix) {
			return true
		}
	}
	return false
}

// rankOfName is the lifetime rank a class name implies, Medium if none.
func rankOfName(s string) Rank {
	switch s {
	case "short":
		return short
	case "long", "vlog", "lsm-l1+", "files":
		return long
	case "extreme":
		return extreme
	}
	if strings.HasPrefix(s, "lsm-l") && s != "lsm-l0" {
		return long // lsm-l1, lsm-l2, ...
	}
	return medium
}

// MappingName names a way of assigning streams to writes.
type MappingName string

// The mappings of the paper's Table 1, the automatic in-device stream
// detection of §4.2, and the streams a live trace recorded.
const (
	// Normal puts everything in stream 0: a conventional SSD.
	Normal MappingName = "Normal"
	// single puts application writes in stream 1, apart from system data.
	single MappingName = "Single"
	// multiLog also separates the application's logs: stream 1 for logs,
	// 2 for data.
	multiLog MappingName = "Multi-Log"
	// MultiData separates each lifetime class: logs and short-lived data
	// in 1, medium 2, long 3, extreme 4 (Cassandra: flushed SSTables 2,
	// compaction tiers 3-4; LSM levels each on their own stream).
	MultiData MappingName = "Multi-Data"
	// Auto is the paper's in-device detection: up to four concurrent
	// sequential patterns get streams 1-4, replaced least recently used;
	// everything else goes to 0. It ignores the classes.
	Auto MappingName = "Auto-detect"
	// traced uses the stream each write of a trace recorded.
	traced MappingName = "Traced"
)

// Streams is the number of write streams of the paper's prototype: four
// on top of the default one (MS §3.2).
const Streams = 5

// A Mapping assigns a write its stream, in submission order.
type Mapping interface {
	Stream(op *Op) int
}

// newMapping returns the named mapping, fresh.
func newMapping(name MappingName) Mapping {
	switch name {
	case Auto:
		return newDetector(4, 16)
	case traced:
		return tracedMapping{}
	}
	return semantic(name)
}

// semantic is a stateless mapping of Table 1.
type semantic MappingName

// Stream implements Mapping.
func (m semantic) Stream(op *Op) int {
	c := op.Class
	if MappingName(m) == Normal || c.Kind == kindSystem {
		return 0
	}
	switch MappingName(m) {
	case single:
		return 1
	case multiLog:
		if c.Kind == kindLog {
			return 1
		}
		return 2
	}
	if c.Kind == kindLog {
		return 1
	}
	return 1 + int(c.Rank)
}

// tracedMapping uses the recorded stream, folded into the drive's streams.
type tracedMapping struct{}

// Stream implements Mapping.
func (tracedMapping) Stream(op *Op) int { return op.Stream % Streams }
