package e2e

import (
	"strings"
	"testing"
)

// A VM msb left draining (a graceful stop that never finished: ci60's
// restart for new secrets; asb's own stop over its budget) is killed
// before flaky's retry starts it again: msb starts no VM still draining,
// and a vm:stop would wait on it as the stop did.
func TestLibFlakyKillsAVMLeftDraining(t *testing.T) {
	msb := `case "$1" in
ls) echo vm1 ;;
status) if [ -f "$DATA/killed" ]; then echo '{"status": "Stopped"}'; else echo '{"status": "Draining"}'; fi ;;
stop) echo "msb $*" >>"$DATA/asb-calls"; : >"$DATA/killed" ;;
esac
`
	script := `printf '#!/bin/sh\necho "asb $*" >>"$DATA/asb-calls"\nexit 0\n' >"$DATA/bin/asb"; chmod +x "$DATA/bin/asb"
flaky sh -c '[ -f "$DATA/killed" ] && exit 0; echo "error: graceful stop of sandbox \"vm1\" (Local(3)) timed out after 60s waiting for shutdown completion and runtime release; the shutdown request may still complete; no kill was requested" >&2; exit 1'; echo "rc=$?"; cat "$DATA/asb-calls"; echo end`
	out, retried := runLib(t, msb, script)
	if !strings.Contains(out, "rc=0") || !strings.Contains(out, "msb stop --force --quiet vm1\nasb task vm:start\nend") ||
		strings.Contains(out, "vm:stop") || !strings.Contains(retried, "thestep:the_VM_did_not_stop") ||
		!strings.Contains(retried, "thestep:graceful_stop_of_sandbox") {
		t.Errorf("a stop over its budget, the VM left draining: want msb stop --force, vm:start, then the retry\n%s\nretried: %q", out, retried)
	}
}

// bounded's look into the VM after an msb client hung asks the VM that
// client named (a session rm's stop of its session's VM, not the
// folder's), and only one msb calls Running: an exec into a stopped VM
// would start it (2026-12-07: into the stopped folder VM, which msb
// refused to start without its secrets).
func TestLibBoundedLooksOnlyIntoTheRunningVMItWaitedOn(t *testing.T) {
	msb := `case "$1" in
ls) printf 'thevm\nthevm-s1\n' ;;
status) echo "$2" >>"$DATA/asked"; case $2 in thevm-s1) echo "{\"status\": \"$S1\"}" ;; *) echo '{"status": "Stopped"}' ;; esac ;;
exec) [ "$2" = --no-tty ] && { echo "exec into $5" >>"$DATA/asked"; exit 0; } ;;
stop) while :; do sleep 1; done ;;
esac
`
	script := `VM=thevm; bounded 2 msb stop --quiet thevm-s1; echo "rc=$?"; cat "$DATA/asked"; echo end`
	out, _ := runLib(t, msb, "export S1=Running; "+script)
	if !strings.Contains(out, "rc=124") || !strings.Contains(out, "bounded: in thevm-s1 then") || !strings.Contains(out, "exec into thevm-s1\n") ||
		strings.Contains(out, "exec into thevm\n") {
		t.Errorf("a hung stop of thevm-s1, which runs: want the look into thevm-s1 alone\n%s", out)
	}
	out, _ = runLib(t, msb, "export S1=Draining; "+script)
	if !strings.Contains(out, "rc=124") || !strings.Contains(out, "bounded: thevm-s1 was not running then") || strings.Contains(out, "exec into") {
		t.Errorf("a hung stop of thevm-s1, left draining: want no exec into any VM\n%s", out)
	}
}
