#!/bin/bash
# load.sh PORT PID RATE: 25 s load, perf stat counts on PID for 20 s, cpu from /proc
P=$1 PID=$2 R=${3:-3000}
/tmp/hp/strata bench http://127.0.0.1:$P/edge --json --max-inflight 256 --rate $R --duration 25s --seed 7 >/tmp/hp/l.json 2>/dev/null &
B=$!
sleep 3
t0=$(awk '{print $14+$15}' /proc/$PID/stat)
perf stat -e timer:hrtimer_start,net:net_dev_xmit,syscalls:sys_enter_splice,syscalls:sys_enter_sendfile64,syscalls:sys_enter_writev,syscalls:sys_enter_sendto,syscalls:sys_enter_epoll_wait -p $PID -- sleep 20 2>&1 | grep -E "^ +[0-9]" 
t1=$(awk '{print $14+$15}' /proc/$PID/stat)
wait $B
echo "cpu µs/req: $(( (t1-t0)*10000/(R*20) ))"
jq -c '{throughput_rps,p50_ms,p99_ms,misses}' /tmp/hp/l.json
