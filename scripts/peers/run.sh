#!/usr/bin/env bash
# run.sh benchmarks Strata's edge mode side by side with nginx
# (proxy_cache + slice), Varnish (malloc + file) and Apache Traffic Server
# (RAM cache + disk cache), one after the other, on 127.0.0.1, in front of
# the same neutral origin (strata origin: a synthetic DASH library larger
# than RAM + flash, 40 ms away, 100 Mbit/s per response, 400 Mbit/s in all)
# and under the same budgets: one memory cgroup per server capped at the
# same size (process and page cache), a flash file (or cache directory)
# of the same size on the same file system, the same number of worker
# threads. Per server, strata bench warms the cache, searches the highest
# rate with 0% deadline misses (--find-max), then runs at 80% of that
# rate and again with shifting popularity (--release-every); around those
# runs it reads the origin's counters (hit ratios), the cgroup's CPU time
# and the processes' /proc/PID/io write_bytes (flash writes). Results go
# to OUT/<server>.json; `strata peers OUT` writes OUT/report.md and SVGs.
#
#   scripts/peers/run.sh [--quick] [--out DIR] [SERVER...]
#
# SERVER is strata, nginx, varnish or trafficserver (default: all four).
# --quick (CI, under 5 minutes): a small library and one short run per
# server at a fixed rate, no search; it only shows each server served the
# workload. The peers are installed with apt-get where missing.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
quick=0
out=$here/results
servers=()
while [ $# -gt 0 ]; do
	case "$1" in
	--quick) quick=1 ;;
	--out) out=$2; shift ;;
	-h | --help) sed -n '2,22p' "$0"; exit 0 ;;
	*) servers+=("$1") ;;
	esac
	shift
done
[ ${#servers[@]} -gt 0 ] || servers=(strata nginx varnish trafficserver)

# The budgets and the workload. THREADS: workers of every server. MEM: the
# memory cgroup's cap. RAM: each server's own RAM cache setting (below MEM,
# leaving room for the process itself). FLASH: the flash file's size.
threads=2
if [ $quick = 1 ]; then
	titles=1 mem=256M ram=64M flash=256M
	warm=5s run=10s rate=8
	# The warm-up replays the measured run's sequence: a cache that works
	# answers part of the measured run from its store.
	warm_seed=7
else
	titles=4 mem=640M ram=192M flash=2G
	warm=45s trial=15s run=30s rate=20 release=2s
	# Every run draws its own sequence (find-max: one per trial).
	warm_seed=1
fi
# PEERS_LINK etc. override them for another scenario (BENCHMARKS.md);
# PEERS_STRATA_FLAGS adds flags to strata serve (e.g. --objective requests).
delay=${PEERS_DELAY:-40ms} bandwidth=${PEERS_BANDWIDTH:-100Mbit} link=${PEERS_LINK:-400Mbit}
# The most requests in flight from the load generator (beyond: dropped,
# counted as misses): it bounds how deep an overloaded trial goes, and so
# the memory the servers need for requests in flight.
inflight=256

mkdir -p "$out"
out=$(cd "$out" && pwd)
work=$(mktemp -d /tmp/strata-peers.XXXXXX)
chmod 755 "$work" # nginx's workers and varnishd's child drop root
# shellcheck source=../servers.sh
. "$repo/scripts/servers.sh"

need() { # need COMMAND PACKAGE
	command -v "$1" >/dev/null || { apt-get update -qq && apt-get install -y -qq "$2" >/dev/null; }
}
need jq jq
log() { echo "peers: $(date -u +%H:%M:%S) $*" >&2; }

# --- cgroups (v1): one memory, cpuacct and blkio group per server ---
cgroups=()
cg_make() { # cg_make NAME: sets cg_mem, cg_cpu, cg_blk
	local g=strata-peers-$1-$$
	cg_mem=/sys/fs/cgroup/memory/$g cg_cpu=/sys/fs/cgroup/cpuacct/$g cg_blk=/sys/fs/cgroup/blkio/$g
	for d in "$cg_mem" "$cg_cpu" "$cg_blk"; do
		mkdir "$d" || { echo "run.sh: cannot create cgroup $d (cgroup v1 and root needed)" >&2; exit 1; }
		cgroups+=("$d")
	done
	echo "$mem" | numfmt --from=iec >"$cg_mem/memory.limit_in_bytes"
}
cg_exec() { # cg_exec COMMAND...: runs COMMAND inside the current groups
	(
		for d in "$cg_mem" "$cg_cpu" "$cg_blk"; do echo "$BASHPID" >"$d/cgroup.procs"; done
		exec "$@"
	)
}
cg_stop() { # kills every process of the current groups and removes them
	for p in $(cat "$cg_mem/cgroup.procs"); do kill "$p" 2>/dev/null || true; done
	for _ in $(seq 1 100); do
		[ -z "$(cat "$cg_mem/cgroup.procs")" ] && break
		sleep 0.1
	done
	for p in $(cat "$cg_mem/cgroup.procs"); do kill -9 "$p" 2>/dev/null || true; done
	sleep 0.5
	for d in "$cg_mem" "$cg_cpu" "$cg_blk"; do rmdir "$d" 2>/dev/null || true; done
}
peers_cleanup() {
	for d in "${cgroups[@]}"; do
		[ -d "$d" ] && for p in $(cat "$d/cgroup.procs"); do kill -9 "$p" 2>/dev/null || true; done
	done
	for d in "${cgroups[@]}"; do
		for _ in $(seq 1 50); do
			[ ! -d "$d" ] || [ -z "$(cat "$d/cgroup.procs")" ] && break
			sleep 0.1
		done
		rmdir "$d" 2>/dev/null || true
	done
	cleanup
}
trap peers_cleanup EXIT

# snapshot: the origin's counters, the group's CPU time, the flash writes
# (write_bytes of the group's processes; blkio for the device-level view),
# the group's peak memory.
snapshot() {
	local wb=0 p
	for p in $(cat "$cg_mem/cgroup.procs"); do
		wb=$((wb + $(awk '/^write_bytes/ {print $2}' "/proc/$p/io" 2>/dev/null || echo 0)))
	done
	jq -n --argjson origin "$(curl -s "http://127.0.0.1:$origin_port/origin/stats")" \
		--argjson cpu "$(cat "$cg_cpu/cpuacct.usage")" --argjson wb "$wb" \
		--argjson bb "$(awk '$2 == "Write" {s += $3} END {print s + 0}' "$cg_blk/blkio.throttle.io_service_bytes")" \
		--argjson bo "$(awk '$2 == "Write" {s += $3} END {print s + 0}' "$cg_blk/blkio.throttle.io_serviced")" \
		--argjson mem "$(cat "$cg_mem/memory.max_usage_in_bytes")" \
		--argjson oom "$(awk '$1 == "oom_kill" {print $2}' "$cg_mem/memory.oom_control" | grep . || echo 0)" \
		--argjson procs "$(wc -l <"$cg_mem/cgroup.procs")" \
		'{origin: $origin, cpu_ns: $cpu, write_bytes: $wb, blkio_write_bytes: $bb, blkio_write_ops: $bo,
		  mem_max_bytes: $mem, oom_kills: $oom, processes: $procs}'
}

strata=$work/strata-bin
(cd "$repo" && go build -o "$strata" ./cmd/strata)

origin_port=$(free_port)
"$strata" origin --listen "127.0.0.1:$origin_port" --titles "$titles" --delay "$delay" \
	--bandwidth "$bandwidth" --link "$link" >"$work/origin.log" 2>&1 &
pids+=($!)
wait_http "http://127.0.0.1:$origin_port/origin/stats"
log "$(head -1 "$work/origin.log")"

# start_SERVER PORT DIR: starts the server in the current groups.
start_strata() {
	# GOMAXPROCS: the thread budget. No GOMEMLIMIT: strata serve sets the
	# Go runtime's soft memory limit from its configuration (its caches'
	# budgets + 64 MiB, docs/operations.md "Memory limit"), under the same
	# cgroup cap as every peer.
	GOMAXPROCS=$threads cg_exec "$strata" serve --data "$2/data" --listen "127.0.0.1:$1" \
		--upstream "/edge/=http://127.0.0.1:$origin_port/" --no-images --ram "${ram}iB" \
		--flash "$2/flash" --flash-size "${flash}iB" --files-flash-size 0 --log-level warn ${PEERS_STRATA_FLAGS:-}
}
start_nginx() {
	need nginx nginx
	chmod 755 "$2"
	sed -e "s|@WORK@|$2|g" -e "s|@PORT@|$1|g" -e "s|@UPSTREAM@|127.0.0.1:$origin_port|g" \
		-e "s|@WORKERS@|$threads|g" -e "s|@FLASH_DIR@|$2/flash|g" -e "s|@FLASH_SIZE@|${flash,,}|g" \
		"$here/nginx.conf" >"$2/nginx.conf"
	cg_exec nginx -c "$2/nginx.conf" -p "$2" -g 'daemon off;'
}
start_varnish() {
	need varnishd varnish
	sed -e "s|@UPSTREAM_PORT@|$origin_port|g" "$here/varnish.vcl" >"$2/default.vcl"
	# -F: foreground; -n: a private working directory; two thread pools
	# with at most 500 threads each (the worker threads serve one
	# connection at a time: Varnish's threads are per session, not per core).
	cg_exec varnishd -F -n "$2/varnish" -a "127.0.0.1:$1" -f "$2/default.vcl" \
		-p thread_pools="$threads" -p thread_pool_max=500 \
		-s "ram=malloc,$ram" -s "flash=file,$2/flash,$flash"
}
start_trafficserver() {
	need traffic_server trafficserver
	local ts=$2/ts
	mkdir -p "$ts/etc" "$ts/run" "$ts/log" "$ts/cache"
	chmod -R 777 "$ts"
	cp -r /etc/trafficserver/. "$ts/etc/"
	for f in records.config remap.config storage.config; do
		sed -e "s|@WORK@|$ts|g" -e "s|@PORT@|$1|g" -e "s|@UPSTREAM@|127.0.0.1:$origin_port|g" \
			-e "s|@THREADS@|$threads|g" -e "s|@RAM@|$(numfmt --from=iec "$ram")|g" \
			-e "s|@FLASH@|$2/flash|g" -e "s|@FLASH_SIZE@|$flash|g" "$here/trafficserver/$f" >"$ts/etc/$f"
	done
	# A directory: ATS creates its cache file (cache.db) of the size in it.
	mkdir -p "$2/flash"
	chmod 777 "$2/flash"
	ats_runroot "$ts"
	cg_exec traffic_server --run-root="$ts/runroot.yaml"
}

bench() { # bench NAME ARGS...: strata bench against the cache, JSON to $dir/NAME.json ({} if it failed)
	local name=$1
	shift
	"$strata" bench "$url" --json --max-inflight "$inflight" "$@" >"$dir/$name.json" 2> >(sed -u "s/^/    /" >&2) ||
		log "$s: strata bench $name failed (server alive: $(cat "$cg_mem/cgroup.procs" | wc -l) processes)"
	[ -s "$dir/$name.json" ] || echo '{}' >"$dir/$name.json"
}

for s in "${servers[@]}"; do
	dir=$work/$s
	mkdir -p "$dir"
	port=$(free_port)
	url=http://127.0.0.1:$port/edge
	cg_make "$s"
	log "$s: starting (memory cap $mem, RAM cache $ram, flash $flash, $threads threads)"
	"start_$s" "$port" "$dir" >"$dir/server.log" 2>&1 &
	pids+=($!)
	wait_http "$url/videos" || { cat "$dir/server.log" >&2; exit 1; }
	jq -n '{}' >"$dir/max.json"
	log "$s: warm-up at $rate req/s for $warm"
	bench warm --rate "$rate" --duration "$warm" --seed "$warm_seed"
	r80=$rate
	if [ $quick = 0 ]; then
		log "$s: --find-max from $rate req/s, $trial per trial"
		bench max --find-max --rate "$rate" --duration "$trial" --seed 100 --fresh-seeds
		r80=$(jq '[.max_rps * 0.8, 1] | max' "$dir/max.json")
	fi
	snapshot >"$dir/before.json"
	log "$s: $r80 req/s for $run (80% of its max)"
	bench at80 --rate "$r80" --duration "$run" --seed 7
	snapshot >"$dir/after.json"
	if [ $quick = 0 ]; then
		log "$s: $r80 req/s for $run, a new title every $release"
		bench release --rate "$r80" --duration "$run" --release-every "$release" --seed 11
	else
		jq -n '{}' >"$dir/release.json"
	fi
	snapshot >"$dir/end.json"
	jq -n --arg server "$s" --argjson quick "$quick" \
		--arg budget "memory $mem, RAM cache $ram, flash $flash, $threads threads" \
		--slurpfile warm "$dir/warm.json" --slurpfile max "$dir/max.json" \
		--slurpfile at80 "$dir/at80.json" --slurpfile release "$dir/release.json" \
		--slurpfile before "$dir/before.json" --slurpfile after "$dir/after.json" \
		--slurpfile fin "$dir/end.json" \
		'{server: $server, quick: ($quick == 1), budget: $budget, warm: $warm[0], max: $max[0],
		  at80: $at80[0], release: $release[0], before: $before[0], after: $after[0], "end": $fin[0]}' \
		>"$out/$s.json"
	log "$s: $(jq -r '"at80: \(.at80.requests) requests, \(.at80.misses) misses, p99 \(.at80.p99_ms) ms; origin segments \(.after.origin.segments - .before.origin.segments)"' "$out/$s.json")"
	mkdir -p "$out/logs"
	cp "$dir/server.log" "$out/logs/$s.log"
	[ ! -f "$dir/ts/log/diags.log" ] || cp "$dir/ts/log/diags.log" "$out/logs/$s.diags.log"
	[ ! -f "$dir/error.log" ] || cp "$dir/error.log" "$out/logs/$s.error.log"
	cg_stop
done
log "results in $out"
