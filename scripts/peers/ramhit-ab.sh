#!/usr/bin/env bash
# ramhit-ab.sh A B [ROUNDS] [SECONDS]: RAM-hit throughput of two strata
# binaries (A, B) side by side on 127.0.0.1, 64 segments of 1 MiB and of
# 100 KiB each, wrk -t2 -c32, alternating rounds; prints B/A per round.
# Needs wrk (apt-get install wrk).
set -euo pipefail
A=$1 B=$2 ROUNDS=${3:-5} SECS=${4:-10}
w=$(mktemp -d /tmp/ab-run.XXXXXX)
trap 'kill $(jobs -p) 2>/dev/null; rm -rf "$w"' EXIT
for spec in 1m:1048576 100k:102400; do r=${spec%%:*}; n=${spec##*:}; mkdir -p "$w/data/videos/bench/$r"
  for i in $(seq 1 64); do head -c "$n" /dev/urandom > "$w/data/videos/bench/$r/$i.m4s"; done; done
cp -r "$w/data" "$w/data2"
"$A" serve --data "$w/data" --listen 127.0.0.1:18181 --ram 512MiB --log-level warn > "$w/a.log" 2>&1 &
"$B" serve --data "$w/data2" --listen 127.0.0.1:18182 --ram 512MiB --log-level warn > "$w/b.log" 2>&1 &
sleep 2
cat > "$w/walk.lua" <<'LUA'
local i = 0
request = function() i = i % 64 + 1; return wrk.format("GET", string.format(path_fmt, i)) end
LUA
for r in 1m 100k; do for p in 18181 18182; do for i in $(seq 1 64); do curl -s -o /dev/null "http://127.0.0.1:$p/videos/bench/$r/$i.m4s"; done; done; done
for r in 1m 100k; do sed "s|path_fmt|\"/videos/bench/$r/%d.m4s\"|" "$w/walk.lua" > "$w/$r.lua"
  for k in $(seq 1 "$ROUNDS"); do
    a=$(wrk -t2 -c32 -d${SECS}s -s "$w/$r.lua" http://127.0.0.1:18181 | awk '/Requests\/sec/ {print $2}')
    b=$(wrk -t2 -c32 -d${SECS}s -s "$w/$r.lua" http://127.0.0.1:18182 | awk '/Requests\/sec/ {print $2}')
    echo "$r round $k A $a B $b B/A $(awk -v a=$a -v b=$b 'BEGIN{printf "%.3f", b/a}')"
  done; done
