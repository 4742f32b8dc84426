#!/usr/bin/env bash
# bench-outage.sh: what share of requests an edge cache still answers when
# its origin dies, Strata side by side with nginx (proxy_cache_use_stale)
# and Varnish (grace with a health probe), one after the other, each
# configured as its documentation recommends for serving through an
# outage (scripts/outage/), Strata with its defaults (no configuration:
# keep_on_error is a day).
#
# Per server: a fresh origin (strata-lab origin: a synthetic DASH library,
# 40 ms before each response, 100 Mbit/s per response, media max-age 10 s
# so copies expire during the run), the cache in front of it with the
# origin's / under /edge/ (as scripts/peers/ does: a Strata edge on /
# leaves /videos to the node's own routes, and the origin's library is
# under /videos), and one `strata bench` run through the cache: WARM of load with the origin
# up (not measured: --warmup), then the origin is killed (SIGKILL, at
# WARM after the run's start) and the load goes on for OUTAGE, which is
# what the report measures. Every server gets the same request sequence
# (--seed), so the requests for objects never fetched before the outage
# (which no cache can answer) are the same for all.
#
#   scripts/bench-outage.sh [--quick] [--out DIR] [SERVER...]
#   scripts/bench-outage.sh --report --out DIR     (the table again)
#
# SERVER: strata, nginx, varnish, trafficserver (default: the first three).
# Full run: WARM 45 s and OUTAGE 45 s at 20 req/s, about 2 min a server.
# --quick: 10 s and 10 s at 10 req/s, one title, max-age 2 s.
# Results: OUT/<server>.json (the bench report and the server's own
# counters at the kill and at the end) and OUT/report.md (the table).
# Needs nginx, varnishd (and traffic_server for trafficserver), jq, curl.
# OUTAGE_STRATA_UPSTREAM="key = value; ..." adds keys to Strata's
# [[upstream]] table (e.g. "attempts = 1"; docs/operations.md).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)
quick=0
report_only=0
out=
servers=()
while [ $# -gt 0 ]; do
	case "$1" in
	--quick) quick=1 ;;
	--report) report_only=1 ;;
	--out) out=$2; shift ;;
	-h | --help) awk 'NR > 1 && !/^#/ {exit} NR > 1 {print}' "$0"; exit 0 ;;
	strata | nginx | varnish | trafficserver) servers+=("$1") ;;
	*) echo "bench-outage.sh: unknown argument $1 (--help)" >&2; exit 2 ;;
	esac
	shift
done
[ $report_only = 1 ] || [ ${#servers[@]} -gt 0 ] || servers=(strata nginx varnish)

# The library, the load and the phases. 2 titles of 6 s segments, 2 min
# each (5 renditions: 200 objects); the warm phase requests most of them.
if [ $quick = 1 ]; then
	titles=1 maxlen=1m warm=10 outage=10 rate=10 maxage=2s
else
	titles=2 maxlen=2m warm=45 outage=45 rate=20 maxage=10s
fi
seed=7
# The most requests in flight from the load generator.
inflight=256
ram=256M

work=$(mktemp -d /tmp/strata-outage.XXXXXX)
chmod 755 "$work" # nginx's workers and varnishd's child drop root
# shellcheck source=servers.sh
. "$repo/scripts/servers.sh"
log() { echo "outage: $(date -u +%H:%M:%S) $*" >&2; }
for b in jq curl; do command -v $b >/dev/null || { echo "bench-outage.sh: need $b" >&2; exit 1; }; done
[ -n "$out" ] || out=$work/out
mkdir -p "$out"
out=$(cd "$out" && pwd)


# stop PID: SIGTERM, then SIGKILL after 5 s.
stop() {
	kill "$1" 2>/dev/null || return 0
	for _ in $(seq 1 50); do kill -0 "$1" 2>/dev/null || return 0; sleep 0.1; done
	kill -9 "$1" 2>/dev/null || true
}

# start_SERVER PORT DIR: runs the server in the foreground (the caller
# backgrounds it); the origin is at 127.0.0.1:$origin_port.
start_strata() {
	# No edge configuration: the defaults (keep_on_error 24h, no grace);
	# the upstream's table is --upstream's, plus OUTAGE_STRATA_UPSTREAM.
	{
		echo '[[upstream]]'
		echo 'prefix = "/edge/"'
		echo "url = \"http://127.0.0.1:$origin_port/\""
		echo "${OUTAGE_STRATA_UPSTREAM:-}" | tr ';' '\n'
	} >"$2/strata.toml"
	GOMAXPROCS=2 exec "$strata" serve --config "$2/strata.toml" --data "$2/data" --listen "127.0.0.1:$1" \
		--no-images --ram "${ram}iB" --flash-size 1GiB --files-flash-size 0 --log-level info
}
start_nginx() {
	command -v nginx >/dev/null || { echo "need nginx" >&2; exit 1; }
	sed -e "s|@WORK@|$2|g" -e "s|@PORT@|$1|g" -e "s|@UPSTREAM@|127.0.0.1:$origin_port|g" \
		"$here/outage/nginx.conf" >"$2/nginx.conf"
	exec nginx -c "$2/nginx.conf" -p "$2" -g 'daemon off;'
}
start_varnish() {
	command -v varnishd >/dev/null || { echo "need varnishd" >&2; exit 1; }
	sed -e "s|@UPSTREAM_PORT@|$origin_port|g" "$here/outage/varnish.vcl" >"$2/default.vcl"
	# -F: foreground; -n: a private working directory; two thread pools.
	exec varnishd -F -n "$2/varnish" -a "127.0.0.1:$1" -f "$2/default.vcl" \
		-p thread_pools=2 -s "malloc,$ram"
}
start_trafficserver() {
	command -v traffic_server >/dev/null || { echo "need traffic_server" >&2; exit 1; }
	local ts=$2/ts
	mkdir -p "$ts/etc" "$ts/run" "$ts/log" "$ts/cache"
	chmod -R 777 "$ts"
	cp -r /etc/trafficserver/. "$ts/etc/"
	for f in records.config remap.config storage.config; do
		sed -e "s|@WORK@|$ts|g" -e "s|@PORT@|$1|g" -e "s|@UPSTREAM@|127.0.0.1:$origin_port|g" \
			-e "s|@RAM@|$(numfmt --from=iec "$ram")|g" "$here/outage/trafficserver/$f" >"$ts/etc/$f"
	done
	ats_runroot "$ts"
	exec traffic_server --run-root="$ts/runroot.yaml"
}

# counters SERVER DIR PORT: the server's own view as JSON: Strata's /stats
# edge section; Varnish's hit, grace-hit and miss counters; {} for nginx
# (its access log is read at the end) and Traffic Server.
counters() {
	case $1 in
	strata) curl -s -m 5 "http://127.0.0.1:$3/stats" | jq -c '.edge | del(.upstreams)' 2>/dev/null | grep . || echo '{}' ;;
	varnish)
		varnishstat -n "$2/varnish" -1 -f MAIN.cache_hit -f MAIN.cache_hit_grace -f MAIN.cache_miss \
			-f MAIN.backend_fail -f MAIN.fetch_failed 2>/dev/null |
			awk 'BEGIN {printf "{"} {sub(/^MAIN\./, "", $1); printf "%s\"%s\": %s", (NR > 1 ? ", " : ""), $1, $2} END {print "}"}' ;;
	*) echo '{}' ;;
	esac
}

# stale_answers SERVER DIR KILL BEFORE AFTER: answers from a stale copy
# after the kill, as the server counts them ("" when not observable).
stale_answers() {
	case $1 in
	strata) jq -n --argjson a "$4" --argjson b "$5" '$b.stale_served - $a.stale_served' ;;
	varnish) jq -n --argjson a "$4" --argjson b "$5" '$b.cache_hit_grace - $a.cache_hit_grace' ;;
	nginx) awk -v k="$3" '$1 >= k && ($3 == "STALE" || $3 == "UPDATING") {n++} END {print n + 0}' "$2/access.log" ;;
	*) echo null ;;
	esac
}

# report: OUT/report.md from OUT/<server>.json, one row per server (the
# servers given, or every JSON file there with --report).
report() {
	local files=() s
	for s in "${servers[@]}"; do [ ! -f "$out/$s.json" ] || files+=("$out/$s.json"); done
	[ ${#files[@]} -gt 0 ] || { echo "bench-outage.sh: no results in $out" >&2; exit 1; }
	{
		jq -r '"Origin killed after \(.warm_s)s of load at \(.rate_rps) req/s; the \(.outage_s)s after it (media max-age \(.media_max_age)); servers one after the other, the same request sequence."' "${files[0]}"
		echo
		echo "| server | requests | answered 2xx | share | late (> segment time) | errors by kind | answered stale (server's count) | p50 / p99 ms | load average after |"
		echo "|---|---|---|---|---|---|---|---|---|"
		jq -r '"| \(.server)\(if .strata_upstream_extra then " (" + .strata_upstream_extra + ")" else "" end) | \(.bench.requests) | \(.bench.completed) | \(if .bench.requests > 0 then (1000 * .bench.completed / .bench.requests | round / 10 | tostring) + "%" else "n/a" end) | \(.bench.late) | \(.bench.error_kinds // {} | to_entries | map("\(.key): \(.value)") | join(", ") | if . == "" then "none" else . end) | \(.stale_answers_in_outage // "not observable") | \(.bench.p50_ms * 10 | round / 10) / \(.bench.p99_ms * 10 | round / 10) | \(.load_average_end | split(" ")[0]) |"' "${files[@]}"
		echo
		echo "$(nproc) cores; $(date -u +%F)"
	} | tee "$out/report.md"
}
if [ "$report_only" = 1 ]; then
	[ ${#servers[@]} -gt 0 ] || servers=(strata nginx varnish trafficserver)
	report
	exit 0
fi
strata=$work/strata-bin
lab=$work/strata-lab-bin
(cd "$repo" && go build -o "$strata" ./cmd/strata && go build -o "$lab" ./cmd/strata-lab)

log "$(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg); servers: ${servers[*]}"
log "per server: $rate req/s, ${warm}s with the origin up, then the origin killed and ${outage}s more (measured)"
for s in "${servers[@]}"; do
	dir=$work/$s
	mkdir -p "$dir"
	chmod 755 "$dir"
	origin_port=$(free_port)
	"$lab" origin --listen "127.0.0.1:$origin_port" --titles "$titles" --segment-durations 6s \
		--max-length "$maxlen" --max-age "$maxage" --delay 40ms --bandwidth 100Mbit --link 400Mbit \
		>"$dir/origin.log" 2>&1 &
	origin_pid=$!
	pids+=("$origin_pid")
	disown "$origin_pid" # its SIGKILL is the test, not news for the shell to print
	wait_http "http://127.0.0.1:$origin_port/origin/stats"
	[ "$s" != strata ] || log "$(head -1 "$dir/origin.log"), media max-age $maxage"
	port=$(free_port)
	url=http://127.0.0.1:$port/edge
	"start_$s" "$port" "$dir" >"$dir/server.log" 2>&1 &
	server_pid=$!
	pids+=("$server_pid")
	wait_http "$url/videos" || { cat "$dir/server.log" >&2; exit 1; }
	log "$s: up; load average $(cut -d' ' -f1-3 /proc/loadavg)"
	"$strata" bench "$url" --json --rate "$rate" --warmup "${warm}s" --duration "${outage}s" --seed "$seed" \
		--max-inflight "$inflight" >"$dir/bench.json" 2>"$dir/bench.log" &
	bench_pid=$!
	sleep "$warm"
	origin_stats=$(curl -s -m 1 "http://127.0.0.1:$origin_port/origin/stats" || echo '{}')
	kill -9 "$origin_pid"
	kill_at=$(date +%s.%N)
	before=$(counters "$s" "$dir" "$port")
	log "$s: origin killed after ${warm}s of load; ${outage}s more"
	wait "$bench_pid" || log "$s: strata bench failed: $(tail -3 "$dir/bench.log")"
	after=$(counters "$s" "$dir" "$port")
	[ -s "$dir/bench.json" ] || echo '{}' >"$dir/bench.json"
	stale=$(stale_answers "$s" "$dir" "$kill_at" "$before" "$after")
	jq -n --arg server "$s" --argjson bench "$(cat "$dir/bench.json")" --argjson before "$before" \
		--argjson after "$after" --argjson origin "$origin_stats" --argjson stale "${stale:-null}" --arg load "$(cut -d' ' -f1-3 /proc/loadavg)" \
		--argjson warm "$warm" --argjson outage "$outage" --argjson rate "$rate" --arg maxage "$maxage" --arg extra "${OUTAGE_STRATA_UPSTREAM:-}" \
		'{server: $server, strata_upstream_extra: (if $server == "strata" and $extra != "" then $extra else null end), warm_s: $warm, outage_s: $outage, rate_rps: $rate, media_max_age: $maxage,
		  load_average_end: $load, origin_at_kill: $origin, bench: $bench, counters_at_kill: $before, counters_at_end: $after,
		  stale_answers_in_outage: $stale}' >"$out/$s.json"
	log "$s: $(jq -r '.bench | "\(.requests) requests in the outage, \(.completed) answered 2xx, errors \(.error_kinds // {})"' "$out/$s.json"); stale answers: ${stale:-n/a}"
	mkdir -p "$out/logs"
	stop "$server_pid"
	cp "$dir/server.log" "$out/logs/$s.log"
	[ ! -f "$dir/error.log" ] || gzip -c "$dir/error.log" >"$out/logs/$s.error.log.gz"
	[ ! -f "$dir/access.log" ] || gzip -c "$dir/access.log" >"$out/logs/$s.access.log.gz"
	wait "$server_pid" 2>/dev/null || true
done

# The report: one row per server.
report
log "results in $out"
