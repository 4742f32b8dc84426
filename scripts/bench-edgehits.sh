#!/usr/bin/env bash
# Edge RAM hits: strata serve in edge mode (--upstream) against nginx's
# proxy_cache, both in front of the same origin (an nginx server block
# serving segment files with Cache-Control: max-age=3600), side by side on
# this machine with wrk, runs alternating between the servers; the report
# quotes medians and their ratios.
#
#   scripts/bench-edgehits.sh [ROUNDS] [SECONDS] [CONNECTIONS]
#
# Needs nginx and wrk (apt-get install nginx-light wrk).
#
# EDGE_PREFIX (default /): the prefix both caches serve the origin under.
# With /, Strata runs as the README sets it up, `--upstream /=URL` (its own
# routes, /stats and the like, beside the edge), and nginx has
# `location /`; EDGE_PREFIX=/edge/ is the setup of the runs before
# 2026-11-27.
# PROFILE_DIR=DIR: after the rounds, one more strata round per rendition
# (not counted) with a CPU profile of it, DIR/cpu-1m.pprof and
# DIR/cpu-100k.pprof (strata serves pprof on BENCH_PORT + 4).
#
# PERF_COUNTS=1 (root, perf): after the rounds, one more round per server
# and rendition under `perf stat`, and a table of packets, timers and
# system calls per request (wrk_counts in scripts/lib/wrk-rounds.sh).
# STRATA_ARGS: more flags for the strata under test (not base), say
# --ram-huge-pages.
# STRATA_BASE=path/to/another/strata adds that binary (say, a build of
# main) as a third server, "base", in the same alternation: a before and
# after of a change in one session, each against nginx.
# BENCH_PORT (default 18181): strata listens there, nginx's cache on the
# next port, its origin on the one after, base on the one after that.
set -euo pipefail
ROUNDS=${1:-5}
SECS=${2:-8}
CONNS=${3:-32}
P=${BENCH_PORT:-18181}
prefix=${EDGE_PREFIX:-/}
case $prefix in /*/ | /) ;; *) echo "EDGE_PREFIX must start and end with /" >&2; exit 1 ;; esac
cd "$(dirname "$0")/.."
for b in nginx wrk; do command -v $b >/dev/null || { echo "need $b (apt-get install nginx-light wrk)"; exit 1; }; done

work=$(mktemp -d /tmp/strata-edgehits.XXXXXX)
chmod 755 "$work" # nginx workers run as an unprivileged user
trap 'kill $(jobs -p) 2>/dev/null; nginx -p "$work/nginx" -c nginx.conf -s stop 2>/dev/null || true; rm -rf "$work"' EXIT
go build -o "$work/strata" ./cmd/strata

# 64 segments of 1 MiB and 64 of 100 KiB, random bytes, at the origin.
for spec in 1m:1048576 100k:102400; do
  r=${spec%%:*}; n=${spec##*:}
  mkdir -p "$work/origin/bench/$r"
  for i in $(seq 1 64); do head -c "$n" /dev/urandom > "$work/origin/bench/$r/$i.m4s"; done
done

mkdir -p "$work/nginx/logs" "$work/nginx/cache"
cat > "$work/nginx/nginx.conf" <<CONF
worker_processes 2;
error_log $work/nginx/logs/error.log warn;
pid $work/nginx/nginx.pid;
events { worker_connections 4096; }
http {
  access_log off;
  sendfile on;
  # tcp_nopush on (bench-nginx.sh's, for static files) makes this nginx
  # (1.22) hold each cached answer's last segment: about 40 ms per 100 KiB
  # hit (255 vs 8,446 req/s with wrk -c4 here).
  tcp_nopush off;
  keepalive_requests 1000000;
  types { video/iso.segment m4s; }
  # The cache under test: the whole object cached on first use, kept for
  # the origin's max-age, served from its cache file (page cache).
  proxy_cache_path $work/nginx/cache levels=1:2 keys_zone=edge:16m max_size=1g inactive=1h use_temp_path=off;
  server {
    listen 127.0.0.1:$((P + 1));
    location $prefix {
      proxy_pass http://127.0.0.1:$((P + 2))/;
      proxy_cache edge;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      add_header X-Cache \$upstream_cache_status;
    }
  }
  # The origin: files with an hour of freshness.
  server {
    listen 127.0.0.1:$((P + 2));
    location / { root $work/origin; add_header Cache-Control "max-age=3600"; }
  }
}
CONF
nginx -p "$work/nginx" -c nginx.conf
sleep 0.5

servers="strata nginx"
start() { # binary data port pidfile [flags...]
  local bin=$1 data=$2 port=$3 pidf=$4
  shift 4
  "$bin" serve --data "$data" --listen "127.0.0.1:$port" --ram 512MiB --no-images --log-level warn \
    --upstream "$prefix=http://127.0.0.1:$((P + 2))/" "$@" > "$data.log" 2>&1 &
  echo $! > "$pidf"
}
debug=()
[ -z "${PROFILE_DIR:-}" ] || debug=(--debug-addr "127.0.0.1:$((P + 4))")
# shellcheck disable=SC2086 # STRATA_ARGS: flags, split on spaces
start "$work/strata" "$work/data" "$P" "$work/strata.pids" "${debug[@]}" ${STRATA_ARGS:-}
if [ -n "${STRATA_BASE:-}" ]; then
  start "$STRATA_BASE" "$work/data-base" $((P + 3)) "$work/base.pids"
  servers="strata nginx base"
fi
up() { for _ in $(seq 1 50); do curl -s -o /dev/null "$1" && return; sleep 0.2; done; echo "$1 did not start" >&2; exit 1; }
up http://127.0.0.1:$P/stats
[ -z "${STRATA_BASE:-}" ] || up http://127.0.0.1:$((P + 3))/stats

# wrk walks the 64 segments of one rendition.
cat > "$work/walk.lua" <<'LUA'
local i = 0
request = function()
  i = i % 64 + 1
  return wrk.format("GET", string.format(path_fmt, i))
end
LUA

url() { case $1 in strata) echo http://127.0.0.1:$P ;; nginx) echo http://127.0.0.1:$((P + 1)) ;; base) echo http://127.0.0.1:$((P + 3)) ;; esac; }
warm() { for i in $(seq 1 64); do curl -s -o /dev/null "$1${prefix}bench/$2/$i.m4s"; done; }
for r in 1m 100k; do for s in $servers; do warm "$(url $s)" $r; warm "$(url $s)" $r; done; done
for s in $servers; do
  echo "$s: $(curl -s -D - -o /dev/null "$(url $s)${prefix}bench/1m/1.m4s" | grep -i -E '^x-(strata-cache|strata-tier|cache):' | tr -d '\r' | tr '\n' ' ')" >&2
done

# pids server: its processes' ids (nginx's master and its workers at the
# time; its cache loader exits after its first minute).
pids() {
  if [ "$1" = nginx ]; then
    echo "$(cat "$work/nginx/nginx.pid") $(pgrep -P "$(cat "$work/nginx/nginx.pid")" | tr '\n' ' ')"
  else
    cat "$work/$1.pids"
  fi
}
# cpu server: its processes' CPU time so far, in clock ticks.
cpu() {
  local t=0 pid v
  for pid in $(pids "$1"); do
    v=$(awk '{print $14 + $15}' "/proc/$pid/stat" 2>/dev/null) || continue
    t=$((t + ${v:-0}))
  done
  echo $t
}
bench_path="${prefix}bench/%s/%%d.m4s"
# shellcheck source=lib/wrk-rounds.sh
. scripts/lib/wrk-rounds.sh # (the working directory is the repository)
# The Front's fast path serves the hits unless a route overlaps its prefix
# (then strata logs "fast path off" at start).
if grep -q "fast path off" "$work/data.log"; then echo "strata: fast path OFF: $(grep "fast path off" "$work/data.log")" >&2; else echo "strata: fast path on (no \"fast path off\" in its log)" >&2; fi
echo "prefix $prefix (strata --upstream $prefix=ORIGIN, nginx location $prefix); load $(cut -d' ' -f1-3 /proc/loadavg)" >&2
wrk_rounds
wrk_report
wrk_counts
echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
if [ -n "${PROFILE_DIR:-}" ]; then
  mkdir -p "$PROFILE_DIR"
  for r in 1m 100k; do
    curl -s -o "$PROFILE_DIR/cpu-$r.pprof" "http://127.0.0.1:$((P + 4))/debug/pprof/profile?seconds=$((SECS > 2 ? SECS - 1 : 1))" &
    prof=$!
    echo "profiled round: $r strata $(run strata $r)" >&2
    wait $prof
  done
fi
