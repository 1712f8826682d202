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
# The nested guest's sessions (TestRealBoot…, TestRealNet…: one guest at a
# time, about 16 minutes of a 2-core machine) are the longest chain of the
# run: they start first, in a go test of their own, and everything else
# fills the cores beside them at a lower priority, so that the chain is
# never the one kept waiting. (Two guests at once, the real image's session
# beside the other two, cost 250 CPU-seconds more and 90 s more of the run:
# CI run 19.) Where the run may (as root, which the nested boot needs
# anyway) the guests' priority is raised (nice -10) and the rest keeps the
# usual one; else the rest is lowered (nice 10). Lowering the rest starved
# it beside other work on the machine: with a busy loop on each core at the
# usual priority, the rest got 8 % of the CPU (CI run 13). A run of some
# tests (a -run pattern: make test-boot, …) is one go test as asked.
# kubetest/ is a module of its own (a real Kubernetes control plane, kept
# out of asb's module): it runs beside the module's tests (about a minute,
# most of it linking); a run of some tests leaves it out. Each part's log is
# appended to the full log, and its CPU time printed.
guest_tests='^TestReal(Boot|Net)'
# Each go test runs with a TMPDIR of its own, removed after it: what the
# tests leave there (asb's folder locks, one per outer folder) goes with
# the run (scripts/private-tmp.sh). The artifacts above stay.
private=(bash "$(cd "$(dirname "$0")" && pwd)/private-tmp.sh")
# Every test binary, and every program a test builds with go build, is
# linked without DWARF: nothing reads it (a panic's trace comes from the
# symbol table, kept), and the linker, about 7 % of a run's CPU, does a
# quarter less (120 CPU-seconds of links in CI run 22).
export GOFLAGS="${GOFLAGS:+$GOFLAGS }-ldflags=-w"
parts=() guest=() others=()
# lane LOG ARGS…: a go test in the background, its output, exit status and
# CPU time in LOG, LOG.rc and LOG.cpu; its pid joins parts.
lane() {
	local plog=$1
	shift
	( { time "$@" >"$plog" 2>&1; echo "$?" >"$plog.rc"; } 2>"$plog.cpu" ) &
	parts+=("$plog:$!")
}
if [ $# -eq 0 ]; then
if nice -n -10 true 2>/dev/null; then guest=(nice -n -10); else others=(nice -n 10); fi
# The rest runs only on a core the guests leave idle (SCHED_IDLE). Its
# thousands of short processes (asb, git, msb's stand-in) each took a
# slice of a core a vCPU thread of QEMU held; a vCPU preempted while its
# guest holds a lock leaves the other spinning. With the rest at
# SCHED_BATCH (a tenth of a core's share beside the guests' nice -10), the
# guests took 1422 CPU-seconds and the run 1127 s (ci87); at SCHED_IDLE,
# 1194 and 895 s (2026-12-07), the boot session 4m17s against 7m34s. The
# rest then may wait seconds for a core: its tests' checks that nothing
# fires early give that margin (testenv's starved).
if chrt --idle 0 true 2>/dev/null; then others=(chrt --idle 0 "${others[@]}"); fi
lane "$log.guest" "${guest[@]}" "${private[@]}" go test -count=1 -timeout 60m -v -run "$guest_tests" ./e2e
lane "$log.kubetest" sh -c 'cd kubetest && exec "$@" go test -count=1 -timeout 20m -v ./...' sh "${others[@]}" "${private[@]}"
set -- -skip "$guest_tests"
fi
cpu=$( { time "${others[@]}" "${private[@]}" go test -count=1 -timeout 60m -v "$@" ./... >"$log" 2>&1; echo "rc=$?" >"$log.rc"; } 2>&1 )
rc=$(sed 's/rc=//' "$log.rc")
rm -f "$log.rc"
read -r cpu_user cpu_sys <<<"$cpu"
echo "== the module's tests: CPU ${cpu_user}s user, ${cpu_sys}s system"
ku=0 ks=0
for part in "${parts[@]}"; do
	plog=${part%:*} ppid=${part##*:}
	wait "$ppid"
	cat "$plog" >>"$log"
	[ "$(cat "$plog.rc" 2>/dev/null)" = 0 ] || rc=1
	read -r pu ps <"$plog.cpu"
	echo "== ${plog##*.}: CPU ${pu:-?}s user, ${ps:-?}s system"
	read -r ku ks < <(awk -v a="$ku" -v b="$ks" -v c="${pu:-0}" -v d="${ps:-0}" 'BEGIN { printf "%.1f %.1f\n", a + c, b + d }')
	rm -f "$plog" "$plog.rc" "$plog.cpu"
done
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
read -r cpu_user cpu_sys < <(awk -v a="$cpu_user" -v b="$cpu_sys" -v c="${ku:-0}" -v d="${ks:-0}" 'BEGIN { printf "%.1f %.1f\n", a + c, b + d }')
echo "== $(( $(date +%s) - start ))s (CPU: ${cpu_user}s user, ${cpu_sys}s system; load now: $(cut -d' ' -f1-3 /proc/loadavg)); full log: $log; guest consoles: $ASB_TEST_ARTIFACTS"
echo "tests: $pass passed, $fail failed, $skip skipped"
exit "$rc"
