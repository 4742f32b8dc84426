package loadgen

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"time"
)

// statsTimeout bounds one GET /stats.
const statsTimeout = 5 * time.Second

// maxStatsBytes bounds the /stats document.
const maxStatsBytes = 16 << 20

// serverStats reads GET base/stats and flattens its numeric leaves; nil
// when the server has no usable /stats: the server's view is optional.
func serverStats(ctx context.Context, client *http.Client, base string) map[string]float64 {
	ctx, cancel := context.WithTimeout(ctx, statsTimeout)
	defer cancel()
	body, err := getBody(ctx, client, base+"/stats", maxStatsBytes)
	if err != nil {
		return nil
	}
	var doc any
	if err := json.Unmarshal(body, &doc); err != nil {
		return nil
	}
	leaves := map[string]float64{}
	flatten("", doc, leaves)
	return leaves
}

// flatten adds v's numeric leaves to into, keyed by dotted path; arrays
// index by position. Other leaves (strings, booleans, null) are skipped.
func flatten(prefix string, v any, into map[string]float64) {
	switch v := v.(type) {
	case float64:
		into[prefix] = v
	case map[string]any:
		for k, c := range v {
			flatten(join(prefix, k), c, into)
		}
	case []any:
		for i, c := range v {
			flatten(join(prefix, strconv.Itoa(i)), c, into)
		}
	}
}

func join(prefix, key string) string {
	if prefix == "" {
		return key
	}
	return prefix + "." + key
}

// statsDelta is after - before for every leaf of after (a leaf missing
// before counts from 0); nil unless both snapshots exist.
func statsDelta(before, after map[string]float64) map[string]float64 {
	if before == nil || after == nil {
		return nil
	}
	d := make(map[string]float64, len(after))
	for k, v := range after {
		d[k] = v - before[k]
	}
	return d
}
