#!/usr/bin/env bash
# torture.sh [strata-lab torture flags]: the crash torture of a real server (default
# 200 cycles): builds strata and strata-lab, then kills a real strata serve with SIGKILL
# under a mixed load, restarts it and checks every byte, printing one line
# per cycle and a summary. Needs ffmpeg (the video sources).
# --edge tortures an edge instead (strata serve --upstream in front of an
# origin that publishes new versions; no ffmpeg needed), 50 cycles by default.
#   scripts/torture.sh --cycles 200 --seed 1
#   scripts/torture.sh --edge --cycles 50 --seed 1
set -euo pipefail
cd "$(dirname "$0")/.."
work=$(mktemp -d)
trap '[ -e "$work/keep" ] || rm -rf "$work"' EXIT
echo "torture.sh: building strata and strata-lab" >&2
go build -o "$work/strata" ./cmd/strata
go build -o "$work/strata-lab" ./cmd/strata-lab
start=$(date +%s)
"$work/strata-lab" torture --strata "$work/strata" --dir "$work/run" "$@" || { touch "$work/keep"; exit 1; }
echo "torture.sh: took $(( $(date +%s) - start )) s" >&2
