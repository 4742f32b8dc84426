#!/usr/bin/env bash
# bench-s3.sh loads a strata node whose capacity tier is an S3 bucket with
# strata bench and reports how many requests reached the bucket: versitygw
# (scripts/versitygw.sh, a real S3 server) on 127.0.0.1, TITLES titles
# packaged by strata ingest video --origin s3://... from generated videos
# (three renditions, SECONDS_PER_TITLE long, 4 s segments, levels L2-L5 included),
# and strata serve --origin s3://... in front of it. strata bench runs
# twice: a cold run, then a warm one; after each, the node's /stats says
# how many requests it sent the bucket (section s3) beside its hits by
# tier. The synthetic library (synthetic.json) cannot live in a bucket: it
# is generated in memory beside the capacity tier, so the titles here are
# real ones.
#
#   scripts/bench-s3.sh [RATE] [DURATION]     (default 50 req/s, 20s)
#   TITLES=8 SECONDS_PER_TITLE=90 scripts/bench-s3.sh   (library size)
set -euo pipefail

rate=${1:-50}
duration=${2:-20s}
titles=${TITLES:-8}
length=${SECONDS_PER_TITLE:-90}
repo=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d /tmp/strata-bench-s3.XXXXXX)
# shellcheck source=servers.sh
. "$repo/scripts/servers.sh"
command -v ffmpeg >/dev/null || { echo "bench-s3.sh: needs ffmpeg (make media-deps)" >&2; exit 1; }
node_stats() {
	curl -s "http://127.0.0.1:$node_port/stats" | python3 -c '
import json, sys
s = json.load(sys.stdin)
b, o, ram, ssd = s["s3"], s["origin"], s["ram"], s["ssd"]
print("  bucket: %d requests (GET %d, HEAD %d, list %d, other %d, failed %d)"
      % (b["get"] + b["head"] + b["list"] + b["other"], b["get"], b["head"], b["list"], b["other"], b["failed"]))
print("  capacity reads %d (%.1f MiB, %d coalesced), ram hits %d, flash hits %d, flash segments %d"
      % (o["reads"], o["bytes"] / 2**20, o["coalesced"], ram["hits"], ssd["hits"], ssd["segments"]))'
}

echo "== building strata, installing versitygw where missing"
(cd "$repo" && go build -o "$work/strata" ./cmd/strata)
versitygw=$("$repo/scripts/versitygw.sh")
export AWS_ACCESS_KEY_ID=strata-bench AWS_SECRET_ACCESS_KEY=strata-bench-secret-7d3e
s3_port=$(free_port)
node_port=$(free_port)
mkdir -p "$work/s3"
ROOT_ACCESS_KEY=$AWS_ACCESS_KEY_ID ROOT_SECRET_KEY=$AWS_SECRET_ACCESS_KEY \
	"$versitygw" --port "127.0.0.1:$s3_port" --quiet posix "$work/s3" >"$work/versitygw.log" 2>&1 &
pids+=($!)
wait_http "http://127.0.0.1:$s3_port/"
# Create the bucket: a signed PUT (the header is the empty body's SHA-256).
curl -sf -X PUT --aws-sigv4 "aws:amz:us-east-1:s3" --user "$AWS_ACCESS_KEY_ID:$AWS_SECRET_ACCESS_KEY" \
	-H "x-amz-content-sha256: e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855" \
	"http://127.0.0.1:$s3_port/strata-bench" >/dev/null
origin="s3://strata-bench/vod?endpoint=http://127.0.0.1:$s3_port&path_style=true&region=us-east-1"

echo "== generating three renditions of ${length}s (ffmpeg testsrc2, x264, key frames every 2 s)"
for r in 200:320x180 500:640x360 1000:960x540; do
	kbps=${r%%:*}
	ffmpeg -nostdin -v error -f lavfi -i "testsrc2=size=${r#*:}:rate=24:duration=$length" \
		-c:v libx264 -preset veryfast -b:v "${kbps}k" -maxrate "$((kbps * 11 / 10))k" -bufsize "$((kbps * 2))k" \
		-force_key_frames "expr:gte(t,n_forced*2)" -sc_threshold 0 -x264-params bframes=3:b-pyramid=normal \
		-pix_fmt yuv420p -an -movflags +faststart "$work/${kbps}k.mp4"
	echo "  ${kbps}k: $(stat -c %s "$work/${kbps}k.mp4") bytes"
done
echo "== strata ingest video --origin s3://strata-bench/vod: $titles titles"
for i in $(seq 1 "$titles"); do
	"$work/strata" ingest video --id "s3-$i" --origin "$origin" --segment-duration 4s \
		"200k=$work/200k.mp4" "500k=$work/500k.mp4" "1000k=$work/1000k.mp4" 2>/dev/null | tail -1 | sed 's/^/  /'
done

# The node: 32 MiB of RAM and a 256 MiB flash file, its titles in the
# bucket only.
"$work/strata" serve --data "$work/node" --listen "127.0.0.1:$node_port" --origin "$origin" --no-images \
	--ram 32MiB --flash-size 256MiB --files-flash-size 0 --log-level warn >"$work/node.log" 2>&1 &
pids+=($!)
wait_http "http://127.0.0.1:$node_port/stats"
echo "== node after start (bucket check and catalog)"
node_stats

for run in cold warm; do
	echo "== $run run: strata bench http://127.0.0.1:$node_port --rate $rate --duration $duration"
	"$work/strata" bench "http://127.0.0.1:$node_port" --rate "$rate" --duration "$duration" --seed 7 | sed 's/^/  /'
	echo "== node after the $run run (cumulative)"
	node_stats
done
