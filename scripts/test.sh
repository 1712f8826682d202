#!/usr/bin/env bash
# test.sh: every test of the module and of kubetest/ (make test, and so CI). Prints go test's
# package lines, each real-tool test (TestReal…) with how long it took, and
# the whole output of any test that failed; the full log is kept in
# ${ASB_TEST_LOG:-/tmp/asb-test.log}.
set -uo pipefail
log=${ASB_TEST_LOG:-/tmp/asb-test.log}
# What explains a failure after the run (each guest session's console):
# one folder a run, never reused.
ASB_TEST_ARTIFACTS=${ASB_TEST_ARTIFACTS:-$(mktemp -d "${TMPDIR:-/tmp}/asb-test-artifacts.XXXXXX")}
export ASB_TEST_ARTIFACTS
start=$(date +%s)
# The CPU time of the whole run (every test process, the guests' QEMU
# included) says what it costs whatever else the machine runs.
TIMEFORMAT='%U %S'
cpu=$( { time go test -count=1 -timeout 60m -v "$@" ./... >"$log" 2>&1; echo "rc=$?" >"$log.rc"; } 2>&1 )
rc=$(sed 's/rc=//' "$log.rc")
rm -f "$log.rc"
# kubetest/ is a module of its own (a real Kubernetes control plane, kept
# out of asb's module): its tests run here too, into the same log.
kcpu=$( { time (cd kubetest && go test -count=1 -timeout 20m -v ./...) >>"$log" 2>&1 || echo "rc=1" >"$log.rc"; } 2>&1 )
[ -s "$log.rc" ] && rc=1
rm -f "$log.rc"
read -r ku ks <<<"$kcpu"
shape=$(grep -m1 -oE '^host shape: [a-z-]+' "$log" | cut -d' ' -f3)
echo "== host shape: ${shape:-unknown} (can-boot: VMs boot and run commands; kvm-no-virt: boots spin, so the tests interrupt them; no-kvm: boots fail at once)"
echo "== real-tool tests (durations)"
grep -E -- '^\s*--- (PASS|FAIL|SKIP): TestReal[^/[:space:]]+ \(' "$log" | sed 's/^\s*/  /'
if [ "$rc" -ne 0 ]; then
	echo "== output of the failed tests"
	# Print, for each failed test, what it logged since its === RUN line.
	# A parallel subtest's output comes after its --- FAIL line, indented
	# below it; a serial test's before it, since its === RUN line.
	awk '/^=== (RUN|CONT|PAUSE|NAME)/ { name=$3; buf[name]=""; infail=0; next }
	     infail { match($0, /^[ \t]*/); if (RLENGTH > failind || $0 == "") { print; next } }
	     { infail=0 }
	     /^[ \t]*--- FAIL: / { n=$3; printf "%s", buf[n]; print; infail=1; match($0, /^[ \t]*/); failind=RLENGTH; next }
	     { if (name != "") buf[name]=buf[name] $0 "\n" }
	     /^(panic:|FAIL\t|fatal error:)/ { print }' "$log" | tail -n 400
fi
# A test binary that ended without go test's closing PASS was replaced or
# cut short (say, by an exec): its "ok" cannot be trusted.
if ! awk '/^ok[ \t]/ && $0 !~ /\(cached\)|no test files/ { if (prev != "PASS") { print "no PASS before: " $0; bad=1 } }
          { if ($0 != "") prev=$0 } END { exit bad }' "$log"; then
	echo "== a package's tests did not all run"
	rc=1
fi
echo "== packages"
grep -E '^(ok|FAIL|panic:)\s' "$log" || true
# go test's own closing lines: ok/FAIL per package, counted by CI.
pass=$(grep -cE -- '^\s*--- PASS' "$log")
fail=$(grep -cE -- '^\s*--- FAIL' "$log")
skip=$(grep -cE -- '^\s*--- SKIP' "$log")
read -r cpu_user cpu_sys <<<"$cpu"
read -r cpu_user cpu_sys < <(awk -v a="$cpu_user" -v b="$cpu_sys" -v c="${ku:-0}" -v d="${ks:-0}" 'BEGIN { printf "%.1f %.1f\n", a + c, b + d }')
echo "== $(( $(date +%s) - start ))s (CPU: ${cpu_user}s user, ${cpu_sys}s system; load now: $(cut -d' ' -f1-3 /proc/loadavg)); full log: $log; guest consoles: $ASB_TEST_ARTIFACTS"
echo "tests: $pass passed, $fail failed, $skip skipped"
exit "$rc"
