#!/usr/bin/env bash
# The bench's setup held open for an A/B: scripts/bench-edgehits.sh up to its
# warm-up (strata on 18181, nginx's cache on 18182, its origin on 18183), then
# "ready WORKDIR" on stderr and a wait. Run from the repository's root:
#   HOLD=1 docs/results/2026-11-28-edgehits-laid/ab/hold.sh 2> hold.err &
# then start.sh BINARY (a second strata on 18190) and ab.sh ROUNDS.
set -euo pipefail
repo=$(cd "$(dirname "$0")/../../../.." && pwd)
sed -e "s#^cd \"\$(dirname \"\$0\")/..\"#cd $repo#" \
    -e 's#^for s in \$servers; do$#if [ -n "${HOLD:-}" ]; then echo "ready $work" >\&2; sleep infinity; fi\nfor s in $servers; do#' \
    "$repo/scripts/bench-edgehits.sh" > /tmp/edgehits-hold.sh
exec bash /tmp/edgehits-hold.sh "$@"
