#!/usr/bin/env bash
# Runs every fuzz target of the module for FUZZTIME each (default 60s), so
# that a new target is fuzzed without anyone remembering to list it.
# Usage: scripts/fuzz.sh [FUZZTIME]
set -euo pipefail
cd "$(dirname "$0")/.."
fuzztime="${1:-${FUZZTIME:-60s}}"
grep -rl --include='*_test.go' '^func Fuzz' internal cmd | sort | while read -r f; do
	pkg="./$(dirname "$f")/"
	for name in $(sed -n 's/^func \(Fuzz[A-Za-z0-9_]*\)(.*/\1/p' "$f"); do
		echo "== $pkg $name ($fuzztime)"
		go test "$pkg" -run '^$' -fuzz "^${name}\$" -fuzztime "$fuzztime"
	done
done
