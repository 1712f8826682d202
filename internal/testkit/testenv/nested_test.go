package testenv

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The serial console interleaves the scenario's result lines with other
// output (the BIOS's, the kernel's, a line's own \r): each is read whole.
func TestParseSession(t *testing.T) {
	b := func(s string) string { return "x" + base64.StdEncoding.EncodeToString([]byte(s)) }
	log := "SeaBIOS\r\nBooting from ROM..@@asb note svm 2\r\n" +
		"@@asb step doctor 0 0.61 x x\n" +
		"noise\n@@asb step whoami 1 6.5 " + b("dev 1000 /workspace\n") + " " + b("oops\n") + "\r\n" +
		"@@asb note vm a-b c\n@@asb end\n"
	s := parseSession(ShapeNested, log)
	if !s.Ended || s.Notes["svm"] != "2" || s.Notes["vm"] != "a-b c" {
		t.Fatalf("notes %v, ended %v", s.Notes, s.Ended)
	}
	if st := s.Steps["doctor"]; st.Code != 0 || st.Out != "" || st.Err != "" || st.Secs != 0.61 {
		t.Fatalf("doctor: %+v", st)
	}
	if st := s.Steps["whoami"]; st.Code != 1 || st.Out != "dev 1000 /workspace\n" || st.Err != "oops\n" {
		t.Fatalf("whoami: %+v", st)
	}
	if len(s.Order) != 2 || s.Order[1] != "whoami" {
		t.Fatalf("order %v", s.Order)
	}
	if parseSession(ShapeNested, "@@asb step cut 0 1.0 x\n").Steps["cut"] != (Step{}) {
		t.Fatal("a line cut short was read as a step")
	}
	if s.Unfinished != "" {
		t.Errorf("every step ended, yet Unfinished = %q", s.Unfinished)
	}
}

// A session that ended in a step (killed from outside) says what that step
// last ran and decided: its last heartbeat and its live lines.
func TestParseSessionUnfinished(t *testing.T) {
	log := "@@asb step trust 0 1.1 x x\n@@asb live trust 3.0 flaky: exit 1: before this step ended\n@@asb step t2 0 1 x x\n" +
		"@@asb beat create 60s [sh asb-task msb] msb load --quiet\n" +
		"@@asb live create 930.5 bounded: msb did not return within 900 s: 412 msb load --quiet\n" +
		"@@asb live create 931.0 flaky: retried: msb did not return within 900 s\n" +
		"@@asb beat create 960s [sh msb] msb rm --force vm\r\n"
	s := parseSession(ShapeNested, log)
	want := "step create 960s [sh msb] msb rm --force vm\n  live: create 930.5 bounded: msb did not return within 900 s: 412 msb load --quiet\n" +
		"  live: create 931.0 flaky: retried: msb did not return within 900 s"
	if s.Unfinished != want {
		t.Errorf("Unfinished =\n%s\nwant\n%s", s.Unfinished, want)
	}
	if len(s.Order) != 2 || s.Notes["create"] != "" {
		t.Errorf("a heartbeat or a live line was read as a step or a note: %v %v", s.Order, s.Notes)
	}
}

// A failed step's diagnosis comes back with it, and its message quotes
// each section's last lines.
func TestParseSessionDiag(t *testing.T) {
	b := func(s string) string { return "x" + base64.StdEncoding.EncodeToString([]byte(s)) }
	var long strings.Builder
	for i := 0; i < 60; i++ {
		fmt.Fprintf(&long, "agent line %d\n", i)
	}
	diag := "== msb ls\nNAME STATUS\nvm Running\n== the agent's own log: x/opencode/log/a.log\n" + long.String()
	log := "@@asb step agent_run 255 14.7 " + b("") + " " + b("asb: task agent failed: exit status 255\n") + "\n" +
		"@@asb beat agent_run\n@@asb diag agent_run " + b(diag) + "\n"
	s := parseSession(ShapeNested, log)
	st := s.Steps["agent_run"]
	if st.Code != 255 || st.Diag != diag {
		t.Fatalf("agent_run: %+v", st)
	}
	why := st.Why()
	for _, want := range []string{"exit 255 after 14.7 s", "task agent failed", "== msb ls\nNAME STATUS\nvm Running",
		"== the agent's own log: x/opencode/log/a.log", "agent line 59"} {
		if !strings.Contains(why, want) {
			t.Errorf("Why() lacks %q:\n%s", want, why)
		}
	}
	if strings.Contains(why, "agent line 34\n") {
		t.Errorf("Why() quotes more than a section's last lines:\n%s", why)
	}
	if len(s.Order) != 1 || s.Unfinished != "" {
		t.Errorf("a heartbeat or a diagnosis was read as a step, or an unfinished one: %v %q", s.Order, s.Unfinished)
	}
}

// runWatched runs script as a guest would run, under waitGuest's limits,
// with no console input (a direct run's).
func runWatched(t *testing.T, script string, lim guestLimits) error {
	t.Helper()
	return runGuestScript(t, context.Background(), script, lim, io.Discard, false)
}

// runGuestScript runs script as a guest would run, under waitGuest's
// limits; what it prints goes to out, and with ask its standard input is
// the console's input (askKernel's).
func runGuestScript(t *testing.T, ctx context.Context, script string, lim guestLimits, out io.Writer, ask bool) error {
	t.Helper()
	cmd := exec.Command("sh", "-c", script)
	watch := newGuestWatch(out)
	cmd.Stdout, cmd.Stderr = watch, watch
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var in io.Writer
	if ask {
		p, err := cmd.StdinPipe()
		if err != nil {
			t.Fatal(err)
		}
		in = p
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return waitGuest(ctx, cmd, in, watch, time.Now(), lim)
}

// starved is the margin of a check that a healthy guest is left alone (a
// guest that prints, a kernel that answers): these tests run beside the
// guests' sessions at SCHED_IDLE (scripts/test.sh), and may wait seconds
// for a core (a run of 2026-12-07: a guest beating every 0.25 s went
// unread for over 0.8 s). The checks that a limit is kept keep their own.
const starved = 5 * time.Second

// A guest that keeps printing runs to its end however long it takes; one
// whose scenario prints nothing for the stall limit is killed, and the
// error says so, though its kernel still prints (CI, 2026-12-05: a
// watchdog's report every half minute kept a dead guest for 55 minutes).
func TestWaitGuestStall(t *testing.T) {
	lim := guestLimits{stall: 800 * time.Millisecond, lockup: time.Hour}
	if err := runWatched(t, "for i in 1 2 3 4 5 6 7 8; do echo beat; sleep 0.25; done", guestLimits{stall: starved, lockup: time.Hour}); err != nil {
		t.Errorf("a guest printing every 0.25 s for 2 s, stall limit %s: %v", starved, err)
	}
	err := runWatched(t, "echo started; sleep 30", lim)
	if err == nil || !strings.Contains(err.Error(), "printed nothing") {
		t.Errorf("a guest silent for 30 s, stall limit 0.8 s: %v, want it killed as hung", err)
	}
	kernelOnly := `echo started; i=0; while [ $i -lt 60 ]; do i=$((i+1)); printf '[  %d.271852] watchdog: BUG: soft lockup - CPU#1 stuck for 30s! [fc_vcpu 0:3529]\r\n' $i; sleep 0.1; done`
	err = runWatched(t, kernelOnly, lim)
	if err == nil || !strings.Contains(err.Error(), "printed nothing") {
		t.Errorf("a guest whose kernel alone prints, stall limit 0.8 s: %v, want it killed as hung", err)
	}
}

// A silent guest's kernel is asked for its state by magic SysRq on the
// console's input (QEMU's Ctrl-A b, then the key) before it is killed: one
// that answers is a hang like another (its stacks are on the console), one
// that does not is a stopped machine, named the emulation's.
func TestWaitGuestAsksTheKernel(t *testing.T) {
	lim := guestLimits{stall: 500 * time.Millisecond, lockup: time.Hour, answer: starved}
	got := filepath.Join(t.TempDir(), "keys")
	kernel := `echo started; while c=$(dd bs=1 count=1 2>/dev/null) && [ -n "$c" ]; do printf '%s' "$c" >>` + got + `
	case $c in
	9) printf '[  1.0] sysrq: Changing Loglevel\r\n[  1.0] sysrq: Loglevel set to 9\r\n' ;;
	l) printf '[  1.1] sysrq: Show backtrace of all active CPUs\r\n[  1.1] NMI backtrace for cpu 1\r\n' ;;
	w) printf '[  1.2] sysrq: Show Blocked State\r\n' ;;
	esac; done`
	var console strings.Builder
	err := runGuestScript(t, context.Background(), kernel, lim, &console, true)
	if err == nil || errors.Is(err, errStopped) || !strings.Contains(err.Error(), "printed nothing") || !strings.Contains(err.Error(), "answered a magic SysRq") {
		t.Errorf("a silent guest whose kernel answers: %v, want a hang whose kernel answered", err)
	}
	if keys, _ := os.ReadFile(got); string(keys) != "\x01b9\x01bl\x01bw" {
		t.Errorf("the console's input was %q, want a break before each of 9, l and w", keys)
	}
	if !strings.Contains(console.String(), "NMI backtrace for cpu 1") {
		t.Errorf("the kernel's answer is not on the console:\n%s", console.String())
	}
	started := "@@asb note user 2000\n@@asb step create 0 20.1 x x\n"
	s := parseSession(ShapeNested, started)
	if why := emulationFault(ShapeNested, s, err); why != "" {
		t.Errorf("a hang whose kernel answered was named the emulation's: %q", why)
	}
	lim.answer = 2 * time.Second
	err = runGuestScript(t, context.Background(), "echo started; exec sleep 30", lim, io.Discard, true)
	if !errors.Is(err, errStopped) || !strings.Contains(err.Error(), "did not answer a magic SysRq in 2s") {
		t.Fatalf("a silent guest whose kernel does not answer: %v, want errStopped", err)
	}
	if why := emulationFault(ShapeNested, s, err); !strings.Contains(why, "stopped") {
		t.Errorf("emulationFault = %q, want the stopped machine named (and so the session run once more)", why)
	}
}

// A kernel that answers the SysRq but one of whose CPUs never answers the
// NMI that asks for its stack is a machine a CPU of which had stopped
// (ci34: CPU 0 of the boot session's guest): the emulation's, as a kernel
// that does not answer at all. Every CPU answering is a hang like another.
func TestWaitGuestNamesASilentCPU(t *testing.T) {
	lim := guestLimits{stall: 500 * time.Millisecond, lockup: time.Hour, answer: starved}
	kernel := func(l string) string {
		return `echo started; while c=$(dd bs=1 count=1 2>/dev/null) && [ -n "$c" ]; do
	case $c in
	9) printf '[  1.0] sysrq: Changing Loglevel\r\n[  1.0] sysrq: Loglevel set to 9\r\n' ;;
	l) printf '[  1.1] sysrq: Show backtrace of all active CPUs\r\n[  1.1] NMI backtrace for cpu 1\r\n[  1.1] Sending NMI from CPU 1 to CPUs 0:\r\n` + l + `' ;;
	w) printf '[  1.2] sysrq: Show Blocked State\r\n' ;;
	esac; done`
	}
	err := runGuestScript(t, context.Background(), kernel(""), lim, io.Discard, true)
	if !errors.Is(err, errStopped) || !strings.Contains(err.Error(), "its CPU [0] never answered the NMI") {
		t.Errorf("CPU 0 silent: %v, want errStopped naming CPU 0", err)
	}
	err = runGuestScript(t, context.Background(), kernel(`[  1.1] NMI backtrace for cpu 0\r\n`), lim, io.Discard, true)
	if err == nil || errors.Is(err, errStopped) || !strings.Contains(err.Error(), "answered a magic SysRq") {
		t.Errorf("every CPU answered: %v, want a hang whose kernel answered, not errStopped", err)
	}
}

// A guest silent for the probe limit is asked at once whether it still
// runs: a CPU of it silent to the NMI is a stopped machine, ended then,
// long before the stall limit; a kernel that answers in full is left to
// run on to the stall limit, where it is asked again; a guest that keeps
// printing is never asked.
func TestWaitGuestProbesBeforeTheStall(t *testing.T) {
	// The kernel answers (the stand-in's printf) within starved; the stall
	// limit leaves the probe and that answer room before it.
	lim := guestLimits{stall: 12 * time.Second, lockup: time.Hour, answer: starved, probe: 300 * time.Millisecond}
	keys := filepath.Join(t.TempDir(), "keys")
	kernel := func(l string) string {
		return `echo started; while c=$(dd bs=1 count=1 2>/dev/null) && [ -n "$c" ]; do printf '%s' "$c" >>` + keys + `
	case $c in
	9) printf '[  1.0] sysrq: Changing Loglevel\r\n' ;;
	l) printf '[  1.1] sysrq: Show backtrace of all active CPUs\r\n[  1.1] NMI backtrace for cpu 1\r\n[  1.1] Sending NMI from CPU 1 to CPUs 0:\r\n` + l + `' ;;
	w) printf '[  1.2] sysrq: Show Blocked State\r\n' ;;
	esac; done`
	}
	start := time.Now()
	err := runGuestScript(t, context.Background(), kernel(""), lim, io.Discard, true)
	if !errors.Is(err, errStopped) || !strings.Contains(err.Error(), "its CPU [0] never answered the NMI") || time.Since(start) >= lim.stall {
		t.Errorf("CPU 0 silent, probe at 0.3 s, stall at 12 s: %v after %s, want errStopped at the probe", err, time.Since(start).Round(time.Millisecond))
	}
	_ = os.Remove(keys)
	start = time.Now()
	err = runGuestScript(t, context.Background(), kernel(`[  1.1] NMI backtrace for cpu 0\r\n`), lim, io.Discard, true)
	if err == nil || errors.Is(err, errStopped) || !strings.Contains(err.Error(), "printed nothing") || time.Since(start) < lim.stall {
		t.Errorf("every CPU answered the probe: %v after %s, want a hang at the stall limit, not errStopped", err, time.Since(start).Round(time.Millisecond))
	}
	if got, _ := os.ReadFile(keys); string(got) != strings.Repeat("\x01b9\x01bl\x01bw", 2) {
		t.Errorf("the console's input was %q, want the kernel asked at the probe and again at the stall", got)
	}
	_ = os.Remove(keys)
	beats := "for i in $(seq 40); do echo beat; sleep 0.05; done & " + kernel("") + " & wait %1"
	lim.probe = starved
	if err := runGuestScript(t, context.Background(), beats, lim, io.Discard, true); err != nil {
		t.Errorf("a guest beating every 0.05 s for 2 s: %v", err)
	}
	if got, _ := os.ReadFile(keys); len(got) > 0 {
		t.Errorf("the kernel was asked while the scenario printed: %q", got)
	}
}

func TestCPUList(t *testing.T) {
	for in, want := range map[string][]int{"0": {0}, "0-3": {0, 1, 2, 3}, "0,2-3": {0, 2, 3}, "x,1": {1}, "3-1": nil} {
		if got := cpuList(in); !slices.Equal(got, want) {
			t.Errorf("cpuList(%q) = %v, want %v", in, got, want)
		}
	}
}

// A guest still busy at its deadline (the test binary's) is asked by magic
// SysRq too before it is killed, and the error says both; one whose
// context was cancelled (an interrupted test) is killed at once, unasked.
func TestWaitGuestAsksTheKernelAtTheDeadline(t *testing.T) {
	lim := guestLimits{stall: time.Hour, lockup: time.Hour, answer: starved}
	got := filepath.Join(t.TempDir(), "keys")
	kernel := `(while :; do echo '@@asb beat create 60s [sh asb msb] msb rm --force vm'; sleep 0.2; done) &
	while c=$(dd bs=1 count=1 2>/dev/null) && [ -n "$c" ]; do printf '%s' "$c" >>` + got + `
	case $c in w) printf '[  1.2] sysrq: Show Blocked State\r\n[  1.2] task:msb state:D\r\n' ;; esac; done`
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	var console strings.Builder
	err := runGuestScript(t, ctx, kernel, lim, &console, true)
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "answered a magic SysRq") {
		t.Errorf("a busy guest at its deadline: %v, want the deadline and the kernel's answer", err)
	}
	if !strings.Contains(console.String(), "task:msb state:D") {
		t.Errorf("the kernel's answer is not on the console:\n%s", console.String())
	}
	_ = os.Remove(got)
	ctx, cancel = context.WithCancel(context.Background())
	time.AfterFunc(500*time.Millisecond, cancel)
	err = runGuestScript(t, ctx, kernel, lim, io.Discard, true)
	if !errors.Is(err, context.Canceled) || strings.Contains(err.Error(), "SysRq") {
		t.Errorf("a cancelled guest: %v, want it killed as cancelled, unasked", err)
	}
	if keys, _ := os.ReadFile(got); len(keys) != 0 {
		t.Errorf("a cancelled guest was asked %q", keys)
	}
}

// A guest whose kernel reports a CPU stuck for the lockup limit is killed
// at once, whatever else it prints, and named the emulation's; a shorter
// lockup is not.
func TestWaitGuestLockup(t *testing.T) {
	lim := guestLimits{stall: time.Hour, lockup: 2 * time.Minute}
	report := func(secs int) string {
		return fmt.Sprintf(`echo '@@asb note user 2000'; echo '@@asb step create 0 20.1 x x'; i=0; while [ $i -lt 20 ]; do echo "@@asb beat reap"; printf '[  205.272188] watchdog: BUG: soft lockup - CPU#1 stuck for %ds! [fc_vcpu 0:3529]\r\n'; sleep 0.05; i=$((i+1)); done`, secs)
	}
	if err := runWatched(t, report(111), lim); err != nil {
		t.Errorf("a lockup of 111 s, limit 120 s: %v, want the guest to run to its end", err)
	}
	start := time.Now()
	err := runWatched(t, report(137)+"; sleep 30", lim)
	if !errors.Is(err, errLockup) || !strings.Contains(err.Error(), "CPU#1 stuck for 137s! [fc_vcpu 0:3529]") {
		t.Fatalf("a lockup of 137 s, limit 120 s: %v, want it killed as a soft lockup, quoting the kernel", err)
	}
	if d := time.Since(start); d > 20*time.Second {
		t.Errorf("killed after %s: the lockup should end the session at once", d)
	}
	s := parseSession(ShapeNested, "@@asb note user 2000\n@@asb step create 0 20.1 x x\n")
	if why := emulationFault(ShapeNested, s, err); !strings.Contains(why, "CPU stuck") {
		t.Errorf("emulationFault = %q, want the lockup named (and so the session run once more)", why)
	}
}

// The watch reads whole lines, however the console's writes cut them.
func TestGuestWatchReadsLines(t *testing.T) {
	w := newGuestWatch(io.Discard)
	w.last.Store(0)
	for _, p := range []string{"[  205.2", "72188] watchdog: BUG: soft lockup - CPU#1 stu", "ck for 52s! [fc_vcpu 0:3529]\r\n", "[  233.1] x\n"} {
		_, _ = w.Write([]byte(p))
	}
	if w.quiet() < time.Hour {
		t.Errorf("the kernel's lines were taken for the scenario's progress")
	}
	if d, what := w.lockup(); d != 52*time.Second || what != "soft lockup - CPU#1 stuck for 52s! [fc_vcpu 0:3529]" {
		t.Errorf("lockup = %s %q", d, what)
	}
	for _, p := range []string{"[  240.0] noise @@asb beat x", "\n"} {
		_, _ = w.Write([]byte(p))
	}
	if w.quiet() > time.Minute {
		t.Errorf("a scenario's line cut into a kernel line was not taken for progress")
	}
	w.last.Store(0)
	_, _ = w.Write([]byte("plain output\n"))
	if w.quiet() > time.Minute {
		t.Errorf("the scenario's own line was not taken for progress")
	}
}

// TestEmulationFault: only a guest that failed by itself is named (and so
// run once more); a scenario that ended, failed, hung or ran out of time
// is not.
func TestEmulationFault(t *testing.T) {
	started := "@@asb note user 2000\n@@asb step create 0 20.1 x x\n"
	for _, c := range []struct {
		name, log string
		err       error
		want      string
	}{
		{"ended", started + "@@asb end\nnested-init: run.sh exit 0\n", nil, ""},
		{"panic", started + "Kernel panic - not syncing: stack guard page\n", nil, "kernel panicked"},
		{"reset mid-scenario", started, nil, "reset by itself"},
		{"the scenario exited early", started + "nested-init: run.sh exit 1\n", nil, ""},
		{"killed: a stall or the deadline", started, errors.New("killed after 6m0s"), ""},
		{"no scenario at all", "SeaBIOS\n", nil, ""},
		{"QEMU's own assertion", "SeaBIOS\nBooting from ROM..qemu-system-x86_64: system/physmem.c:2671: iotlb_to_section: Assertion `section_index < d->map.sections_nb' failed.\n",
			errors.New("signal: aborted"), "QEMU itself failed (qemu-system-x86_64: system/physmem.c:2671: iotlb_to_section: Assertion"},
	} {
		s := parseSession(ShapeNested, c.log)
		got := emulationFault(ShapeNested, s, c.err)
		if (c.want == "") != (got == "") || !strings.Contains(got, c.want) {
			t.Errorf("%s: emulationFault = %q, want %q", c.name, got, c.want)
		}
		if got := emulationFault(ShapeDirect, s, c.err); got != "" {
			t.Errorf("%s: a direct run is never the emulation's: %q", c.name, got)
		}
	}
}

// A session's message quotes the end of QEMU's own log of its resets (the
// CPU's state where a guest reset by itself), and nothing where there is
// no such log or it is empty.
func TestQemuLogEnd(t *testing.T) {
	p := filepath.Join(t.TempDir(), "qemu-x.log")
	var b strings.Builder
	for i := 0; i < 60; i++ {
		fmt.Fprintf(&b, "CPU Reset (CPU 0) line %d\n", i)
	}
	if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	got := (&Guest{qemuLog: p}).qemuLogEnd()
	if !strings.Contains(got, p) || !strings.Contains(got, "line 59") || strings.Contains(got, "line 19\n") {
		t.Errorf("the end of QEMU's log: %q", got)
	}
	if err := os.WriteFile(p, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if got := (&Guest{qemuLog: p}).qemuLogEnd() + (&Guest{}).qemuLogEnd(); got != "" {
		t.Errorf("an empty log, and none: want nothing, got %q", got)
	}
}
