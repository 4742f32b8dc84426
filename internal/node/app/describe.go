package app

import "github.com/strata-media/strata/internal/node/engine"

// Description says what Open opened, for strata serve's start banner.
type Description struct {
	// Data is the data directory.
	Data string
	// RAMBytes is the RAM buffer pool budget.
	RAMBytes int64
	// Memory is how the node's memory is split: budget, RAM tier, the
	// other parts, Go's memory limit.
	Memory MemorySizing
	// Policy is the flash block replacement policy.
	Policy string
	// Flash describes the segment cache's flash device.
	Flash FlashDescription
	// Engine is the segment engine's state after recovery.
	Engine engine.Stats
	// Capacity describes the capacity tier.
	Capacity CapacityDescription
	// Upstreams are edge mode's upstreams; none without edge mode.
	Upstreams []UpstreamConfig
	// Images describes the image store; nil when the node opens none,
	// ImagesOff says why.
	Images    *ImagesDescription
	ImagesOff string
	// Files describes the whole-file tier.
	Files FilesDescription
	// AdminTokenFile is where the admin token is kept; "" when it comes
	// from the configuration.
	AdminTokenFile string
	// URL is the HTTP API's base URL ("http://127.0.0.1:8080").
	URL string
	// DebugAddr is the pprof listener's address; "" when off.
	DebugAddr string
	// Serving says how the listener speaks HTTP and which reads need a
	// signed URL.
	Serving ServingDescription
}

// FlashDescription describes the segment cache's flash device.
type FlashDescription struct {
	Path                string
	Disabled            bool  // --no-flash
	Size                int64 // bytes
	BlockDevice, Direct bool  // a block device; opened O_DIRECT
	PageCache           bool  // hits sent from a buffered descriptor (flash_page_cache)
	PageCacheEnds       bool  // hits' headers and unaligned ends read through it (flash_page_cache_ends)
	WriteHint           string
	UtilizationDevice   string // /dev name whose io_ticks feed admission; "" if none
	UtilizationErr      string // why there is none
	WriteStreams        string
}

// CapacityDescription describes the capacity tier.
type CapacityDescription struct {
	Dir       string                // "" with an S3 capacity tier
	S3        string                // the bucket, endpoint and credential source, no secret; "" for a directory
	Titles    int                   // titles in Dir at start
	Synthetic *SyntheticDescription // nil without a synthetic library
}

// SyntheticDescription describes a synthetic library served beside the
// capacity directory.
type SyntheticDescription struct {
	Titles int
	Bytes  int64
	File   string // its description, <data>/synthetic.json
}

// ImagesDescription describes the image store.
type ImagesDescription struct {
	LSM, VLog     string
	SizeThreshold int64 // bytes: variants this large and more are in VLog
	NoSync        bool
	Ladder        string
	// Bucket holds the variants of SizeThreshold bytes and more as
	// objects (with an S3 origin); VLog then holds those stored before.
	Bucket string
}

// FilesDescription describes the whole-file tier.
type FilesDescription struct {
	Dir            string
	DiskBandwidth  int64  // bytes/s
	Flash          string // "" without flash copies
	FlashSize      int64  // bytes
	FlashBandwidth int64  // bytes/s
}
