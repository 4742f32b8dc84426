#!/usr/bin/env bash
# start.sh BINARY PORT: a strata edge with a small RAM tier and a flash file before the held origin, warmed.
b=$1; p=$2
pkill -f "listen 127.0.0.1:$p"; sleep 0.5; rm -rf /tmp/fab/d$p; mkdir -p /tmp/fab/d$p
"$b" serve --data /tmp/fab/d$p --listen 127.0.0.1:$p --ram 32MiB --flash /tmp/fab/d$p/flash --flash-size 1GiB --no-images --log-level warn ${EXTRA:-} --upstream /=http://127.0.0.1:18183/ > /tmp/fab/d$p.log 2>&1 &
sleep 2; for k in 1 2 3; do for r in 100k 1m; do for i in $(seq 1 64); do curl -s -o /dev/null http://127.0.0.1:$p/bench/$r/$i.m4s; done; done; done
curl -s http://127.0.0.1:$p/stats | python3 -c "import json,sys; d=json.load(sys.stdin); print('ram',d['ram']['hits'],'ssd',d['ssd']['hits'],d['ssd'].get('file_hits'))"
for k in 1 2 3 4 5 6; do wrk -t2 -c16 -d4s -s /tmp/fab/w2000.lua http://127.0.0.1:$p/ >/dev/null; done
curl -s http://127.0.0.1:$p/stats | python3 -c "import json,sys; d=json.load(sys.stdin); print('ram',d['ram']['hits'],'ssd',d['ssd']['hits'], d['edge']['misses'])"
