#!/usr/bin/env bash
# RAM-hit throughput and latency of strata serve against nginx serving the
# same segment files from the page cache, side by side on this machine with
# wrk (issue 3 §6). Both servers run at once; runs alternate between them
# and the report quotes medians and their ratio.
#
#   scripts/bench-nginx.sh [ROUNDS] [SECONDS] [CONNECTIONS]
#
# Needs nginx and wrk (apt-get install nginx-light wrk).
#
# STRATA_BASE=path/to/another/strata adds that binary (say, a build of
# main) as a third server, "base", in the same alternation: a before and
# after of a change in one session, each against nginx.
# BENCH_PORT (default 18081): strata listens there, nginx on the next port,
# base on the one after.
set -euo pipefail
ROUNDS=${1:-3}
SECS=${2:-10}
CONNS=${3:-32}
P=${BENCH_PORT:-18081}
cd "$(dirname "$0")/.."
for b in nginx wrk; do command -v $b >/dev/null || { echo "need $b (apt-get install nginx-light wrk)"; exit 1; }; done

work=$(mktemp -d /tmp/strata-bench.XXXXXX)
chmod 755 "$work" # nginx workers run as an unprivileged user
trap 'kill $(jobs -p) 2>/dev/null; nginx -p "$work/nginx" -c nginx.conf -s stop 2>/dev/null || true; rm -rf "$work"' EXIT
go build -o "$work/strata" ./cmd/strata

# 64 segments of 1 MiB and 64 of 100 KiB, random bytes.
for spec in 1m:1048576 100k:102400; do
  r=${spec%%:*}; n=${spec##*:}
  mkdir -p "$work/data/videos/bench/$r"
  for i in $(seq 1 64); do head -c "$n" /dev/urandom > "$work/data/videos/bench/$r/$i.m4s"; done
done

servers="strata nginx"
if [ -n "${STRATA_BASE:-}" ]; then
  cp -r "$work/data" "$work/data-base" # a node locks its data directory
  "$STRATA_BASE" serve --data "$work/data-base" --listen 127.0.0.1:$((P + 2)) --ram 512MiB --log-level warn > "$work/base.log" 2>&1 &
  echo $! > "$work/base.pids"
  servers="strata nginx base"
fi
"$work/strata" serve --data "$work/data" --listen 127.0.0.1:$P --ram 512MiB --log-level warn > "$work/strata.log" 2>&1 &
echo $! > "$work/strata.pids"
mkdir -p "$work/nginx/logs"
cat > "$work/nginx/nginx.conf" <<CONF
worker_processes auto;
error_log $work/nginx/logs/error.log warn;
pid $work/nginx/nginx.pid;
events { worker_connections 4096; }
http {
  access_log off;
  sendfile on;
  tcp_nopush on;
  keepalive_requests 1000000;
  types { video/iso.segment m4s; }
  server {
    listen 127.0.0.1:$((P + 1));
    location /videos/ { root $work/data; }
  }
}
CONF
nginx -p "$work/nginx" -c nginx.conf
sleep 0.5
{ cat "$work/nginx/nginx.pid"; pgrep -P "$(cat "$work/nginx/nginx.pid")"; } > "$work/nginx.pids"
up() { for _ in $(seq 1 50); do curl -s -o /dev/null "$1" && return; sleep 0.2; done; echo "$1 did not start" >&2; exit 1; }
up http://127.0.0.1:$P/stats
[ -z "${STRATA_BASE:-}" ] || up http://127.0.0.1:$((P + 2))/stats

# wrk walks the 64 segments of one rendition.
cat > "$work/walk.lua" <<'LUA'
local i = 0
request = function()
  i = i % 64 + 1
  return wrk.format("GET", string.format(path_fmt, i))
end
LUA

warm() { for i in $(seq 1 64); do curl -s -o /dev/null "$1/videos/bench/$2/$i.m4s"; done; }
url() { case $1 in strata) echo http://127.0.0.1:$P ;; nginx) echo http://127.0.0.1:$((P + 1)) ;; base) echo http://127.0.0.1:$((P + 2)) ;; esac; }
for r in 1m 100k; do for s in $servers; do warm "$(url $s)" $r; done; done
curl -s -D - -o /dev/null http://127.0.0.1:$P/videos/bench/1m/1.m4s | grep -i x-strata-tier

# cpu server: the server's processes' CPU time so far, in clock ticks
# (utime + stime): per request, it does not depend on how much of the
# shared cores a round got, as req/s does.
cpu() { local t=0 pid; for pid in $(cat "$work/$1.pids"); do t=$((t + $(awk '{print $14 + $15}' "/proc/$pid/stat"))); done; echo $t; }
hz=$(getconf CLK_TCK)
run() { # server rendition -> "rps p50_ms p99_ms cpu_us_per_request"
  sed "s|path_fmt|\"/videos/bench/$2/%d.m4s\"|" "$work/walk.lua" > "$work/w.lua"
  local c0; c0=$(cpu "$1")
  wrk -t2 -c"$CONNS" -d"${SECS}s" --latency -s "$work/w.lua" "$(url "$1")" > "$work/out"
  local c1; c1=$(cpu "$1")
  if grep -q "Non-2xx" "$work/out"; then echo "non-2xx responses from $1:" >&2; cat "$work/out" >&2; exit 1; fi
  rps=$(awk '/Requests\/sec/ {print $2}' "$work/out")
  p50=$(awk '$1=="50%" {print $2}' "$work/out")
  p99=$(awk '$1=="99%" {print $2}' "$work/out")
  n=$(awk '/requests in/ {print $1}' "$work/out")
  echo "$rps $(ms "$p50") $(ms "$p99") $(awk -v c=$((c1 - c0)) -v n="$n" -v hz="$hz" 'BEGIN {printf "%.1f", c*1e6/hz/n}')"
}
ms() { awk -v v="$1" 'BEGIN { n=v+0; if (v ~ /us$/) n/=1000; else if (v ~ /ms$/) n+=0; else if (v ~ /s$/) n*=1000; printf "%.2f", n }'; }
median() { sort -n | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }

echo "rendition server round rps p50_ms p99_ms cpu_us" > "$work/results"
for r in 1m 100k; do
  for k in $(seq 1 "$ROUNDS"); do
    for s in $servers; do
      echo "$r $s $k $(run $s $r)" >> "$work/results"
      tail -1 "$work/results" >&2
    done
  done
done

echo
echo "| segment | server | req/s (median of $ROUNDS) | MiB/s | p50 ms | p99 ms | CPU µs/request |"
echo "|---|---|---|---|---|---|---|"
for r in 1m 100k; do
  size=$([ $r = 1m ] && echo 1048576 || echo 102400)
  for s in $servers; do
    rps=$(awk -v r=$r -v s=$s '$1==r && $2==s {print $4}' "$work/results" | median)
    p50=$(awk -v r=$r -v s=$s '$1==r && $2==s {print $5}' "$work/results" | median)
    p99=$(awk -v r=$r -v s=$s '$1==r && $2==s {print $6}' "$work/results" | median)
    cus=$(awk -v r=$r -v s=$s '$1==r && $2==s {print $7}' "$work/results" | median)
    mib=$(awk -v a="$rps" -v b="$size" 'BEGIN {printf "%.0f", a*b/1048576}')
    echo "| $r | $s | $rps | $mib | $p50 | $p99 | $cus |"
    eval "rps_${s}_${r}=$rps"
  done
  ratio=$(eval "awk -v a=\$rps_strata_$r -v b=\$rps_nginx_$r 'BEGIN {printf \"%.2f\", a/b}'")
  echo "| $r | strata/nginx | ${ratio}x | | | | |"
  if [ -n "${STRATA_BASE:-}" ]; then
    ratio=$(eval "awk -v a=\$rps_base_$r -v b=\$rps_nginx_$r 'BEGIN {printf \"%.2f\", a/b}'")
    echo "| $r | base/nginx | ${ratio}x | | | | |"
  fi
done
echo
cp "$work/results" "${BENCH_RESULTS:-/dev/null}" # every round, for per-round ratios
echo "wrk -t2 -c$CONNS -d${SECS}s, $ROUNDS alternating rounds; $(nproc) cores; $(date -u +%F)"
