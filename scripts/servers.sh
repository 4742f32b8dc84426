# servers.sh: what the scripts that start servers on 127.0.0.1 share.
# Source it after setting `work` (a temporary directory, removed at exit);
# record each started server's pid with `pids+=($!)`.
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
	rm -rf "$work"
}
trap cleanup EXIT

# free_port prints a TCP port free on 127.0.0.1 now.
free_port() {
	python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'
}

# wait_http URL: a bounded readiness poll (30 s at most).
wait_http() {
	for _ in $(seq 1 300); do
		curl -s -o /dev/null "$1" && return 0
		sleep 0.1
	done
	echo "$(basename "$0"): $1 never answered" >&2
	return 1
}

# ats_runroot DIR writes DIR/runroot.yaml: every directory Apache Traffic
# Server uses (config in DIR/etc, cache, run, log) under DIR, so that it
# runs unprivileged with the Debian package's binaries and modules.
ats_runroot() {
	cat >"$1/runroot.yaml" <<-YAML
		prefix: /usr
		exec_prefix: /usr
		bindir: /usr/bin
		sbindir: /usr/sbin
		sysconfdir: $1/etc
		datadir: $1/cache
		includedir: /usr/include
		libdir: /usr/lib/trafficserver
		libexecdir: /usr/lib/trafficserver/modules
		localstatedir: $1/run
		runtimedir: $1/run
		logdir: $1/log
		cachedir: $1/cache
	YAML
}
