#!/usr/bin/env bash
# RAM-hit throughput and latency of strata serve against nginx serving the
# same segment files from the page cache, side by side on this machine with
# wrk. Both servers run at once; runs alternate between them
# and the report quotes medians and their ratio.
#
#   scripts/bench-nginx.sh [ROUNDS] [SECONDS] [CONNECTIONS]
#
# Needs nginx and wrk (apt-get install nginx-light wrk).
#
# PERF_COUNTS=1 (root, perf): after the rounds, one more round per server
# and rendition under `perf stat`, and a table of packets, timers and
# system calls per request (wrk_counts in scripts/lib/wrk-rounds.sh).
# STRATA_ARGS: more flags for the strata under test (not base), say
# --ram-huge-pages.
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
# shellcheck disable=SC2086 # STRATA_ARGS: flags, split on spaces
"$work/strata" serve --data "$work/data" --listen 127.0.0.1:$P --ram 512MiB --log-level warn ${STRATA_ARGS:-} > "$work/strata.log" 2>&1 &
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
pids() { cat "$work/$1.pids"; }
cpu() { local t=0 pid; for pid in $(pids "$1"); do t=$((t + $(awk '{print $14 + $15}' "/proc/$pid/stat"))); done; echo $t; }
bench_path="/videos/bench/%s/%%d.m4s"
# shellcheck source=lib/wrk-rounds.sh
. scripts/lib/wrk-rounds.sh # (the working directory is the repository)
wrk_rounds
wrk_report
wrk_counts
