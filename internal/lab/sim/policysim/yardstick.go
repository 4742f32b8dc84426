package policysim

// Yardstick is libCacheSim's run of one workload's trace
// (scripts/policies-libcachesim.py): object-level policies at the same
// total cache size, counted over the same requests.
type Yardstick struct {
	CacheSize int64 `json:"cache_size"`
	Requests  int64 `json:"requests"`
	// Policies maps libCacheSim's policy name to its ratios.
	Policies map[string]yardstickResult `json:"policies"`
}

// yardstickResult is one libCacheSim policy's outcome.
type yardstickResult struct {
	HitRatio     float64 `json:"hit_ratio"`
	ByteHitRatio float64 `json:"byte_hit_ratio"`
}
