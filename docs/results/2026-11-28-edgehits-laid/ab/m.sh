#!/usr/bin/env bash
# m.sh PORT PIDS...: one 3 s round against PORT; the CPU of PIDS and of wrk per request.
port=$1; shift
cpu() { local u=0 s=0; for p in "$@"; do read -r a b < <(awk '{print $14, $15}' "/proc/$p/stat" 2>/dev/null || echo 0 0); u=$((u+a)); s=$((s+b)); done; echo $u $s; }
read -r u0 s0 < <(cpu "$@")
out=$( { /usr/bin/time -f "WRKCPU %U %S" wrk -t2 -c32 -d3s -s /tmp/ab-w100.lua "http://127.0.0.1:$port/"; } 2>&1)
read -r u1 s1 < <(cpu "$@")
n=$(echo "$out" | awk '/requests in/{print $1}')
rps=$(echo "$out" | awk '/Requests\/sec/{print $2}')
w=$(echo "$out" | awk '/WRKCPU/{print ($2+$3)*1e6}')
f() { echo "$1" | bc -l | xargs printf %.1f; }
echo "$port rps=$rps cpu_us=$(f "($u1+$s1-$u0-$s0)*10000/$n") usr_us=$(f "($u1-$u0)*10000/$n") sys_us=$(f "($s1-$s0)*10000/$n") wrk_us=$(f "${w:-0}/$n")"
