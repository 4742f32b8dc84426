#!/usr/bin/env bash
# run.sh runs the HTTP caching test suite of cache-tests.fyi (npm
# http-cache-tests, pinned in package-lock.json) against a cache in front
# of the suite's own origin server, everything on 127.0.0.1:
#
#   scripts/cache-tests/run.sh [strata|nginx|varnish|trafficserver] [OUTDIR]
#
# It writes OUTDIR/<cache>.json (the suite's results: test id -> true or
# [kind, message]) and OUTDIR/<cache>.txt (passes / total and every test
# not passed, with its id); OUTDIR defaults to docs/results/<today>-cache-tests.
# The peers are run with the configs beside this script (one comment per
# setting); they are installed with apt-get where missing.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
cache=${1:-strata}
out=${2:-$repo/docs/results/$(date -u +%F)-cache-tests}
mkdir -p "$out"
out=$(cd "$out" && pwd) # the suite and its summary run from other directories
work=$(mktemp -d /tmp/strata-cache-tests.XXXXXX)
# nginx's workers and varnishd's child drop root for an unprivileged user:
# they must reach the cache and working directories under $work.
chmod 755 "$work"
# shellcheck source=../servers.sh
. "$repo/scripts/servers.sh"

need() { # need COMMAND PACKAGE
	command -v "$1" >/dev/null || { apt-get update -qq && apt-get install -y -qq "$2" >/dev/null; }
}

(cd "$here" && npm ci --no-audit --no-fund --silent)

origin_port=$(free_port)
(cd "$here" && exec env npm_config_port="$origin_port" npm_config_protocol=http \
	npm_config_pidfile="$work/origin.pid" node origin.mjs) >"$work/origin.log" 2>&1 &
pids+=($!)
wait_http "http://127.0.0.1:$origin_port/config/"

port=$(free_port)
upstream="127.0.0.1:$origin_port"
case "$cache" in
strata)
	(cd "$repo" && go build -o "$work/strata" ./cmd/strata)
	# A small node: no demo, no image store, a 64 MiB flash file of
	# 1 MiB blocks; edge mode for every path, with the default cache
	# rules ([edge]: the origin's freshness, keep-on-error a day, no
	# grace, every query parameter in the key) but Set-Cookie, stored
	# and replayed as RFC 9111 §7.3 allows and the suite checks (the
	# default, strip, never hands one client's cookie to another).
	"$work/strata" serve --data "$work/data" --listen "127.0.0.1:$port" \
		--upstream "/=http://$upstream/" --edge-set-cookie store --no-images --ram 32MiB \
		--flash-size 64MiB --block-size 1MiB --files-flash-size 0 \
		--log-level warn >"$work/cache.log" 2>&1 &
	pids+=($!)
	;;
nginx)
	need nginx nginx
	mkdir -p "$work/nginx"
	chmod 755 "$work/nginx"
	sed -e "s|@WORK@|$work/nginx|g" -e "s|@PORT@|$port|g" -e "s|@UPSTREAM@|$upstream|g" \
		"$here/nginx.conf" >"$work/nginx/nginx.conf"
	nginx -c "$work/nginx/nginx.conf" -p "$work/nginx" -g 'daemon off;' >"$work/cache.log" 2>&1 &
	pids+=($!)
	;;
varnish)
	need varnishd varnish
	sed -e "s|@UPSTREAM_PORT@|$origin_port|g" "$here/varnish.vcl" >"$work/default.vcl"
	# -F: foreground; -n: a private working directory; -s: a 64 MiB RAM store.
	varnishd -F -n "$work/varnish" -a "127.0.0.1:$port" -f "$work/default.vcl" \
		-s malloc,64m >"$work/cache.log" 2>&1 &
	pids+=($!)
	;;
trafficserver)
	need traffic_server trafficserver
	ts="$work/ts"
	mkdir -p "$ts/etc" "$ts/run" "$ts/log" "$ts/cache"
	chmod -R 777 "$ts"
	cp -r /etc/trafficserver/. "$ts/etc/"
	for f in records.config remap.config storage.config; do
		sed -e "s|@WORK@|$ts|g" -e "s|@PORT@|$port|g" -e "s|@UPSTREAM@|$upstream|g" \
			"$here/trafficserver/$f" >"$ts/etc/$f"
	done
	# A runroot: ATS's directories all under $ts.
	ats_runroot "$ts"
	traffic_server --run-root="$ts/runroot.yaml" >"$work/cache.log" 2>&1 &
	pids+=($!)
	;;
*)
	echo "run.sh: unknown cache $cache (strata, nginx, varnish, trafficserver)" >&2
	exit 2
	;;
esac
wait_http "http://127.0.0.1:$port/config/"

# The suite's CLI reads its base URL and test id from npm's config
# variables; an empty id runs every test. TEST_ID=id runs one test and
# prints its requests and responses instead (for a failure's cause).
if [ -n "${TEST_ID:-}" ]; then
	cd "$here/node_modules/http-cache-tests"
	npm_config_base="http://127.0.0.1:$port" npm_config_id="$TEST_ID" node --no-warnings cli.mjs
	exit 0
fi
(cd "$here/node_modules/http-cache-tests" && npm_config_base="http://127.0.0.1:$port" npm_config_id= npm_package_config_id= \
	node --no-warnings cli.mjs) >"$out/$cache.json"
(cd "$here" && node summarize.mjs "$out/$cache.json" "$cache") >"$out/$cache.txt"
head -2 "$out/$cache.txt"
