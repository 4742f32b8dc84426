#!/usr/bin/env bash
# run.sh benchmarks Strata's edge mode side by side with nginx
# (proxy_cache + slice), Varnish (malloc + file) and Apache Traffic Server
# (RAM cache + disk cache), one after the other, on 127.0.0.1, in front of
# the same neutral origin (strata-lab origin: a synthetic DASH library,
# 40 ms away, 100 Mbit/s per response) and under the same budgets: one
# memory cgroup per server capped at the same size (process and page
# cache), a flash file (or cache directory) of the same size on the same
# file system, the same number of worker threads. Per server, strata bench
# warms the cache, searches the highest rate with 0% deadline misses
# (--find-max in 15 s trials, the rate found then held for a run as long
# as the measured ones, stepping down 5% until one is clean: --confirm),
# then runs at 80% of that rate and again with shifting
# popularity (--release-every); around those runs it reads the origin's
# counters (hit ratios), the cgroup's CPU time, the processes'
# /proc/PID/io write_bytes (flash writes) and the flash device's write
# I/Os and sectors (write sizes): each server's flash file lives on its
# own ext4 on a loop device (same size for all), whose
# /sys/block/loopN/stat counts what reached the device. Strata's CPU
# profile of the 80% run goes to OUT/profile/. Results go to
# OUT/<server>.json; `strata-lab peers OUT` writes OUT/report.md and SVGs.
#
#   scripts/peers/run.sh [--scenario link|hot|device] [--quick] [--out DIR]
#                        [--titles N] [--max-length D] [--link RATE]
#                        [--memory SIZE] [--flash SIZE] [SERVER...]
#
# Scenarios (each server gets the same budgets; the report prints them):
#   link    (default) a library many times larger than RAM + flash (12
#           titles, 15.4 GiB) behind a 400 Mbit/s origin link: every
#           server is bound by the link, hit ratios about 0.2.
#   hot     a library that fits in flash (3 titles of at most 10 min,
#           0.81 GiB), no link cap: hit ratios near 1, CPU-bound.
#   device  a library 1.6 times the flash (6 titles of at most 20 min,
#           3.24 GiB), no link cap, and the flash file's loop device
#           throttled to a SATA SSD's sustained figures (below): the device
#           is the bottleneck, caching writes compete with hit reads.
# --titles, --max-length, --link, --memory and --flash override the
# scenario's library, origin link, memory cgroup cap and flash size.
# Strata runs with --memory at the cgroup's cap (its RAM tier sized from
# it); the peers' RAM cache setting is RAM (192M; 64M quick).
#
# SERVER is strata, nginx, varnish or trafficserver (default: all four).
# --quick (CI, a few minutes per scenario): a small library and one short
# run per server at a fixed rate, no search; it only shows each server
# served the workload. The peers are installed with apt-get where missing.
# Environment: PEERS_DELAY, PEERS_BANDWIDTH, PEERS_LINK (the origin),
# PEERS_LOOPFS=0 (no loop devices: write sizes not measured; not with
# --scenario device), PEERS_DEVICE="RBPS WBPS RIOPS WIOPS" (the device
# scenario's throttle), PEERS_STRATA_BIN (a strata binary to run instead of
# this tree's, for an A/B). Strata's /stats and Go runtime counters are
# sampled every 2 s to OUT/samples/strata.jsonl (sample_start).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
quick=0
out=$here/results
scenario=link
servers=()
o_titles= o_length= o_link= o_mem= o_flash=
while [ $# -gt 0 ]; do
	case "$1" in
	--quick) quick=1 ;;
	--out) out=$2; shift ;;
	--scenario) scenario=$2; shift ;;
	--titles) o_titles=$2; shift ;;
	--max-length) o_length=$2; shift ;;
	--link) o_link=$2; shift ;;
	--memory) o_mem=$2; shift ;;
	--flash) o_flash=$2; shift ;;
	-h | --help) awk 'NR > 1 && !/^#/ {exit} NR > 1 {print}' "$0"; exit 0 ;;
	*) servers+=("$1") ;;
	esac
	shift
done
[ ${#servers[@]} -gt 0 ] || servers=(strata nginx varnish trafficserver)

# The budgets and the workload. THREADS: workers of every server. MEM: the
# memory cgroup's cap (Strata's --memory). RAM: the peers' own RAM cache
# setting (below MEM, leaving room for the process itself). FLASH: the
# flash file's size. TITLES and LENGTH: the origin's library (--titles,
# --max-length); LINK: its link's cap (0: none).
threads=2 delay=${PEERS_DELAY:-40ms} bandwidth=${PEERS_BANDWIDTH:-100Mbit}
mem=640M ram=192M flash=2G length=1h link=0
# The device scenario's throttle of the flash device (blkio, below): a
# mainstream SATA TLC SSD's sustained figures rather than its datasheet's
# bursts: reads 400 MB/s and 40,000 IOPS (the SATA link's 550 MB/s shared
# with writes; 4 KiB random reads at a queue depth of about 4), writes 200
# MB/s and 10,000 IOPS (steady state once the drive's SLC cache is full,
# which an edge that caches all day lives in). Bytes and I/Os per second.
device_throttle=${PEERS_DEVICE:-400000000 200000000 40000 10000}
throttle=0
case $scenario in
link) titles=4 link=400Mbit ;;
hot) titles=1 length=10m ;;
device) titles=2 length=20m throttle=1 ;;
*) echo "run.sh: --scenario is link, hot or device, not $scenario" >&2; exit 2 ;;
esac
if [ $quick = 1 ]; then
	mem=256M ram=64M flash=256M rate=8
	case $scenario in
	link) titles=1 warm=5s run=10s ;;
	# A tiny library (0.17 GiB) and shorter runs: the added CI time stays small.
	*) titles=1 length=2m warm=4s run=6s ;;
	esac
	# The warm-up replays the measured run's sequence: a cache that works
	# answers part of the measured run from its store.
	warm_seed=7
else
	warm=45s trial=15s run=30s rate=20 release=2s
	# Every run draws its own sequence (find-max: one per trial).
	warm_seed=1
fi
titles=${o_titles:-$titles} length=${o_length:-$length} link=${o_link:-${PEERS_LINK:-$link}}
mem=${o_mem:-$mem} flash=${o_flash:-$flash}
# PEERS_STRATA_FLAGS adds flags to strata serve (e.g. --objective requests).
# Strata serves pprof on its own port; OUT/profile/ gets its goroutines
# every 15 s of the find-max search and a CPU profile (the raw pprof
# file: `go tool pprof -top OUT/profile/cpu-at80.pprof`), goroutines and
# heap taken during the 80% run.
# The most requests in flight from the load generator (beyond: dropped,
# counted as misses): it bounds how deep an overloaded trial goes, and so
# the memory the servers need for requests in flight.
inflight=256

# PEERS_LOOPFS=0: no loop device; the flash files go in the run's
# temporary directory and the write sizes are "not measured" (they are
# too where losetup or mount fail).
loopfs=${PEERS_LOOPFS:-1}
[ $throttle = 0 ] || loopfs=1

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
# The device scenario keeps every server in the root blkio group (blk_root):
# cgroup v1's blkio is not hierarchical, and it charges buffered writeback
# (the flusher's kernel threads) to the root group, so a throttle set in a
# server's own group would reach its O_DIRECT I/O and its page cache reads
# but never its page cache writes. A rule of the root group on the
# server's own loop device reaches all of them alike, whoever issues them
# (device_check measures it at the start of each server's run).
blk_root=/sys/fs/cgroup/blkio
cgroups=()
cg_make() { # cg_make NAME: sets cg_mem, cg_cpu, cg_blk
	local g=strata-peers-$1-$$ d
	cg_mem=/sys/fs/cgroup/memory/$g cg_cpu=/sys/fs/cgroup/cpuacct/$g cg_blk=$blk_root/$g
	local own=("$cg_mem" "$cg_cpu" "$cg_blk")
	[ $throttle = 0 ] || { cg_blk=$blk_root own=("$cg_mem" "$cg_cpu"); }
	for d in "${own[@]}"; do
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
	for d in "$cg_mem" "$cg_cpu" "$cg_blk"; do [ "$d" = "$blk_root" ] || rmdir "$d" 2>/dev/null || true; done
}
peers_cleanup() {
	sample_stop
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
	[ $throttle = 0 ] || throttle_set "$dev"
}
# throttle_set DEV: the device scenario's throttle (device_throttle: read
# and write bytes/s, read and write IOPS) on DEV, in the root blkio group
# (see blk_root), until flashfs_release.
throttled=()
throttle_set() {
	local mm v f i=0
	mm=$(lsblk -dno MAJ:MIN "$1" | tr -d ' ')
	throttled+=("$mm")
	read -r -a v <<<"$device_throttle"
	for f in read_bps write_bps read_iops write_iops; do
		echo "$mm ${v[$i]}" >"$blk_root/blkio.throttle.${f}_device"
		i=$((i + 1))
	done
	log "$s: flash device $1 ($mm) throttled to reads ${v[0]} B/s ${v[2]} IOPS, writes ${v[1]} B/s ${v[3]} IOPS"
}
# device_check: the throttle as each way of using the flash file system
# meets it, in MB/s: O_DIRECT writes and reads (Strata, Traffic Server),
# page cache writes synced (written back by the kernel's flusher: nginx,
# Varnish) and page cache reads (of the file written with O_DIRECT, none of
# it cached), n MiB each, from the server's groups; JSON ({} without the
# throttle).
device_check() {
	[ $throttle = 1 ] && [ -n "$loopdev" ] || { echo '{}'; return; }
	local f=$dir/flashfs/throttle-check n=$((quick == 1 ? 64 : 256)) t0 r=()
	mbps() { echo "$n $1" | awk '{printf "%.0f", $1 * 1048576 / ($2 / 1e9) / 1e6}'; }
	cg_exec sh -c '
		t() { s=$(date +%s%N); "$@" 2>/dev/null; echo $(($(date +%s%N) - s)); }
		t dd if=/dev/zero of="$1.d" bs=1M count="$2" oflag=direct status=none
		t dd if=/dev/zero of="$1.b" bs=1M count="$2" conv=fsync status=none
		t dd if="$1.b" of=/dev/null bs=1M iflag=direct status=none
		t dd if="$1.d" of=/dev/null bs=1M status=none
		rm -f "$1.d" "$1.b"' check "$f" "$n" >"$dir/device-check.txt"
	mapfile -t r <"$dir/device-check.txt"
	jq -n --argjson mib "$n" --argjson dw "$(mbps "${r[0]}")" --argjson bw "$(mbps "${r[1]}")" \
		--argjson dr "$(mbps "${r[2]}")" --argjson br "$(mbps "${r[3]}")" --arg throttle "$device_throttle" \
		'{mib: $mib, throttle: $throttle, direct_write_mbps: $dw, buffered_write_mbps: $bw,
		  direct_read_mbps: $dr, buffered_read_mbps: $br}'
}
# flashfs_release unmounts and detaches every flash file system made, and
# lifts the throttles set.
flashfs_release() {
	local m d f
	for d in "${throttled[@]}"; do
		for f in read_bps write_bps read_iops write_iops; do
			echo "$d 0" >"$blk_root/blkio.throttle.${f}_device" 2>/dev/null || true
		done
	done
	throttled=()
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
	local wb=0 p dev='.*'
	[ "$cg_blk" != "$blk_root" ] || dev=$(lsblk -dno MAJ:MIN "$loopdev" | tr -d ' ')
	for p in $(cat "$cg_mem/cgroup.procs"); do
		wb=$((wb + $(awk '/^write_bytes/ {print $2}' "/proc/$p/io" 2>/dev/null || echo 0)))
	done
	jq -n --argjson origin "$(curl -s "http://127.0.0.1:$origin_port/origin/stats")" \
		--argjson cpu "$(cat "$cg_cpu/cpuacct.usage")" --argjson wb "$wb" \
		--argjson bb "$(awk -v d="^$dev\$" '$1 ~ d && $2 == "Write" {s += $3} END {print s + 0}' "$cg_blk/blkio.throttle.io_service_bytes")" \
		--argjson bo "$(awk -v d="^$dev\$" '$1 ~ d && $2 == "Write" {s += $3} END {print s + 0}' "$cg_blk/blkio.throttle.io_serviced")" \
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
# PEERS_STRATA_BIN: a strata binary built elsewhere (another commit's, for
# an A/B) instead of this tree's; this tree's bench and lab still run.
[ -z "${PEERS_STRATA_BIN:-}" ] || cp "$PEERS_STRATA_BIN" "$strata"

origin_port=$(free_port)
"$lab" origin --listen "127.0.0.1:$origin_port" --titles "$titles" --max-length "$length" --delay "$delay" \
	--bandwidth "$bandwidth" --link "$link" >"$work/origin.log" 2>&1 &
pids+=($!)
wait_http "http://127.0.0.1:$origin_port/origin/stats"
log "$(head -1 "$work/origin.log")"
library=$(head -1 "$work/origin.log" | sed -n 's/^origin: \([^,]*, [0-9.]* GiB\).*/\1/p')

# start_SERVER PORT DIR: starts the server in the current groups.
start_strata() {
	# GOMAXPROCS: the thread budget. --memory: the cgroup's cap, from which
	# strata serve sizes its RAM tier and sets the Go runtime's soft memory
	# limit (docs/operations.md "Memory limit"): it uses the memory every
	# peer is given, where the peers' page caches use it too.
	local debug=()
	[ -z "${debug_port:-}" ] || debug=(--debug-addr "127.0.0.1:$debug_port")
	GOMAXPROCS=$threads cg_exec "$strata" serve "${debug[@]}" --data "$2/data" --listen "127.0.0.1:$1" \
		--upstream "/edge/=http://127.0.0.1:$origin_port/" --no-images --memory "${mem}iB" \
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

# profile_during KIND N: pprof of Strata in the
# background while the next bench runs: KIND max, goroutines every 15 s,
# N times at most (profile_wait stops them); KIND at80, a CPU profile of N
# seconds, goroutines and heap halfway. Sets prof_pid.
profile_during() {
	prof_pid=
	[ "$s" = strata ] && [ -n "${debug_port:-}" ] || return 0
	local d=$out/profile base=http://127.0.0.1:$debug_port/debug/pprof
	mkdir -p "$d"
	if [ "$1" = max ]; then
		# The heap every 3 s, the last two kept (heap-max-0.pprof and
		# heap-max-1.pprof): what the process held before an overload
		# the memory cgroup ended.
		(for i in $(seq 1 "$2"); do
			for k in 1 2 3 4 5; do
				sleep 3
				curl -s -o "$d/heap-max.tmp" "$base/heap" && mv "$d/heap-max.tmp" "$d/heap-max-$((k % 2)).pprof" || exit 0
			done
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

# sample_start PHASE: Strata's state every 2 s in the background while
# the next benches run, one JSON line per sample to
# OUT/samples/strata.jsonl: the wall clock, the phase, the edge's and
# flash's counters from /stats (flash read health, skipped and late
# reads, hit memory, pins, misses and upstream loads) and the Go
# runtime's from the heap profile's MemStats (GCs, GC CPU fraction,
# heap) and the goroutine count, to line up with the find-max trials'
# end times in run.log. sample_stop ends it.
sample_start() {
	sample_pid=
	[ "$s" = strata ] && [ -n "${debug_port:-}" ] || return 0
	mkdir -p "$out/samples"
	local base=http://127.0.0.1:$debug_port/debug/pprof f=$out/samples/strata.jsonl
	(while sleep 2; do
		st=$(curl -s -m 2 "http://127.0.0.1:$port/stats" | jq -c '{edge: .edge | {hits, misses, upstream_requests, fill_bytes, fill_waits, relayed, relays_full, last_resort},
			ram: .ram | {hits, inserts, evictions, not_kept, files: (.files // {} | {bytes, live_bytes, limit_bytes, file_bytes, refused})}, ssd: .ssd | {hits, misses, reads, read_errors, health, hit_memory, sched_lag_ms,
			file_hits, pins}, origin}' 2>/dev/null) || continue
		[ -n "$st" ] || continue
		ms=$(curl -s -m 2 "$base/heap?debug=1" | awk '/^# (NumGC|GCCPUFraction|HeapAlloc|HeapInuse|NextGC|PauseTotalNs|Sys) = / {printf "%s\"%s\": %s", sep, $2, $4; sep=", "}')
		gr=$(curl -s -m 2 "$base/goroutine?debug=1" | awk 'NR == 1 {print $NF + 0}')
		# The memory cgroup's own split: what a kill is made of.
		cg=$(awk '/^(total_rss|total_shmem|total_cache|total_mapped_file) / {printf "%s\"%s\": %s", sep, $1, $2; sep=", "}' "$cg_mem/memory.stat" 2>/dev/null)
		# Kernel memory charged to the group (pipes of spliced sends, slabs): outside Go's limit.
		[ -z "$cg" ] || ! km=$(cat "$cg_mem/memory.kmem.usage_in_bytes" 2>/dev/null) || cg="$cg, \"kmem\": $km"
		echo "{\"t\": $(date +%s.%N), \"clock\": \"$(date +%T)\", \"phase\": \"$1\", \"goroutines\": ${gr:-null}, \"go\": {${ms}}, \"cgroup\": {${cg}}, \"stats\": $st}" >>"$f"
	done) &
	sample_pid=$!
}
sample_stop() { [ -z "${sample_pid:-}" ] || kill "$sample_pid" 2>/dev/null || true; sample_pid=; }

bench() { # bench NAME ARGS...: strata bench against the cache, JSON to $dir/NAME.json ({} if it failed)
	local name=$1
	shift
	# The find-max trials' lines get the wall clock, to line up with the
	# samples (sample_start).
	"$strata" bench "$url" --json --max-inflight "$inflight" "$@" >"$dir/$name.json" 2> >(while IFS= read -r l; do
		case $l in *find-max:*) printf '    %s %s\n' "$(date +%T)" "$l" ;; *) printf '    %s\n' "$l" ;; esac
	done >&2) ||
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
	[ -n "$loopdev" ] || [ $throttle = 0 ] || { log "$s: no loop device: the device scenario cannot run"; exit 1; }
	device_check >"$dir/device.json"
	[ $throttle = 0 ] || log "$s: throttle check: $(jq -c . "$dir/device.json")"
	debug_port=
	[ "$s" != strata ] || debug_port=$(free_port)
	log "$s: starting (memory cap $mem, RAM cache $ram (Strata: --memory $mem), flash $flash, $threads threads)"
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
		sample_start max
		bench max --find-max --rate "$rate" --duration "$trial" --confirm "$run" --seed 100 --fresh-seeds
		profile_wait
		r80=$(jq '[.max_rps * 0.8, 1] | max' "$dir/max.json")
	fi
	snapshot >"$dir/before.json"
	log "$s: $r80 req/s for $run (80% of its max)"
	profile_during at80 "$((${run%s} - 5))"
	sample_stop
	sample_start at80
	bench at80 --rate "$r80" --duration "$run" --seed 7
	[ -z "${prof_pid:-}" ] || wait "$prof_pid" || true
	prof_pid=
	snapshot >"$dir/after.json"
	if [ $quick = 0 ]; then
		log "$s: $r80 req/s for $run, a new title every $release"
		sample_stop
		sample_start release
		bench release --rate "$r80" --duration "$run" --release-every "$release" --seed 11
	else
		jq -n '{}' >"$dir/release.json"
	fi
	sample_stop
	snapshot >"$dir/end.json"
	jq -n --arg server "$s" --argjson quick "$quick" --arg scenario "$scenario" \
		--arg budget "memory cgroup $mem (Strata: --memory ${mem}iB, its RAM tier sized from it), peers' RAM cache $ram, flash $flash, $threads threads" \
		--arg workload "library: $library (--titles $titles --max-length $length); origin $delay away, $bandwidth per response, link ${link/#0/no cap}; $( [ $throttle = 1 ] && echo "flash device throttled: reads/writes $device_throttle (B/s, B/s, IOPS, IOPS)" || echo "flash device not throttled")" \
		--slurpfile device "$dir/device.json" \
		--slurpfile warm "$dir/warm.json" --slurpfile max "$dir/max.json" \
		--slurpfile at80 "$dir/at80.json" --slurpfile release "$dir/release.json" \
		--slurpfile before "$dir/before.json" --slurpfile after "$dir/after.json" \
		--slurpfile fin "$dir/end.json" \
		'{server: $server, quick: ($quick == 1), scenario: $scenario, budget: $budget, workload: $workload,
		  device_check: $device[0], warm: $warm[0], max: $max[0],
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
