#!/usr/bin/env bash
# Would zero-copy RAM hits pay on this machine? The same Go server in two
# processes side by side: "heap" writes each 100 KiB body from the Go heap
# (as strata serves a RAM hit), "file" opens the file per request and lets
# net/http sendfile(2) it (as nginx serves from the page cache), "fd"
# sendfiles from one descriptor kept open per object (as a memfd-backed RAM
# pool with pre-opened descriptors would). Alternating wrk rounds; per round the
# requests per second and the server's CPU time per request (utime+stime
# from /proc, which does not depend on how much of the shared cores the
# round got).
#
#   scripts/bench-sendfile/run.sh [ROUNDS] [SECONDS]
set -euo pipefail
ROUNDS=${1:-5}
SECS=${2:-6}
cd "$(dirname "$0")"
work=$(mktemp -d /tmp/strata-sendfile.XXXXXX)
trap 'kill $(jobs -p) 2>/dev/null; rm -rf "$work"' EXIT
go build -o "$work/proto" .
mkdir -p "$work/data"
for i in $(seq 1 64); do head -c 102400 /dev/urandom > "$work/data/$i.m4s"; done
"$work/proto" heap "$work/data" 127.0.0.1:18201 & echo $! > "$work/heap.pid"
"$work/proto" file "$work/data" 127.0.0.1:18202 & echo $! > "$work/file.pid"
"$work/proto" fd "$work/data" 127.0.0.1:18203 & echo $! > "$work/fd.pid"
port() { case $1 in heap) echo 18201 ;; file) echo 18202 ;; fd) echo 18203 ;; esac; }
for m in heap file fd; do
  for _ in $(seq 1 50); do curl -s -o /dev/null "http://127.0.0.1:$(port $m)/videos/bench/100k/1.m4s" && break; sleep 0.2; done
  for i in $(seq 1 64); do curl -s -o /dev/null "http://127.0.0.1:$(port $m)/videos/bench/100k/$i.m4s"; done
done
printf 'local i = 0\nrequest = function()\n  i = i %% 64 + 1\n  return wrk.format("GET", string.format("/videos/bench/100k/%%d.m4s", i))\nend\n' > "$work/w.lua"
hz=$(getconf CLK_TCK)
echo "mode round req/s cpu_us_per_req"
for k in $(seq 1 "$ROUNDS"); do
  for m in heap file fd; do
    pid=$(cat "$work/$m.pid")
    c0=$(awk '{print $14+$15}' "/proc/$pid/stat")
    out=$(wrk -t2 -c32 -d"${SECS}s" -s "$work/w.lua" "http://127.0.0.1:$(port $m)")
    c1=$(awk '{print $14+$15}' "/proc/$pid/stat")
    rps=$(echo "$out" | awk '/Requests\/sec/ {print $2}')
    n=$(echo "$out" | awk '/requests in/ {print $1}')
    echo "$m $k $rps $(awk -v c=$((c1 - c0)) -v n="$n" -v hz="$hz" 'BEGIN {printf "%.1f", c*1e6/hz/n}')"
  done
done
