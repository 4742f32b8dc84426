#!/bin/bash
# start origin + strata (+ ats) warmed; leave running. usage: up.sh strata|ats
set -e
cd /work/main
pgrep -f "lab origin --listen 127.0.0.1:19001" >/dev/null || { /tmp/hp/lab origin --listen 127.0.0.1:19001 --titles 1 --max-length 10m --delay 40ms --bandwidth 100Mbit --link 0 >/tmp/hp/origin.log 2>&1 & sleep 2; }
if [ "$1" = strata ]; then
rm -rf /tmp/hp/data /tmp/hp/flashdir; mkdir -p /tmp/hp/data /tmp/hp/flashdir
GOMAXPROCS=2 setsid ${BIN:-/tmp/hp/strata} serve --debug-addr 127.0.0.1:19003 --data /tmp/hp/data --listen 127.0.0.1:19002 --upstream "/edge/=http://127.0.0.1:19001/" --no-images --memory 640MiB --flash /tmp/hp/flashdir/flash --flash-size 2GiB --files-flash-size 0 --log-level warn ${FLAGS:-} >/tmp/hp/server.log 2>&1 &
P=19002; sleep 2
else
source scripts/servers.sh
ts=/tmp/hp/ts; rm -rf $ts /tmp/hp/atsflash; mkdir -p $ts/etc $ts/run $ts/log $ts/cache /tmp/hp/atsflash; chmod -R 777 $ts /tmp/hp/atsflash
cp -r /etc/trafficserver/. $ts/etc/
for f in records.config remap.config storage.config; do
  sed -e "s|@WORK@|$ts|g" -e "s|@PORT@|19012|g" -e "s|@UPSTREAM@|127.0.0.1:19001|g" -e "s|@THREADS@|2|g" -e "s|@RAM@|$(numfmt --from=iec 192M)|g" -e "s|@FLASH@|/tmp/hp/atsflash|g" -e "s|@FLASH_SIZE@|2G|g" scripts/peers/trafficserver/$f > $ts/etc/$f
done
ats_runroot $ts
setsid traffic_server --run-root=$ts/runroot.yaml >/tmp/hp/ats.log 2>&1 &
P=19012
for i in $(seq 30); do curl -sf -o /dev/null http://127.0.0.1:19012/edge/videos && break; sleep 1; done
fi
/tmp/hp/strata bench http://127.0.0.1:$P/edge --json --max-inflight 256 --rate 100 --duration 40s --seed 1 >/dev/null 2>&1
/tmp/hp/strata bench http://127.0.0.1:$P/edge --json --max-inflight 256 --rate 400 --duration 20s --seed 2 >/dev/null 2>&1
echo up $1
