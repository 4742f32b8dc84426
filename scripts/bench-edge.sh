#!/usr/bin/env bash
# bench-edge.sh loads a strata edge node with strata bench and reports how
# many requests reached its upstream: an origin strata node serving a
# synthetic library (12 titles, five renditions, two minutes each), and an
# edge node in front of it (strata serve --upstream /edge/=ORIGIN), all on
# 127.0.0.1. strata bench runs twice against http://EDGE/edge (the
# catalog and the segments go through the edge): a cold run, then a warm
# one; after each, the edge's /stats edge section says how many requests it
# sent upstream and how many it answered from RAM and flash.
#
#   scripts/bench-edge.sh [RATE] [DURATION]     (default 50 req/s, 20s)
set -euo pipefail

rate=${1:-50}
duration=${2:-20s}
repo=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d /tmp/strata-bench-edge.XXXXXX)
# shellcheck source=servers.sh
. "$repo/scripts/servers.sh"
edge_stats() {
	curl -s "http://127.0.0.1:$edge_port/stats" | python3 -c '
import json, sys
s = json.load(sys.stdin)
e, ram, ssd = s["edge"], s["ram"], s["ssd"]
print("  edge: hits %d (coalesced %d), misses %d, passes %d, upstream requests %d, upstream MiB %.1f"
      % (e["hits"], e["coalesced"], e["misses"], e["passes"], e["upstream_requests"], e["upstream_bytes"] / 2**20))
print("  ram hits %d, flash hits %d, flash segments %d" % (ram["hits"], ssd["hits"], ssd["segments"]))'
}

(cd "$repo" && go build -o "$work/strata" ./cmd/strata)
mkdir -p "$work/origin"
cat >"$work/origin/synthetic.json" <<'JSON'
{"titles": 12, "all_renditions": true, "max_length_s": 120, "segment_duration_s": 10, "seed": 1, "prefix": "demo-"}
JSON
origin_port=$(free_port)
edge_port=$(free_port)
"$work/strata" serve --data "$work/origin" --listen "127.0.0.1:$origin_port" --no-images \
	--flash-size 64MiB --files-flash-size 0 --log-level warn >"$work/origin.log" 2>&1 &
pids+=($!)
wait_http "http://127.0.0.1:$origin_port/videos"
# The edge node: 64 MiB of RAM and a 256 MiB flash file, nothing of its own.
"$work/strata" serve --data "$work/edge" --listen "127.0.0.1:$edge_port" --no-images \
	--upstream "/edge/=http://127.0.0.1:$origin_port/" --ram 64MiB --flash-size 256MiB \
	--files-flash-size 0 --log-level warn >"$work/edge.log" 2>&1 &
pids+=($!)
wait_http "http://127.0.0.1:$edge_port/stats"

for run in cold warm; do
	echo "== $run run: strata bench http://127.0.0.1:$edge_port/edge --rate $rate --duration $duration"
	"$work/strata" bench "http://127.0.0.1:$edge_port/edge" --rate "$rate" --duration "$duration" --seed 7 | sed 's/^/  /'
	echo "== edge node after the $run run (cumulative)"
	edge_stats
done
