#!/usr/bin/env bash
# run.sh benchmarks Strata's edge mode side by side with nginx
# (proxy_cache + slice), Varnish (malloc + file) and Apache Traffic Server
# (RAM cache + disk cache), one after the other, on 127.0.0.1, in front of
# the same neutral origin (strata-lab origin: a synthetic DASH library larger
# than RAM + flash, 40 ms away, 100 Mbit/s per response, 400 Mbit/s in all)
# and under the same budgets: one memory cgroup per server capped at the
# same size (process and page cache), a flash file (or cache directory)
# of the same size on the same file system, the same number of worker
# threads. Per server, strata bench warms the cache, searches the highest
# rate with 0% deadline misses (--find-max), then runs at 80% of that
# rate and again with shifting popularity (--release-every); around those
# runs it reads the origin's counters (hit ratios), the cgroup's CPU time,
# the processes' /proc/PID/io write_bytes (flash writes) and the flash
# device's write I/Os and sectors (write sizes): each server's flash file
# lives on its own ext4 on a loop device (same size for all), whose
# /sys/block/loopN/stat counts what reached the device. Results go
# to OUT/<server>.json; `strata-lab peers OUT` writes OUT/report.md and SVGs.
#
#   scripts/peers/run.sh [--quick] [--out DIR] [SERVER...]
#
# SERVER is strata, nginx, varnish or trafficserver (default: all four).
# --quick (CI, under 5 minutes): a small library and one short run per
# server at a fixed rate, no search; it only shows each server served the
# workload. The peers are installed with apt-get where missing.
# Environment: PEERS_DELAY, PEERS_BANDWIDTH, PEERS_LINK (the origin, for
# other scenarios), PEERS_PROFILE=1 (Strata's pprof in OUT/profile/),
# PEERS_LOOPFS=0 (no loop devices: write sizes not measured).
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
	-h | --help) awk 'NR > 1 && !/^#/ {exit} NR > 1 {print}' "$0"; exit 0 ;;
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
# PEERS_PROFILE=1: Strata serves pprof on its own port; OUT/profile/ gets
# its goroutines every 15 s of the find-max search and a CPU profile and
# goroutines taken during the 80% run.
profile=${PEERS_PROFILE:-0}
delay=${PEERS_DELAY:-40ms} bandwidth=${PEERS_BANDWIDTH:-100Mbit} link=${PEERS_LINK:-400Mbit}
# The most requests in flight from the load generator (beyond: dropped,
# counted as misses): it bounds how deep an overloaded trial goes, and so
# the memory the servers need for requests in flight.
inflight=256

# PEERS_LOOPFS=0: no loop device; the flash files go in the run's
# temporary directory and the write sizes are "not measured" (they are
# too where losetup or mount fail).
loopfs=${PEERS_LOOPFS:-1}

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
	flashfs_release
	cleanup
}
trap peers_cleanup EXIT
trap 'exit 130' INT TERM # through the EXIT trap: unmount, detach, kill

# --- the flash file system: one ext4 on a loop device per server ---
loops=() mounts=()
# flashfs_make DIR: makes DIR/flashfs, where the server's flash file goes:
# a fresh ext4 on a loop device over a sparse image, opened with O_DIRECT
# so the image's data is not cached twice. Its size, twice the flash size
# + 256 MiB, with no blocks reserved for root (nginx's workers are not
# root), fits the file system's own journal and inode tables and nginx's
# overshoot: its max_size is enforced after the fact by the cache
# manager, and nginx filled a file system of flash + 25% + 128 MiB (2.5 of
# 2.6 GiB used for max_size=2g) and failed writes with ENOSPC. Each
# server's use at the end is logged.
# Sets loopdev ("" when that failed or PEERS_LOOPFS=0: not measured).
flashfs_make() {
	loopdev=
	local mnt=$1/flashfs img=$1/flashfs.img dev
	mkdir -p "$mnt"
	chmod 777 "$mnt"
	[ "$loopfs" = 1 ] || return 0
	local mib=$(($(numfmt --from=iec "$flash") * 2 / 1048576 + 256))
	truncate -s "${mib}M" "$img" &&
		mkfs.ext4 -q -F -m 0 -E lazy_itable_init=0,lazy_journal_init=0 "$img" >/dev/null 2>&1 &&
		dev=$(losetup --find --show --direct-io=on "$img" 2>/dev/null || losetup --find --show "$img" 2>/dev/null) || {
		log "$s: no loop device (losetup failed): write sizes not measured"
		rm -f "$img"
		return 0
	}
	loops+=("$dev")
	mount -t ext4 "$dev" "$mnt" 2>/dev/null || {
		log "$s: cannot mount $dev: write sizes not measured"
		losetup -d "$dev" 2>/dev/null || true
		return 0
	}
	mounts+=("$mnt")
	chmod 777 "$mnt"
	loopdev=$dev
}
# flashfs_release unmounts and detaches every flash file system made.
flashfs_release() {
	local m d
	for m in "${mounts[@]}"; do
		mountpoint -q "$m" || continue
		umount "$m" 2>/dev/null || { sleep 1; umount "$m" 2>/dev/null; } || umount -l "$m" || true
	done
	for d in "${loops[@]}"; do
		losetup "$d" >/dev/null 2>&1 && { losetup -d "$d" || true; }
	done
	mounts=() loops=()
}
# devstat: the flash device's writes so far as JSON ({write_ios,
# write_sectors}; null when not measured), after syncing its file system
# so that buffered writes count in the phase that made them.
devstat() {
	[ -n "$loopdev" ] || { echo null; return; }
	sync -f "$dir/flashfs/." 2>/dev/null || true
	awk '{printf "{\"write_ios\": %s, \"write_sectors\": %s}\n", $5, $7}' "/sys/block/${loopdev#/dev/}/stat"
}

# server_stats: Strata's own counters (GET /stats: RAM and flash hits,
# segments evicted from RAM unsaved, admission, loads waiting for a
# token), to explain a run; {} for the peers, which have no such page.
server_stats() {
	[ "$s" = strata ] || { echo '{}'; return; }
	curl -s -m 5 "http://127.0.0.1:$port/stats" | jq -c . 2>/dev/null | grep . || echo '{}'
}

# snapshot: the origin's counters, the group's CPU time, the flash writes
# (write_bytes of the group's processes; blkio for the device-level view),
# the group's peak memory, and Strata's own counters (server_stats).
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
		--argjson procs "$(wc -l <"$cg_mem/cgroup.procs")" --argjson dev "$(devstat)" \
		--argjson server "$(server_stats)" \
		'{origin: $origin, cpu_ns: $cpu, write_bytes: $wb, blkio_write_bytes: $bb, blkio_write_ops: $bo,
		  mem_max_bytes: $mem, oom_kills: $oom, processes: $procs, flash_device: $dev, server: $server}'
}

strata=$work/strata-bin
lab=$work/strata-lab-bin
(cd "$repo" && go build -o "$strata" ./cmd/strata && go build -o "$lab" ./cmd/strata-lab)

origin_port=$(free_port)
"$lab" origin --listen "127.0.0.1:$origin_port" --titles "$titles" --delay "$delay" \
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
	local debug=()
	[ -z "${debug_port:-}" ] || debug=(--debug-addr "127.0.0.1:$debug_port")
	GOMAXPROCS=$threads cg_exec "$strata" serve "${debug[@]}" --data "$2/data" --listen "127.0.0.1:$1" \
		--upstream "/edge/=http://127.0.0.1:$origin_port/" --no-images --ram "${ram}iB" \
		--flash "$2/flashfs/flash" --flash-size "${flash}iB" --files-flash-size 0 --log-level warn ${PEERS_STRATA_FLAGS:-}
}
start_nginx() {
	need nginx nginx
	chmod 755 "$2"
	sed -e "s|@WORK@|$2|g" -e "s|@PORT@|$1|g" -e "s|@UPSTREAM@|127.0.0.1:$origin_port|g" \
		-e "s|@WORKERS@|$threads|g" -e "s|@FLASH_DIR@|$2/flashfs/flash|g" -e "s|@FLASH_SIZE@|${flash,,}|g" \
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
		-s "ram=malloc,$ram" -s "flash=file,$2/flashfs/flash,$flash"
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
			-e "s|@FLASH@|$2/flashfs/flash|g" -e "s|@FLASH_SIZE@|$flash|g" "$here/trafficserver/$f" >"$ts/etc/$f"
	done
	# A directory: ATS creates its cache file (cache.db) of the size in it.
	mkdir -p "$2/flashfs/flash"
	chmod 777 "$2/flashfs/flash"
	ats_runroot "$ts"
	cg_exec traffic_server --run-root="$ts/runroot.yaml"
}

# profile_during KIND N: pprof of Strata (PEERS_PROFILE=1) in the
# background while the next bench runs: KIND max, goroutines every 15 s,
# N times at most (profile_wait stops them); KIND at80, a CPU profile of N
# seconds, goroutines and heap halfway. Sets prof_pid.
profile_during() {
	prof_pid=
	[ "$s" = strata ] && [ -n "${debug_port:-}" ] || return 0
	local d=$out/profile base=http://127.0.0.1:$debug_port/debug/pprof
	mkdir -p "$d"
	if [ "$1" = max ]; then
		(for i in $(seq 1 "$2"); do
			sleep 15
			curl -s -o "$d/goroutines-max-$i.txt" "$base/goroutine?debug=1" || exit 0
		done) &
	else
		(curl -s -o "$d/cpu-at80.pprof" "$base/profile?seconds=$2" &
			sleep $(($2 / 2))
			curl -s -o "$d/goroutines-at80.txt" "$base/goroutine?debug=1"
			curl -s -o "$d/heap-at80.pprof" "$base/heap"
			wait) &
	fi
	prof_pid=$!
}
profile_wait() { [ -z "${prof_pid:-}" ] || kill "$prof_pid" 2>/dev/null || true; prof_pid=; }

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
	flashfs_make "$dir"
	log "$s: flash file system: ${loopdev:-none (write sizes not measured)}"
	debug_port=
	[ "$profile" = 0 ] || [ "$s" != strata ] || debug_port=$(free_port)
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
		profile_during max 40
		bench max --find-max --rate "$rate" --duration "$trial" --seed 100 --fresh-seeds
		profile_wait
		r80=$(jq '[.max_rps * 0.8, 1] | max' "$dir/max.json")
	fi
	snapshot >"$dir/before.json"
	log "$s: $r80 req/s for $run (80% of its max)"
	profile_during at80 "$((${run%s} - 5))"
	bench at80 --rate "$r80" --duration "$run" --seed 7
	[ -z "${prof_pid:-}" ] || wait "$prof_pid" || true
	prof_pid=
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
	[ -z "$loopdev" ] || log "$s: flash file system at the end: $(df -h --output=used,size "$dir/flashfs" | tail -1)"
	mkdir -p "$out/logs"
	cp "$dir/server.log" "$out/logs/$s.log"
	[ ! -f "$dir/ts/log/diags.log" ] || cp "$dir/ts/log/diags.log" "$out/logs/$s.diags.log"
	[ ! -f "$dir/error.log" ] || cp "$dir/error.log" "$out/logs/$s.error.log"
	cg_stop
	flashfs_release
	rm -f "$dir/flashfs.img"
done
log "results in $out"
