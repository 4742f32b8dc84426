# Shared by scripts/bench-nginx.sh and scripts/bench-edgehits.sh (sourced):
# wrk rounds alternating between servers over the 1 MiB and 100 KiB
# renditions, and the report of their medians and ratios against nginx.
#
# The caller sets: work (its temp dir, with walk.lua whose path_fmt this
# replaces), servers, ROUNDS, SECS, CONNS, bench_path (the path of a
# segment, %s the rendition and %%d its number: "/videos/bench/%s/%%d.m4s"),
# and defines url SERVER (its base URL) and cpu SERVER (its processes' CPU
# time so far in clock ticks, utime + stime: per request, it does not
# depend on how much of the shared cores a round got, as req/s does).
# It calls wrk_rounds, then wrk_report.
#
# Each round also reports wrk's own CPU per request (user + system, from
# bash's time): on loopback the client shares the cores, and a body the
# server sent without a copy (sendfile) is read by the client from pages
# not in its cache, where a copied one is warm from the server's copy, so
# part of a zero-copy send's saving shows up in the client's column.

hz=$(getconf CLK_TCK)
# walk rendition: $work/w.lua, wrk's script walking that rendition's segments.
walk() {
  # shellcheck disable=SC2059 # bench_path is the format
  sed "s|path_fmt|\"$(printf "$bench_path" "$1")\"|" "$work/walk.lua" > "$work/w.lua"
}
run() { # server rendition -> "rps p50_ms p99_ms cpu_us_per_request client_cpu_us_per_request"
  walk "$2"
  local c0; c0=$(cpu "$1")
  local TIMEFORMAT='%U %S'
  { time wrk -t2 -c"$CONNS" -d"${SECS}s" --latency -s "$work/w.lua" "$(url "$1")" > "$work/out" 2> "$work/wrk.err"; } 2> "$work/wrk.time"
  local c1; c1=$(cpu "$1")
  if grep -q "Non-2xx" "$work/out"; then echo "non-2xx responses from $1:" >&2; cat "$work/out" >&2; exit 1; fi
  rps=$(awk '/Requests\/sec/ {print $2}' "$work/out")
  p50=$(awk '$1=="50%" {print $2}' "$work/out")
  p99=$(awk '$1=="99%" {print $2}' "$work/out")
  n=$(awk '/requests in/ {print $1}' "$work/out")
  echo "$rps $(ms "$p50") $(ms "$p99") $(awk -v c=$((c1 - c0)) -v n="$n" -v hz="$hz" 'BEGIN {printf "%.1f", c*1e6/hz/n}')" \
    "$(awk -v n="$n" '{printf "%.1f", ($1+$2)*1e6/n}' "$work/wrk.time")"
}
ms() { awk -v v="$1" 'BEGIN { n=v+0; if (v ~ /us$/) n/=1000; else if (v ~ /ms$/) n+=0; else if (v ~ /s$/) n*=1000; printf "%.2f", n }'; }
median() { sort -n | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }

# wrk_rounds: ROUNDS rounds per rendition, the servers in turn, into
# $work/results (one line per run, printed as it ends).
wrk_rounds() {
  echo "rendition server round rps p50_ms p99_ms cpu_us client_cpu_us" > "$work/results"
  for r in 1m 100k; do
    for k in $(seq 1 "$ROUNDS"); do
      for s in $servers; do
        echo "$r $s $k $(run $s $r)" >> "$work/results"
        tail -1 "$work/results" >&2
      done
    done
  done
}

# wrk_report: the medians per server and rendition, each server's ratios
# to nginx's, every round to BENCH_RESULTS (for per-round ratios).
wrk_report() {
  echo
  echo "| segment | server | req/s (median of $ROUNDS) | MiB/s | p50 ms | p99 ms | CPU µs/request | wrk's CPU µs/request |"
  echo "|---|---|---|---|---|---|---|---|"
  for r in 1m 100k; do
    size=$([ $r = 1m ] && echo 1048576 || echo 102400)
    for s in $servers; do
      rps=$(awk -v r=$r -v s=$s '$1==r && $2==s {print $4}' "$work/results" | median)
      p50=$(awk -v r=$r -v s=$s '$1==r && $2==s {print $5}' "$work/results" | median)
      p99=$(awk -v r=$r -v s=$s '$1==r && $2==s {print $6}' "$work/results" | median)
      cus=$(awk -v r=$r -v s=$s '$1==r && $2==s {print $7}' "$work/results" | median)
      wus=$(awk -v r=$r -v s=$s '$1==r && $2==s {print $8}' "$work/results" | median)
      mib=$(awk -v a="$rps" -v b="$size" 'BEGIN {printf "%.0f", a*b/1048576}')
      echo "| $r | $s | $rps | $mib | $p50 | $p99 | $cus | $wus |"
      eval "rps_${s}_${r}=$rps; cpu_${s}_${r}=$cus"
    done
    for s in $servers; do
      [ "$s" = nginx ] && continue
      ratio=$(eval "awk -v a=\$rps_${s}_$r -v b=\$rps_nginx_$r -v c=\$cpu_${s}_$r -v d=\$cpu_nginx_$r 'BEGIN {printf \"%.2fx req/s, %.2fx CPU/request\", a/b, c/d}'")
      # The median of the rounds' own ratios: each round's runs are
      # seconds apart, so it moves less with the machine's other load.
      per=$(awk -v r=$r -v s=$s '$1==r && $2==s {a[$3]=$4} $1==r && $2=="nginx" {b[$3]=$4} END {for (k in a) if (b[k] > 0) print a[k]/b[k]}' "$work/results" | median)
      echo "| $r | $s/nginx | $ratio (per-round median $(printf %.2f "$per")x req/s) | | | | | |"
    done
  done
  echo
  cp "$work/results" "${BENCH_RESULTS:-/dev/null}"
  echo "wrk -t2 -c$CONNS -d${SECS}s, $ROUNDS alternating rounds; $(nproc) cores; $(date -u +%F)"
}

# wrk_counts (PERF_COUNTS=1; needs perf and root): one more round per
# server and rendition, not counted in the medians, under `perf stat`
# attached to the server's processes (the caller's pids SERVER), and a
# table of what each request cost the kernel: packets sent, timers
# started, and the system calls a server makes to read a request and
# send its answer.
wrk_counts() {
  [ -n "${PERF_COUNTS:-}" ] || return 0
  command -v perf >/dev/null || { echo "PERF_COUNTS: no perf (apt-get install linux-perf)" >&2; return 0; }
  local ev="net:net_dev_xmit,timer:hrtimer_start" sc
  for sc in read recvfrom sendto sendmsg writev sendfile64 splice epoll_wait epoll_pwait futex nanosleep; do ev="$ev,syscalls:sys_enter_$sc"; done
  echo
  echo "Per request, one more round each under perf stat (PERF_COUNTS=1):"
  echo
  echo "| segment | server | req/s | packets | timers | read | recvfrom | sendto | sendmsg | writev | sendfile | splice | epoll | futex | nanosleep |"
  echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
  local r s w secs=$((SECS > 3 ? SECS - 2 : 1)) # perf's window, within wrk's
  for r in 1m 100k; do
    for s in $servers; do
      walk "$r"
      wrk -t2 -c"$CONNS" -d"${SECS}s" -s "$work/w.lua" "$(url "$s")" > "$work/out" 2>&1 &
      w=$!
      sleep 1
      if ! perf stat -x, -e "$ev" -p "$(pids "$s" | xargs | tr ' ' ',')" -- sleep "$secs" 2> "$work/perf" >/dev/null; then
        wait $w
        echo "| $r | $s | perf stat failed: $(grep -v '^$' "$work/perf" | head -1) |"
        continue
      fi
      wait $w
      awk -F, -v r="$r" -v s="$s" -v rps="$(awk '/Requests\/sec/ {print $2}' "$work/out")" -v secs="$secs" '
        $3 != "" { n = split($3, a, "_"); k = a[n]; if ($3 ~ /net_dev_xmit/) k = "packets"; if ($3 ~ /hrtimer_start/) k = "timers"
                   if ($1 ~ /^[0-9]+$/) c[k] += $1; else bad[k] = 1 } # <not counted>, <not supported>
        END {
          q = rps * secs; if (q <= 0) q = 1
          printf "| %s | %s | %.0f", r, s, rps
          split("packets timers read recvfrom sendto sendmsg writev sendfile64 splice epoll futex nanosleep", f, " ")
          for (i = 1; i <= 12; i++) {
            if (f[i] == "epoll") { v = c["wait"] + c["pwait"]; x = bad["wait"] || bad["pwait"] } else { v = c[f[i]]; x = bad[f[i]] }
            if (x) printf " | n/a"; else printf " | %.2f", v/q
          }
          print " |"
        }' "$work/perf"
    done
  done
}
