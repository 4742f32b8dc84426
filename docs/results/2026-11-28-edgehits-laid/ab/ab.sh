#!/usr/bin/env bash
# ab.sh ROUNDS WORKDIR: alternate A (18181), B (18190) and nginx (18182), one
# 3 s wrk -t2 -c32 round of the SIZE (100k or 1m) segments each; prints per server the
# medians of req/s, CPU µs per request (utime+stime), user, system, and wrk's.
R=${1:-9}; W=$2; d=$(dirname "$0"); size=${SIZE:-100k}
sed "s|path_fmt|\"/bench/$size/%d.m4s\"|" "$W/walk.lua" > /tmp/ab-w100.lua
A=$(pgrep -f "listen 127.0.0.1:18181"); B=$(pgrep -f "listen 127.0.0.1:18190")
N="$(cat "$W/nginx/nginx.pid") $(pgrep -P "$(cat "$W/nginx/nginx.pid")" | tr '\n' ' ')"
for i in $(seq 1 "$R"); do "$d/m.sh" 18181 $A; "$d/m.sh" 18190 $B; "$d/m.sh" 18182 $N; done > /tmp/ab.out 2>/dev/null
for p in 18181 18190 18182; do
  line=$p
  for col in 2 3 4 5 6; do
    v=$(grep "^$p " /tmp/ab.out | sed 's/[a-z_]*=//g' | awk -v c=$col '{print $c}' | sort -n | awk '{a[NR]=$1} END{print a[int((NR+1)/2)]}')
    line="$line $v"
  done
  echo "$line  (port rps cpu usr sys wrk, medians)"
done
