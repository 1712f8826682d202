#!/usr/bin/env bash
# fuzz.sh: run each fuzzer of asb for ${FUZZTIME:-30s}, one at a time (go
# test -fuzz takes one target per run). `make fuzz` calls it; set FUZZTIME=2m
# for a longer run and FUZZPARALLEL to change the number of workers.
# New failing inputs are written under PKG/testdata/fuzz/FuzzXxx/: commit
# them with the fix, they become regression tests of `go test`.
set -euo pipefail
cd "$(dirname "$0")/.."

FUZZTIME=${FUZZTIME:-30s}
FUZZPARALLEL=${FUZZPARALLEL:-1}
GO=${GO:-go}

status=0
for pkg in $($GO list ./...); do
	dir=$($GO list -f '{{.Dir}}' "$pkg")
	for target in $(grep -ho '^func Fuzz[A-Za-z0-9_]*' "$dir"/*_test.go 2>/dev/null | sed 's/^func //' | sort -u); do
		echo "fuzz: $pkg $target for $FUZZTIME"
		if ! $GO test "$pkg" -run '^$' -fuzz "^${target}\$" -fuzztime "$FUZZTIME" -parallel "$FUZZPARALLEL"; then
			status=1
		fi
	done
done
exit $status
