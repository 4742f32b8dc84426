// Package streamsim is the multi-streamed SSD experiment (Kang et al.,
// HotStorage'14, §4): it replays lifetime-tagged write traffic (live write
// traces and the simulator's own workloads) into the page-mapped FTL model
// of internal/storage/model under the paper's stream mappings (Table 1) and reports
// write amplification, garbage-collection copies, erases, projected
// lifetime, throughput over time and tail write latency (strata-lab sim
// streams).
//
// Each workload is a set of closed-loop threads (Engine) issuing writes,
// reads and trims tagged with a lifetime Class; a Mapping turns the class
// (or, for Auto-detect, the address pattern) into a stream of the drive.
// The workloads: a Cassandra-like store with size-tiered compaction on an
// ext4-like file system (MS §4's experiment), the image store's Badger-like
// leveled LSM, the FlashStream segment cache driven through the real tier
// core, a flashcache-like 4 KiB random-write cache, and live write traces.
package streamsim
