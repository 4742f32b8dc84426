#!/usr/bin/env bash
# start.sh BINARY: (re)start a second strata, B, on 18190 before the same origin, and warm it.
pkill -f "listen 127.0.0.1:18190"; sleep 0.5; rm -rf /tmp/ab-b; mkdir -p /tmp/ab-b
"$1" serve --data /tmp/ab-b --listen 127.0.0.1:18190 --ram 512MiB --no-images --log-level warn --upstream /=http://127.0.0.1:18183/ > /tmp/ab-b.log 2>&1 &
sleep 2; for k in 1 2; do for r in 100k 1m; do for i in $(seq 1 64); do curl -s -o /dev/null http://127.0.0.1:18190/bench/$r/$i.m4s; done; done; done
