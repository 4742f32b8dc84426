#!/usr/bin/env bash
# Records the flash write trace of a live demo run: strata serve
# --demo with small caches under a Zipf workload (strata bench), whole files
# made popular so file-level LFU copies them to flash, and a few title
# invalidations (metadata writes). The trace replays into the SSD model with
# strata-lab sim streams --trace FILE.
#
#   scripts/live-trace.sh [OUT] [SECONDS]
set -euo pipefail
OUT=${1:-live-trace.txt}
SECS=${2:-90}
cd "$(dirname "$0")/.."
work=$(mktemp -d /tmp/strata-trace.XXXXXX)
trap 'kill $(jobs -p) 2>/dev/null; rm -rf "$work"' EXIT
go build -o "$work/strata" ./cmd/strata
"$work/strata" serve --demo --data "$work/data" --listen 127.0.0.1:18095 --ram 64MiB \
  --flash-size 512MiB --files-flash-size 256MiB --files-bitrate 200KB --no-images \
  --trace-writes "$work/writes.trace" --log-level warn > "$work/serve.log" 2>&1 &
for _ in $(seq 1 100); do curl -sf -o /dev/null http://127.0.0.1:18095/videos && break; sleep 0.2; done
token=$(cat "$work/data/admin.token")
for f in movie-a movie-b movie-c; do
  head -c 24000000 /dev/urandom > "$work/$f.bin"
  curl -sf -X PUT -H "Authorization: Bearer $token" --data-binary @"$work/$f.bin" \
    http://127.0.0.1:18095/files/$f.bin -o /dev/null
done
# Popular whole files: movie-a most, movie-b some, movie-c once.
( end=$((SECONDS + SECS)); while [ $SECONDS -lt $end ]; do
    curl -sf -o /dev/null http://127.0.0.1:18095/files/movie-a.bin
    curl -sf -o /dev/null http://127.0.0.1:18095/files/movie-a.bin
    curl -sf -o /dev/null http://127.0.0.1:18095/files/movie-b.bin
    sleep 1
  done ) &
curl -sf -o /dev/null http://127.0.0.1:18095/files/movie-c.bin
# New versions of two titles halfway: metadata writes.
( sleep $((SECS / 2)); for v in demo-0001 demo-0002; do
    curl -sf -X POST -H "Authorization: Bearer $token" http://127.0.0.1:18095/admin/invalidate/$v -o /dev/null
  done ) &
"$work/strata" bench http://127.0.0.1:18095 --rate 60 --duration "${SECS}s" --json > "$work/bench.json" 2> /dev/null
wait %2 %3 2>/dev/null || true
kill %1; wait %1 2>/dev/null || true
cp "$work/writes.trace" "$OUT"
echo "trace: $(grep -vc '^#' "$OUT") writes in $OUT"
awk '!/^#/ {n[$2" "$5]++; b[$2" "$5]+=$4} END {for (k in n) printf "  %-24s %6d writes %8.1f MB\n", k, n[k], b[k]/1e6}' "$OUT"
