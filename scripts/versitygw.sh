#!/bin/sh
# versitygw.sh installs versitygw, the S3 server Strata's tests run
# (internal/storage/s3test), into <repo>/.cache/bin where it is missing,
# at the pinned version, built from the Go module proxy outside Strata's
# own go.mod. It prints the binary's path. Concurrent runs (test binaries
# of several packages) wait for one another on a lock.
set -eu

version=v1.8.0
root=$(cd "$(dirname "$0")/.." && pwd)
bin="$root/.cache/bin"
stamp="$bin/versitygw.version"

installed() { [ -x "$bin/versitygw" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$version" ]; }

mkdir -p "$bin"
if ! installed; then
	exec 9>"$bin/.versitygw.lock"
	flock 9
	if ! installed; then
		echo "versitygw.sh: installing versitygw $version into $bin" >&2
		rm -f "$stamp"
		# Outside any module, so that Strata's go.mod neither constrains
		# nor records versitygw's dependencies.
		(cd "$bin" && GOBIN="$bin" GO111MODULE=on GOFLAGS=-buildvcs=false \
			go install "github.com/versity/versitygw/cmd/versitygw@$version") >&2
		echo "$version" >"$stamp"
	fi
fi
echo "$bin/versitygw"
