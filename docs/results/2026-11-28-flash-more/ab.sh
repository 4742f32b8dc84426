#!/usr/bin/env bash
# ab.sh ROUNDS WORKDIR: alternate A (18190), B (18191) and nginx (18182), one 3 s wrk round of SIZE each.
R=${1:-9}; W=$2; d=/work/main/docs/results/2026-11-28-edgehits-laid/ab; size=${SIZE:-100k}
sed "s|path_fmt|\"/bench/$size/%d.m4s\"|" "$W/${WALK:-walk.lua}" > /tmp/ab-w100.lua
A=$(pgrep -f "listen 127.0.0.1:18190"); B=$(pgrep -f "listen 127.0.0.1:18191")
N="$(cat "$W/nginx/nginx.pid") $(pgrep -P "$(cat "$W/nginx/nginx.pid")" | tr '\n' ' ')"
for i in $(seq 1 "$R"); do "$d/m.sh" 18190 $A; "$d/m.sh" 18191 $B; "$d/m.sh" 18182 $N; done > /tmp/fab/ab.out 2>/dev/null
for p in 18190 18191 18182; do
  line=$p
  for col in 2 3 4 5 6; do
    v=$(grep "^$p " /tmp/fab/ab.out | sed 's/[a-z_]*=//g' | awk -v c=$col '{print $c}' | sort -n | awk '{a[NR]=$1} END{print a[int((NR+1)/2)]}')
    line="$line $v"
  done
  echo "$line  (port rps cpu usr sys wrk, medians)"
done
