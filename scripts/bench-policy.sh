#!/usr/bin/env bash
# bench-policy.sh: the live server's hit ratio under each flash policy, at
# the same RAM and flash budget. For each policy in turn: a fresh data
# directory with the synthetic demo-shaped library (FlashStream's five
# renditions, 10 s segments, larger than RAM + flash), `strata serve
# --policy P`, then `strata bench` with the same seed and rate: a warm-up
# that fills flash, then the measured run. The hit ratio is the server's
# own counters over the measured run (RAM + flash hits over requests).
#
#   scripts/bench-policy.sh [DURATION] [WARMUP] [RATE] [POLICY...]
#       (default 4m 3m 40 req/s; policies tinylfu reinsert)
#
# A POLICY is a --policy name, or reinsert/nosessions: reinsert with
# --policy-sessions=false (segments scored by their requests alone, the
# policy before the session table). Environment:
#   VIEWERS=N   whole-title sessions: strata bench --viewers N (each viewer
#               reads a title's rendition from its first segment to its last)
#   OUT=DIR     keep each run's bench JSON, server log and the table in DIR
set -euo pipefail

duration=${1:-4m}
warmup=${2:-3m}
rate=${3:-40}
shift $(( $# < 3 ? $# : 3 ))
policies=("$@")
[ ${#policies[@]} -gt 0 ] || policies=(tinylfu reinsert)
repo=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d /tmp/strata-bench-policy.XXXXXX)
# shellcheck source=servers.sh
. "$repo/scripts/servers.sh"
(cd "$repo" && go build -o "$work/strata" ./cmd/strata)

printf '| policy | requests | RAM hits | flash hits | hit ratio | flash MiB written | p50 / p99 ms | deadline misses |\n|---|---|---|---|---|---|---|---|\n' >"$work/table.md"
viewers=${VIEWERS:-0}
[ "$viewers" -eq 0 ] || echo "bench-policy: whole-title sessions, $viewers viewers at once" >&2
for variant in "${policies[@]}"; do
	policy=${variant%%/*}
	extra=()
	case "$variant" in
	*/nosessions) extra=(--policy-sessions=false) ;;
	*/*) echo "bench-policy: unknown variant $variant (want POLICY or reinsert/nosessions)" >&2; exit 2 ;;
	esac
	label=${variant//\//-}
	data="$work/$label"
	mkdir -p "$data"
	cat >"$data/synthetic.json" <<'JSON'
{"titles": 40, "all_renditions": true, "max_length_s": 600, "segment_duration_s": 10, "seed": 1, "prefix": "demo-"}
JSON
	port=$(free_port)
	"$work/strata" serve --data "$data" --listen "127.0.0.1:$port" --no-images --policy "$policy" \
		--ram 64MiB --flash-size 512MiB --files-flash-size 0 --log-level warn "${extra[@]}" >"$work/$label.log" 2>&1 &
	pids+=($!)
	wait_http "http://127.0.0.1:$port/videos"
	echo "bench-policy: $variant: warm-up $warmup, then $duration at $rate req/s" >&2
	"$work/strata" bench "http://127.0.0.1:$port" --rate "$rate" --warmup "$warmup" --duration "$duration" \
		--viewers "$viewers" --seed 7 --json >"$work/$label.json" 2>"$work/$label.bench.log"
	python3 - "$variant" "$work/$label.json" >>"$work/table.md" <<'PY'
import json, sys
policy, path = sys.argv[1], sys.argv[2]
r = json.load(open(path))
s = r.get("server", {})
ram, ssd = s.get("ram.hits", 0), s.get("ssd.hits", 0)
req = r["requests"]
print("| %s | %d | %d | %d | %.3f | %.0f | %.1f / %.1f | %d |" % (policy, req, ram, ssd, (ram + ssd) / req if req else 0,
      s.get("ssd.bytes_written", 0) / 2**20, r["p50_ms"], r["p99_ms"], r["misses"]))
PY
	kill "${pids[-1]}"; wait "${pids[-1]}" 2>/dev/null || true
done
cat "$work/table.md"
if [ -n "${OUT:-}" ]; then
	mkdir -p "$OUT"
	cp "$work/table.md" "$work"/*.json "$work"/*.log "$OUT"/
	echo "bench-policy: results in $OUT" >&2
fi
