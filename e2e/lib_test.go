package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/agents-sandbox/asb/internal/testkit/testenv"
)

// runLib runs script after guestlib.sh and lib.sh (as a guest session would) with a stand-in
// msb first on PATH, and returns its combined output and $DATA/retried.
func runLib(t *testing.T, msb, script string) (string, string) {
	t.Helper()
	data := t.TempDir()
	bin := filepath.Join(data, "bin")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(bin, "msb"), []byte("#!/bin/sh\n"+msb), 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("sh", "-c", testenv.GuestLib+bootLib+"_n=thestep\n"+script)
	cmd.Env = append(os.Environ(), "DATA="+data, "PATH="+bin+":"+os.Getenv("PATH"))
	out, _ := cmd.CombinedOutput()
	retried, _ := os.ReadFile(filepath.Join(data, "retried"))
	return string(out), string(retried)
}

// bounded says whose hang it was: an msb client still running at the limit
// is msb's (and flaky retries it once); a hang with none is not retried.
func TestLibBoundedNamesTheHang(t *testing.T) {
	out, retried := runLib(t, "[ \"$1\" = exec ] || exit 0\nwhile :; do sleep 1; done\n", `flaky bounded 2 msb exec vm -- true; echo "rc=$?"`)
	if !strings.Contains(out, "msb did not return within 2 s: ") || !strings.Contains(out, "rc=124") ||
		strings.Count(out, "bounded:") != 2 || !strings.Contains(retried, "thestep:msb_did_not_return") {
		t.Errorf("an msb exec that never returns: want it named msb's and retried once, then 124\n%s\nretried: %q", out, retried)
	}
	// With the session's VM known, what runs in it then is listed (here the
	// stand-in's exec as root runs its command on this host).
	out, _ = runLib(t, "[ \"$1\" = status ] && { echo '{\"status\": \"Running\"}'; exit 0; }\n[ \"$1\" = exec ] || exit 0\n[ \"$2\" = --no-tty ] && { shift 6; exec \"$@\"; }\nwhile :; do sleep 1; done\n",
		`echo "me=$$"; VM=thevm; bounded 2 msb exec vm -- true; echo "rc=$?"`)
	me := regexp.MustCompile(`me=([0-9]+)`).FindStringSubmatch(out)
	if !strings.Contains(out, "bounded: in thevm then (msb exec as root") || me == nil || !strings.Contains(out, "\n  "+me[1]+" ") {
		t.Errorf("an msb exec that never returns, in a session whose VM is known: want the VM's processes listed\n%s", out)
	}
	out, retried = runLib(t, "exit 0\n", `flaky bounded 2 sleep 30; echo "rc=$?"`)
	if !strings.Contains(out, "no msb command was running") || !strings.Contains(out, "rc=124") ||
		strings.Count(out, "bounded:") != 1 || retried != "" {
		t.Errorf("a hang with no msb client: want it not retried\n%s\nretried: %q", out, retried)
	}
}

// bounded kills the msb clients of its own command, and only those: the
// lib's tests run it on a host where other tests' real msb commands run
// (a cold CI run's TestRealMSBLoad had its msb load killed by this file's
// tests). Here another msb exec runs beside it and lives on, while the one
// under the bounded shell, orphaned by the shell's kill, is killed too (a
// zombie until some process reaps it: kill -0 cannot tell).
func TestLibBoundedKillsOnlyItsOwnClients(t *testing.T) {
	out, _ := runLib(t, "[ \"$1\" = exec ] || exit 0\necho $$ >>\"$DATA/pids.$2\"\nwhile :; do sleep 1; done\n", `msb exec other -- true &
other=$!
bounded 2 sh -c 'msb exec vm -- true; echo after'; echo "rc=$?"
sleep 0.5
if kill -0 "$other" 2>/dev/null; then echo other=alive; kill "$other"; else echo other=killed; fi
for p in $(cat "$DATA/pids.vm"); do [ -e "/proc/$p" ] && ! grep -q ') Z ' "/proc/$p/stat" && echo "own=alive $p"; done; echo own=checked`)
	if !strings.Contains(out, "msb did not return within 2 s: ") || !strings.Contains(out, "rc=124") {
		t.Fatalf("an msb exec under a shell that never returns: want it ended and named msb's\n%s", out)
	}
	if !strings.Contains(out, "other=alive") {
		t.Errorf("bounded killed an msb command that was not its own\n%s", out)
	}
	if strings.Contains(out, "own=alive") || !strings.Contains(out, "own=checked") {
		t.Errorf("bounded left its own msb client running\n%s", out)
	}
}

// bounded's limit is seconds of the clock, however long a turn of its loop
// takes (under emulation a sleep 1 took well over a second, and a step
// bounded at 900 s ran 25 minutes: CI run 26). Here each turn's sleep 1
// takes 2 s: a limit of 3 s ends the command after one or two turns (the
// clock read in whole seconds), not three.
func TestLibBoundedCountsTheClock(t *testing.T) {
	real, err := exec.LookPath("sleep")
	if err != nil {
		t.Fatal(err)
	}
	out, _ := runLib(t, "while :; do "+real+" 1; done\n", `printf '#!/bin/sh\n[ "$1" = 1 ] || exec `+real+` "$@"\necho x >>"$DATA/sleeps"\nexec `+real+` 2\n' >"$DATA/bin/sleep"; chmod +x "$DATA/bin/sleep"
bounded 3 msb exec vm -- true; echo "rc=$?"; echo "sleeps=$(wc -l <"$DATA/sleeps")"`)
	if !strings.Contains(out, "msb did not return within 3 s") || !strings.Contains(out, "rc=124") {
		t.Fatalf("an msb exec that never returns, bounded at 3 s: want it ended and named\n%s", out)
	}
	// Three turns are the old count of turns; the clock (read in whole
	// seconds) says 3 s after one or two.
	if strings.Contains(out, "sleeps=3") || !strings.Contains(out, "sleeps=") {
		t.Errorf("bounded slept as many turns as its limit has seconds, not until the clock said 3 s: want 1 or 2 sleeps of 2 s\n%s", out)
	}
}

// bounded returns when its command ends, not at its clock's next turn (a
// poll each second added up to a second to every exec the boot session's
// speed steps compare with bare msb's). Here a turn of the clock takes 5 s
// and says so when it ends; the command takes 0.3 s: bounded must return
// before any turn ended.
func TestLibBoundedReturnsWhenItsCommandEnds(t *testing.T) {
	real, err := exec.LookPath("sleep")
	if err != nil {
		t.Fatal(err)
	}
	out, _ := runLib(t, "exit 0\n", `printf '#!/bin/sh\n[ "$1" = 1 ] || exec `+real+` "$@"\n`+real+` 5\necho x >>"$DATA/turns"\n' >"$DATA/bin/sleep"; chmod +x "$DATA/bin/sleep"
bounded 30 `+real+` 0.3; echo "rc=$? turns=$(cat "$DATA/turns" 2>/dev/null | wc -l)"`)
	if !strings.Contains(out, "rc=0 turns=0") {
		t.Errorf("a command of 0.3 s, bounded at 30 s: want its exit then, before a turn of the clock ended\n%s", out)
	}
}

// flaky retries only what FLAKES names, and what it retried is recorded.
func TestLibFlakyRetriesOnlyNamedFailures(t *testing.T) {
	out, retried := runLib(t, "", `flaky sh -c 'echo "error: sandbox process exited before agent relay became available" >&2; exit 1'; echo "rc=$?"`)
	if strings.Count(out, "error: sandbox process exited") != 2 || !strings.Contains(retried, "thestep:before_agent_relay") {
		t.Errorf("msb's relay failure: want one retry\n%s\nretried: %q", out, retried)
	}
	out, retried = runLib(t, "", `flaky sh -c 'echo "asb: task agent failed: exit status 255" >&2; exit 1'; echo "rc=$?"`)
	if strings.Count(out, "exit status 255") != 1 || !strings.Contains(out, "rc=1") || retried != "" {
		t.Errorf("a failure no message names as msb's: want no retry\n%s\nretried: %q", out, retried)
	}
}

// A retry that fails in another named way is retried again (two faults of
// the emulation, independent: ci20's create, msb's readiness timeout and
// then its retry's VM kernel reset); the same kind twice stands, but for
// the VM's kernel resetting, and no step runs more than three times.
func TestLibFlakyRetriesAnotherKindOnce(t *testing.T) {
	kinds := `n=$(cat "$DATA/n" 2>/dev/null || echo 0); n=$((n+1)); echo $n >"$DATA/n"
case $n in
1) echo "error: startup timed out after 179.99999655 seconds before agent readiness" >&2; exit 1 ;;
2) echo "INFO msb_krun_vmm::linux::vstate: Received KVM_EXIT_SHUTDOWN signal" >&2; exit 1 ;;
3) [ -n "$THIRD" ] && { echo "error: sandbox process exited before agent relay became available" >&2; exit 1; } ; echo made; exit 0 ;;
esac`
	out, retried := runLib(t, "", "flaky sh -c '"+strings.ReplaceAll(kinds, "'", `'"'"'`)+`'; echo "rc=$?"`)
	if !strings.Contains(out, "made") || !strings.Contains(out, "rc=0") ||
		!strings.Contains(retried, "thestep:startup_timed_out") || !strings.Contains(retried, "thestep:Received_KVM_EXIT_SHUTDOWN") {
		t.Errorf("two named faults of different kinds: want two retries, then the third try's success\n%s\nretried: %q", out, retried)
	}
	out, retried = runLib(t, "", "THIRD=1 flaky sh -c '"+strings.ReplaceAll(kinds, "'", `'"'"'`)+`'; echo "rc=$?"`)
	if !strings.Contains(out, "after two retries") || !strings.Contains(out, "rc=1") || strings.Count(retried, "thestep:") != 2 {
		t.Errorf("three named faults: want the third to stand\n%s\nretried: %q", out, retried)
	}
	resets := `n=$(cat "$DATA/n" 2>/dev/null || echo 0); n=$((n+1)); echo $n >"$DATA/n"; [ $n -gt ${FAILS:-2} ] && { echo made; exit 0; }; echo "INFO msb_krun_vmm::linux::vstate: Received KVM_EXIT_SHUTDOWN signal" >&2; exit 1`
	out, retried = runLib(t, "", "flaky sh -c '"+resets+`'; echo "rc=$?"`)
	if !strings.Contains(out, "made") || !strings.Contains(out, "rc=0") || strings.Count(retried, "thestep:Received_KVM_EXIT_SHUTDOWN") != 2 {
		t.Errorf("the VM's kernel reset twice: want it retried twice (no command in the VM resets its kernel), then the third try's success\n%s\nretried: %q", out, retried)
	}
	out, retried = runLib(t, "", "FAILS=3 flaky sh -c '"+resets+`'; echo "rc=$?"`)
	if !strings.Contains(out, "after two retries") || !strings.Contains(out, "rc=1") || strings.Count(retried, "thestep:") != 2 {
		t.Errorf("the VM's kernel reset three times: want the third to stand\n%s\nretried: %q", out, retried)
	}
	again := `n=$(cat "$DATA/n" 2>/dev/null || echo 0); echo $((n+1)) >"$DATA/n"; echo "error: startup timed out after 1$n.5 seconds before agent readiness" >&2; exit 1`
	out, retried = runLib(t, "", "flaky sh -c '"+again+`'; echo "rc=$?"`)
	if strings.Count(out, "error: startup timed out") != 2 || !strings.Contains(out, "a second time") || strings.Count(retried, "thestep:") != 1 {
		t.Errorf("the same kind twice (its figures aside): want one retry, then the failure to stand\n%s\nretried: %q", out, retried)
	}
}

// A failure that names msb's relay first and the VM's kernel reset after
// it (asb prints the end of msb's log when a create fails) is the reset:
// retried as such, twice in a row, as a reset may be (a create2 of
// 2026-12-07 failed so twice, and its second failure stood as "the same
// kind twice").
func TestLibFlakyNamesTheResetBehindARelayFailure(t *testing.T) {
	both := `n=$(cat "$DATA/n" 2>/dev/null || echo 0); n=$((n+1)); echo $n >"$DATA/n"; [ $n -gt 2 ] && { echo made; exit 0; }
echo "error: sandbox process exited (exit status: 0) before agent relay became available" >&2
echo "  INFO msb_krun_vmm::linux::vstate: Received KVM_EXIT_SHUTDOWN signal" >&2; exit 1`
	out, retried := runLib(t, "", "flaky sh -c '"+both+`'; echo "rc=$?"`)
	if !strings.Contains(out, "made") || !strings.Contains(out, "rc=0") || strings.Count(retried, "thestep:Received_KVM_EXIT_SHUTDOWN") != 2 {
		t.Errorf("two creates that each ended in the VM's kernel reset: want both retried as the reset, then the third try's success\n%s\nretried: %q", out, retried)
	}
}

// Within a step, what bounded and flaky decided reaches the console at the
// next heartbeat (guestlib.sh's live), not only with the step's output at
// its end (each command here runs on for a few beats after them):
// a session killed before then still says it (CI of 375b4da). A create's
// cleanup before its retry is bounded too: an msb rm that never returns
// costs its bound, and the retry goes on.
func TestLibSaysLiveWhatItDecided(t *testing.T) {
	out, _ := runLib(t, "[ \"$1\" = exec ] || exit 0\nwhile :; do sleep 1; done\n", `t() { flaky bounded 2 msb exec vm -- true; sleep 3; }; STEP_BEAT=1 step thestep t`)
	for _, want := range []string{"bounded: msb did not return within 2 s: ",
		"flaky: retried: msb did not return within 2 s", "flaky: not retried: msb did not return within 2 s, a second time"} {
		if !regexp.MustCompile(`(?m)^@@asb live thestep [0-9.]+ ` + regexp.QuoteMeta(want)).MatchString(out) {
			t.Errorf("no live line %q:\n%s", want, out)
		}
	}
	msb := `case "$1" in ls) echo vm1 ;; rm) exec sleep 100 ;; esac`
	script := `printf '#!/bin/sh\nif [ -f "$DATA/once" ]; then sleep 3; echo made; else : >"$DATA/once"; echo "error: sandbox process exited before agent relay became available" >&2; exit 1; fi\n' >"$DATA/bin/asb"; chmod +x "$DATA/bin/asb"
STEP_BEAT=1 RM_LIMIT=1 create thecreate; echo "rc=$?"`
	// exit 137: the rm was killed at its bound (SIGKILL), not ended.
	out, retried := runLib(t, msb, script)
	if !strings.Contains(out, "rc=0") || !strings.Contains(retried, "thecreate:before_agent_relay") ||
		!regexp.MustCompile(`(?m)^@@asb live thecreate [0-9.]+ msb rm --force vm1: exit 137$`).MatchString(out) {
		t.Errorf("a create whose cleanup's msb rm hangs: want the rm ended at its bound, said live, and the retry made\n%s\nretried: %q", out, retried)
	}
}

// After an exec msb ended by itself, a VM that stopped with it is started
// again by asb (which hands msb the secrets) before the one retry; a VM
// still running is left alone.
func TestLibFlakyStartsAStoppedVMAgain(t *testing.T) {
	// msb: status from $DATA/status; exec fails the first time, as msb
	// does when the VM's kernel reset under it. asb: records its call.
	msb := `case "$1" in
status) [ -s "$DATA/status" ] || { echo "error: sandbox not found: $2" >&2; exit 1; }; printf '{"status": "%s"}\n' "$(cat "$DATA/status")" ;;
exec) if [ -f "$DATA/once" ]; then echo ran; else : >"$DATA/once"; echo "error: runtime error: exec session ended without exit event" >&2; exit 1; fi ;;
esac
`
	script := `printf '#!/bin/sh\necho "asb $*" >>"$DATA/asb-calls"\necho Running >"$DATA/status"\n' >"$DATA/bin/asb"; chmod +x "$DATA/bin/asb"
VM=vm1; echo %s >"$DATA/status"
flaky msb exec vm1 -- true; echo "rc=$?"; cat "$DATA/asb-calls" 2>/dev/null; echo end`
	out, retried := runLib(t, msb, strings.Replace(script, "%s", "Stopped", 1))
	if !strings.Contains(out, "rc=0") || !strings.Contains(out, "asb task vm:start") ||
		!strings.Contains(retried, "thestep:the_VM_stopped_by_itself") || !strings.Contains(retried, "thestep:exec_session_ended") {
		t.Errorf("a VM stopped with the failed exec: want asb task vm:start, then the retry\n%s\nretried: %q", out, retried)
	}
	out, retried = runLib(t, msb, strings.Replace(script, "%s", "Running", 1))
	if !strings.Contains(out, "rc=0") || strings.Contains(out, "asb task") || strings.Contains(retried, "stopped_by_itself") {
		t.Errorf("a VM still running: want the retry alone\n%s\nretried: %q", out, retried)
	}
	// No such VM: the session removed it (home:reset before the reap
	// steps); a retry of another VM's step must not make it again.
	out, retried = runLib(t, msb, strings.Replace(script, "echo %s >", ": >", 1))
	if !strings.Contains(out, "rc=0") || strings.Contains(out, "asb task") || strings.Contains(retried, "stopped_by_itself") {
		t.Errorf("no such VM: want the retry alone, no VM made\n%s\nretried: %q", out, retried)
	}
}

// An msb exec that never answered while msb calls its VM Running (CI run
// 26: one emulated CPU spun for 25 minutes under the first exec into the
// real image) is retried once after asb stops and starts the VM, as a user
// would end a VM that does not answer; the step's VM is the one msb has
// when the session names none. When that stop does not return either
// (ci60: msb left the VM "draining" after a restart), the VM is killed
// (msb stop --force) before vm:start: else the retry meets the same dead
// VM.
func TestLibFlakyRestartsAVMThatDidNotAnswer(t *testing.T) {
	msb := `case "$1" in
ls) echo vm1 ;;
status) printf '{"status": "Running"}\n' ;;
stop) echo "msb $*" >>"$DATA/asb-calls" ;;
exec) if [ -f "$DATA/once" ]; then echo ran; else : >"$DATA/once"; while :; do sleep 1; done; fi ;;
esac
`
	// asb: records its call; its vm:stop exits with STOP.
	script := `printf '#!/bin/sh\necho "asb $*" >>"$DATA/asb-calls"\n[ "$2" = vm:stop ] && exit STOP\nexit 0\n' >"$DATA/bin/asb"; chmod +x "$DATA/bin/asb"
flaky bounded 2 msb exec vm1 -- true; echo "rc=$?"; cat "$DATA/asb-calls" 2>/dev/null; echo end`
	out, retried := runLib(t, msb, strings.Replace(script, "STOP", "0", 1))
	if !strings.Contains(out, "rc=0") || !strings.Contains(out, "asb task vm:stop\nasb task vm:start\n") ||
		!strings.Contains(retried, "thestep:the_VM_did_not_answer") || !strings.Contains(retried, "thestep:msb_did_not_return") {
		t.Errorf("an exec that never answered, the VM Running: want vm:stop, vm:start, then the retry\n%s\nretried: %q", out, retried)
	}
	out, retried = runLib(t, msb, strings.Replace(script, "STOP", "124", 1))
	if !strings.Contains(out, "rc=0") || !strings.Contains(out, "asb task vm:stop\nmsb stop --force --quiet vm1\nasb task vm:start\n") ||
		!strings.Contains(retried, "thestep:the_VM_did_not_stop") {
		t.Errorf("a VM that did not stop: want vm:stop, msb stop --force, vm:start, then the retry\n%s\nretried: %q", out, retried)
	}
}

// TestLibFlakyNamesAVMReset: a command that fails with no word of why (an
// msb exec with a terminal: exit 255) is retried once when msb's system log
// of the VM says, since the step began, that its kernel reset
// (KVM_EXIT_SHUTDOWN: CI run 20, the agent's run); a reset logged before
// the step is not its failure, which stands.
func TestLibFlakyNamesAVMReset(t *testing.T) {
	msb := `case "$1" in
ls) echo vm1 ;;
logs) [ "$2" = vm1 ] && printf '%s\tINFO msb_krun_vmm::linux::vstate: Received KVM_EXIT_SHUTDOWN signal\n' "$(cat "$DATA/reset-at")" ;;
esac
`
	script := `echo %s >"$DATA/reset-at"
flaky sh -c '[ -f "$DATA/once" ] && exit 0; : >"$DATA/once"; exit 255'; echo "rc=$?"`
	out, retried := runLib(t, msb, strings.Replace(script, "%s", "2999-01-01T00:00:00.000Z", 1))
	if !strings.Contains(out, "rc=0") || !strings.Contains(retried, "thestep:the_VM_kernel_reset_(msb_logged_KVM_EXIT_SHUTDOWN)") {
		t.Errorf("a reset since the step began: want it named and the step retried once\n%s\nretried: %q", out, retried)
	}
	out, retried = runLib(t, msb, strings.Replace(script, "%s", "2000-01-01T00:00:00.000Z", 1))
	if !strings.Contains(out, "rc=255") || retried != "" {
		t.Errorf("a reset before the step: want the failure to stand\n%s\nretried: %q", out, retried)
	}
	// An exec that msb lost, twice, each time as the VM's kernel reset
	// (ci84: the retry's "exec session ended without exit event" stood as
	// the same kind twice): the reset, retried twice.
	lost := `echo %s >"$DATA/reset-at"
flaky sh -c 'n=$(cat "$DATA/n" 2>/dev/null || echo 0); n=$((n+1)); echo $n >"$DATA/n"; [ $n -gt 2 ] && exit 0; echo "error: runtime error: exec session ended without exit event" >&2; exit 1'; echo "rc=$?"`
	out, retried = runLib(t, msb, strings.Replace(lost, "%s", "2999-01-01T00:00:00.000Z", 1))
	if !strings.Contains(out, "rc=0") || strings.Count(retried, "thestep:the_VM_kernel_reset") != 2 {
		t.Errorf("an exec lost twice as its VM reset: want both named the reset and retried\n%s\nretried: %q", out, retried)
	}
	out, retried = runLib(t, msb, strings.Replace(lost, "%s", "2000-01-01T00:00:00.000Z", 1))
	if !strings.Contains(out, "rc=1") || !strings.Contains(out, "a second time") ||
		strings.Count(retried, "thestep:exec_session_ended_without_exit_event") != 1 || strings.Contains(retried, "kernel_reset") {
		t.Errorf("an exec lost twice, no reset since the step began: want msb's message named, once\n%s\nretried: %q", out, retried)
	}
}

// A bare msb exec into the session's VM, stopped since its kernel reset
// between two steps, has msb start it without the secrets and fails so
// (2026-12-07: two steps after vm_git). That is the reset, retried after
// the VM is started again as a user would (vm_back: asb task vm:start).
// The same refusal stands when the VM started again after the reset, or
// never reset: then what stopped it is not the emulation's.
func TestLibFlakyNamesTheResetBeforeABareExec(t *testing.T) {
	msb := `case "$1" in
ls) echo vm1 ;;
status) echo '{"status": "Stopped"}' ;;
logs) cat "$DATA/log" ;;
esac
`
	refused := "error: invalid config: secret GITHUB_TOKEN: host environment variable GITHUB_TOKEN is not set"
	script := `cat >"$DATA/log" <<'LOG'
%s
LOG
asb() { echo "asb $*" >>"$DATA/asb-ran"; }
flaky sh -c '[ -f "$DATA/asb-ran" ] && exit 0; echo "` + refused + `" >&2; exit 1'; echo "rc=$?"`
	const (
		started = "2026-12-07T19:28:56.000Z\tINFO --- sandbox started ---"
		reset   = "2026-12-07T19:29:42.285Z\tINFO msb_krun_vmm::linux::vstate: Received KVM_EXIT_SHUTDOWN signal"
	)
	for _, c := range []struct {
		name, log string
		retried   bool
	}{
		{"a reset since the VM's last start", started + "\n" + reset, true},
		{"a start after the reset", reset + "\n" + started, false},
		{"no reset", started, false},
	} {
		out, retried := runLib(t, msb, strings.Replace(script, "%s", c.log, 1))
		if c.retried {
			if !strings.Contains(out, "rc=0") || !strings.Contains(out, "asb task vm:start") ||
				retried != "thestep:the_VM_kernel_reset_(msb_logged_KVM_EXIT_SHUTDOWN)\nthestep:the_VM_stopped_by_itself\n" {
				t.Errorf("%s: want the reset named, the VM started with asb, and the exec retried\n%s\nretried: %q", c.name, out, retried)
			}
		} else if !strings.Contains(out, "rc=1") || retried != "" {
			t.Errorf("%s: want msb's refusal to stand\n%s\nretried: %q", c.name, out, retried)
		}
	}
}

// Each kind FLAKES names is msb's own message as it prints it.
func TestLibFlakesNameMsbsMessages(t *testing.T) {
	for _, msg := range []string{
		"error: sandbox process exited before agent relay became available",
		"error: runtime error: exec session ended without exit event",
		"error: startup timed out after 60s before agent readiness",
		"bounded: msb did not return within 300 s: 123 msb exec vm -- true",
		`error: invalid config: could not validate workdir in guest "/workspace": agent client error: reader closed before response for id=67108863`,
		`error: graceful stop of sandbox "vm-s1" (Local(3)) timed out after 60s waiting for shutdown completion and runtime release; the shutdown request may still complete; no kill was requested`,
	} {
		out, retried := flakyOn(t, msg)
		if retried == "" || strings.Count(out, msg[:20]) != 2 {
			t.Errorf("%q: want it named and retried once\n%s\nretried: %q", msg, out, retried)
		}
	}
}

// flakyOn runs flaky on a command that prints msg (its single quotes
// left out) on its standard error and fails, with no msb to ask: flaky's
// output and what it retried.
func flakyOn(t *testing.T, msg string) (string, string) {
	t.Helper()
	return runLib(t, "", "flaky sh -c 'echo \"$0\" >&2; exit 1' '"+strings.ReplaceAll(msg, "'", "")+"'; echo \"rc=$?\"")
}
