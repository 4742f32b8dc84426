# Per-request CPU of one server process, by kernel path, from a system-wide
# `perf record -e cpu-clock -F 999 -a -g` taken while `strata bench` loads it.
#   python3 table.py PERF_DATA PID RATE SECONDS
import collections,sys,subprocess
f,pid,rate,secs=sys.argv[1],int(sys.argv[2]),float(sys.argv[3]),float(sys.argv[4])
out=subprocess.run(["perf","script","-i",f,"-F","pid,ip,sym"],capture_output=True,text=True).stdout
S=[];cur=None
for line in out.splitlines():
    if line and not line[0].isspace() and line.strip():
        cur=[int(line.split()[0]),[]]; S.append(cur)
    elif line.strip() and cur is not None:
        p=line.split(None,1); cur[1].append(p[1].strip() if len(p)>1 else '?')
ss=[s[1] for s in S if s[0]==pid]
us=lambda n: n*1e6/999/(rate*secs)
inc=collections.Counter()
for s in ss:
    for fn in set(s): inc[fn]+=1
print("all samples of pid %d: %.0f us/request"%(pid,us(len(ss))))
rows=[("system calls","do_syscall_64"),("  tcp_sendmsg (send path)","tcp_sendmsg"),("    of it tcp_write_xmit","tcp_write_xmit"),("    of it copying into the socket","_copy_from_iter"),("  softirqs (loopback receive, timers)","handle_softirqs"),("  splice(2)","__x64_sys_splice"),("  sendfile(2)","__x64_sys_sendfile64"),("  pread(2)","__x64_sys_pread64"),("  futex(2)","__x64_sys_futex"),("  nanosleep(2)","__x64_sys_nanosleep"),("  epoll_wait/pwait","__x64_sys_epoll_pwait"),("irq-restore points (timer reprogramming, VM exits)","_raw_spin_unlock_irqrestore"),("Go scheduler (schedule)","runtime.schedule"),("Go monitor (sysmon)","runtime.sysmon"),("Go allocation (mallocgc)","runtime.mallocgc")]
for name,fn in rows:
    if fn=="__x64_sys_epoll_pwait": n=inc[fn]+inc["__x64_sys_epoll_wait"]
    else: n=inc[fn]
    print("| %s | %.0f |"%(name,us(n)))
