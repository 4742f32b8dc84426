#!/bin/bash
# row.sh DIR RUNLOG: max, trials after the first failed one (failed/total), at80, release, timeouts/excused
d=$1 log=$2
max=$(jq .max.max_rps $d/strata.json)
after=$(grep "find-max: trial" $log | awk 'f {n++; if (/MISSES/) m++} /MISSES/ && !f {f=1} END {printf "%d of %d failed", m, n}')
at80=$(jq -r '.at80 | "\(.misses) of \(.requests), \(.p99_ms*10|round/10) ms"' $d/strata.json)
rel=$(jq -r '.release | "\(.misses), \(.p99_ms|round) ms"' $d/strata.json)
to=$(jq -r '.end.server.ssd.health.read | "\(.errors.timeout) / \(.starved_timeouts // "-")"' $d/strata.json)
echo "max=$max | after=$after | at80=$at80 | rel=$rel | to=$to"
