#!/bin/bash
# A/B: strata ram_sendfile on (A) and off (B), same binary, behind one nginx origin from hold.sh (port 18302)
set -u
BIN=/tmp/ehx/strata-ab
cd /work/main && go build -o $BIN ./cmd/strata
rm -rf /tmp/ab-a /tmp/ab-b
$BIN serve --data /tmp/ab-a --listen 127.0.0.1:18310 --ram 512MiB --no-images --log-level warn --upstream /=http://127.0.0.1:18302/ > /tmp/ab-a.log 2>&1 &
A=$!
$BIN serve --data /tmp/ab-b --listen 127.0.0.1:18311 --ram 512MiB --no-images --log-level warn --upstream /=http://127.0.0.1:18302/ --ram-sendfile=false > /tmp/ab-b.log 2>&1 &
B=$!
sleep 2
for p in 18310 18311; do for r in 1m 100k; do for i in $(seq 1 64); do curl -s -o /dev/null http://127.0.0.1:$p/bench/$r/$i.m4s; curl -s -o /dev/null http://127.0.0.1:$p/bench/$r/$i.m4s; done; done; done
curl -s -D - -o /dev/null http://127.0.0.1:18310/bench/1m/1.m4s | grep -i x-strata-tier
cat > walk1m.lua <<'LUA'
local i = 0
request = function()
  i = i % 64 + 1
  return wrk.format("GET", string.format("/bench/%s/%d.m4s", os.getenv("R"), i))
end
LUA
cpu() { awk '{print $14+$15}' /proc/$1/stat; }
for r in ${RS:-1m 100k}; do
for round in ${ROUNDS:-1 2 3}; do
  for s in A B; do
    if [ $s = A ]; then port=18310; pid=$A; else port=18311; pid=$B; fi
    c0=$(cpu $pid)
    out=$( { /usr/bin/time -f "%U %S" env R=$r wrk -t2 -c32 -d6s -s walk1m.lua http://127.0.0.1:$port; } 2>&1 )
    c1=$(cpu $pid)
    rps=$(echo "$out" | awk '/Requests\/sec/{print $2}')
    wcpu=$(echo "$out" | tail -1 | awk '{print $1+$2}')
    echo "$r $s round $round: $rps req/s, server $(( (c1-c0)*10000 ))us total, wrk cpu ${wcpu}s"
  done
done
done
kill $A $B
