#!/usr/bin/env bash
# soak.sh [MINUTES] [strata-lab soak flags]: the memory and error soak of a real
# server (default 10 minutes). Builds strata and strata-lab, starts strata serve on the demo library with the
# default budgets, finds the highest rate without deadline misses (strata
# bench --find-max's search, 20 s trials), holds 80% of it for MINUTES
# while sampling VmRSS every second, and fails on any error, any deadline
# miss or a resident memory above the bound (budgets + 128 MiB). Writes
# rss.csv, rss.svg and soak.json into docs/results/<today>-soak/ (or --out DIR).
#   scripts/soak.sh 10
set -euo pipefail
cd "$(dirname "$0")/.."
minutes=${1:-10}
shift || true
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
echo "soak.sh: building strata and strata-lab" >&2
go build -o "$work/strata" ./cmd/strata
go build -o "$work/strata-lab" ./cmd/strata-lab
mkdir -p "$work/data"
"$work/strata-lab" soak --strata "$work/strata" --duration "${minutes}m" --dir "$work/data" --out "docs/results/$(date -u +%F)-soak" "$@"
