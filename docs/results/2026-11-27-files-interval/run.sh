#!/usr/bin/env bash
# The VoD paper's comparison live: whole-file sessions against strata serve's
# /files tier with the same RAM, flash and disk budgets, under each
# [files] mechanism (and the disk alone). Each run: 30 s warmup + 75 s
# measured. Usage: run.sh [OUT_DIR]   (from the repository root)
set -euo pipefail
out=${1:-docs/results/2026-11-27-files-interval}
work=$(mktemp -d /tmp/strata-files-interval.XXXXXX)
trap 'kill $pid 2>/dev/null || true; wait 2>/dev/null || true; rm -rf "$work"' EXIT
go build -o "$work/strata" ./cmd/strata
addr=127.0.0.1:18481
files=()
mkdir -p "$work/files"
for i in $(seq -w 0 19); do # 20 titles of 30 MB: 30 s each at 1 MB/s
	head -c 30000000 /dev/urandom >"$work/files/title-$i.bin"
	files+=("title-$i.bin")
done
list=$(IFS=,; echo "${files[*]}")
run() { # name mechanism flash-size
	local name=$1 mech=$2 flash=$3 data="$work/data-$1"
	mkdir -p "$data"
	printf '[files]\nram = "128MiB"\nmechanism = "%s"\n' "$mech" >"$work/$name.toml"
	"$work/strata" serve --config "$work/$name.toml" --data "$data" --listen "$addr" --no-images \
		--ram 16MiB --flash-size 32MiB --block-size 1MiB --files-dir "$work/files" \
		--files-flash-size "$flash" --files-disk-bandwidth 20MB --files-flash-bandwidth 20MB \
		--files-bitrate 1MB --log-level warn 2>"$out/$name.server.log" &
	pid=$!
	for _ in $(seq 50); do curl -fs "http://$addr/healthz" >/dev/null 2>&1 && break; sleep 0.2; done
	echo "== $name: mechanism=$mech files flash=$flash; load: $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$out/results.txt"
	"$work/strata" bench "http://$addr" --files "$list" --bitrate 1000000 --rate 1.5 --zipf-s 0.271 \
		--warmup 30s --duration 75s --seed 1 >"$out/$name.txt" 2>/dev/null
	curl -fs "http://$addr/stats" | python3 -c 'import json,sys; print(json.dumps(json.load(sys.stdin)["files"], indent=1))' >"$out/$name.stats.json" || true
	cat "$out/$name.txt" | tee -a "$out/results.txt"
	kill $pid; wait $pid 2>/dev/null || true
	[ -s "$out/$name.server.log" ] || rm -f "$out/$name.server.log"
}
: >"$out/results.txt"
run disk lfu 0
run lfu lfu 256MiB
run interval interval 256MiB
run both both 256MiB
