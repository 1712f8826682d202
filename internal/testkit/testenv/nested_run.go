package testenv

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// GuestStall is how long a guest session's scenario may print nothing (the
// kernel's own lines do not count: guestWatch) before it is taken for hung
// and killed. GuestLib's step prints a heartbeat every minute while its
// command runs (and ends a step that outlives its limit: guestlib.sh), so
// a session that is only slow — a loaded host, emulation — never reaches
// it; a guest whose kernel or QEMU stopped does, within minutes rather
// than at a wall-clock limit that a loaded host would also reach.
const GuestStall = 6 * time.Minute

// guestMargin is kept of the test binary's deadline (go test -timeout) for
// the report: the session is killed that long before it, so the test says
// what ran rather than go test's panic.
const guestMargin = 2 * time.Minute

// Run writes script as /data/run.sh (after GuestLib) and runs it in the
// guest, killed when it printed nothing for GuestStall, when its kernel
// reported a CPU stuck for GuestLockup, when the test binary's deadline
// nears, or when ctx ends; nothing it started is left.
// The session's console is kept in a file of its own (Session.Console) and
// goes to the test log when the test fails.
func (g *Guest) Run(t testing.TB, ctx context.Context, script string) *Session {
	t.Helper()
	g.WriteFile(t, "run.sh", []byte("GUEST_SHAPE="+g.Shape+"\n"+GuestLib+script+"\necho '@@asb end'\n"), 0o755)
	parent := ctx
	if d, ok := testDeadline(t); ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, d.Add(-guestMargin))
		defer cancel()
	}
	var cmd *exec.Cmd
	if g.Shape == ShapeDirect {
		cmd = exec.Command("sh", filepath.Join(g.Data, "run.sh"))
		cmd.Dir, cmd.Env = g.Data, WithEnv(os.Environ(), "DATA="+g.Data)
	} else {
		cmd = g.qemuCmd(t)
	}
	// The console goes to a file of this session's too, to follow a long
	// session (tail -f) and to read after the run.
	var out bytes.Buffer
	w := io.Writer(&out)
	console := ""
	if f, err := artifact("guest-" + g.Name + ".log"); err == nil {
		defer f.Close()
		w, console = io.MultiWriter(&out, f), f.Name()
		t.Logf("guest console (%s): %s", g.Name, console)
	} else {
		t.Logf("guest console (%s): not kept: %v", g.Name, err)
	}
	if ctx.Err() != nil { // an earlier session took the time
		t.Fatalf("the guest session %s was not started: %v (the test binary's deadline, go test -timeout, is less than %s away)",
			g.Name, ctx.Err(), guestMargin)
	}
	watch := newGuestWatch(w) // its clock starts now, with the guest
	cmd.Stdout, cmd.Stderr = watch, watch
	var in io.Writer // the console's input: nothing but a stalled guest's SysRq
	if g.Shape != ShapeDirect {
		p, err := cmd.StdinPipe()
		if err != nil {
			t.Fatalf("the guest's console: %v", err)
		}
		in = p
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatalf("start the guest: %v", err)
	}
	err := waitGuest(ctx, cmd, in, watch, start, guestLimits{GuestStall, GuestLockup, GuestAnswer, GuestProbe})
	t.Cleanup(func() { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) })
	s := parseSession(g.Shape, out.String())
	s.Console = console
	cpu := "?"
	if ps := cmd.ProcessState; ps != nil {
		cpu = (ps.UserTime() + ps.SystemTime()).Round(time.Second).String()
	}
	// CPU time is what the session costs whatever else the host runs.
	t.Logf("real boot: host shape %s; the guest session %s took %s, %s of CPU (%v)", g.Shape, g.Name,
		time.Since(start).Round(100*time.Millisecond), cpu, err)
	for _, n := range s.Order {
		t.Logf("  step %-18s exit %3d  %6.1fs", n, s.Steps[n].Code, s.Steps[n].Secs)
	}
	if s.Unfinished != "" {
		t.Logf("  unfinished: %s", s.Unfinished)
	}
	if r := strings.TrimSpace(s.Notes["retried"]); r != "" { // step:kind, one for each retry (lib.sh's flaky)
		t.Logf("retried under emulation (msb's own failures, each named by its message): %s", r)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("guest session %s console (%s, whole in %s; result lines left out):\n%s%s", g.Name, g.Shape, console, lastLines(consoleOnly(s.Log), 150), g.qemuLogEnd())
		}
	})
	// Now and then the nested guest itself fails under emulated SVM: a
	// fault of the emulation, not of the scenario. Once more, from a fresh
	// disk (qemuCmd makes it again from Data), up to SessionRetries times.
	if why := emulationFault(g.Shape, s, err); why != "" && g.retries < SessionRetries && parent.Err() == nil {
		if left, ok := timeLeft(t); ok && left < time.Since(start) {
			t.Logf("%s (docs/testing.md), but the session does not run again: it took %s, and %s is left before the test binary's deadline",
				why, time.Since(start).Round(time.Second), left.Round(time.Second))
			return s
		}
		g.retries++
		t.Logf("%s (docs/testing.md): the session runs once more (%d of %d)%s", why, g.retries, SessionRetries, g.qemuLogEnd())
		return g.Run(t, parent, script)
	}
	return s
}

// timeLeft is how long a guest session may still take before the test
// binary's deadline (less guestMargin), where t has one. A session the
// emulation failed runs again only if the time left covers what its
// failed run took: a retry that the deadline ends says nothing, and takes
// the time of the sessions after it (CI of 375b4da: the real image's
// retry ran into the deadline, and the network session never started).
func timeLeft(t testing.TB) (time.Duration, bool) {
	d, ok := testDeadline(t)
	return time.Until(d) - guestMargin, ok
}

// SessionRetries is how many times a session the emulation failed
// (emulationFault) runs again, each from a fresh disk. The scenario runs
// as an ordinary user, who can neither panic, reset nor stop the guest's
// kernel, so unlike a step's failure (lib.sh's flaky) the same kind again
// is no sign of asb's. In ci28 of 2026-12-06 the nested guest's kernel
// panicked in the network session and again in its retry, 44 s in; in
// ci53–ci58 the real image's session reset by itself (a triple fault of
// the nested guest, as it began to run the image's VM) in 4 of its 10
// runs, in ci56 twice in a row and then stopped: at that rate three
// faults in a row fail one CI in 16, four one in 40. Three: a retry costs
// only when the emulation failed, and timeLeft keeps it within the test
// binary's deadline.
const SessionRetries = 3

// emulationFault names how the nested guest failed by itself, from what
// its console shows, or says "" when the session ended otherwise (its end,
// a stall, the deadline, a failure of the scenario's own):
//   - its kernel reported a CPU stuck for GuestLockup, and waitGuest
//     killed it (errLockup);
//   - its scenario printed nothing for GuestStall and its kernel did not
//     answer a magic SysRq either, or one of its CPUs did not answer the
//     NMI of SysRq l (errStopped): the machine, or a CPU of it, had
//     stopped;
//   - its kernel panicked ("Kernel panic" on the console: a stack guard
//     page hit in a vCPU thread, seen once in a CI run);
//   - QEMU itself failed one of its own assertions and aborted (ci39 of
//     2026-12-06: `iotlb_to_section: Assertion … failed` two seconds
//     into the boot, before the guest's kernel ran);
//   - the machine reset in the middle of the scenario: QEMU (-no-reboot)
//     exited by itself with neither the scenario's end nor the init's last
//     line ("nested-init: run.sh exit N", which it prints whatever the
//     scenario did) on the console. The scenario runs as an ordinary user,
//     who cannot reset the machine: a triple fault or a silent death of
//     the kernel under emulation (seen once, 2026-12-05, in an attach).
func emulationFault(shape string, s *Session, err error) string {
	switch {
	case shape != ShapeNested || s.Ended:
		return ""
	case errors.Is(err, errLockup):
		return "the nested guest's kernel found a CPU stuck (" + err.Error() + ")"
	case errors.Is(err, errStopped):
		return "the nested guest stopped (" + err.Error() + ")"
	case strings.Contains(s.Log, "Kernel panic"):
		return "the nested guest's kernel panicked"
	case qemuAssertion.MatchString(s.Log):
		return "QEMU itself failed (" + strings.TrimSpace(qemuAssertion.FindString(s.Log)) + ")"
	case err == nil && strings.Contains(s.Log, "@@asb ") && !strings.Contains(s.Log, "nested-init: run.sh exit"):
		return "the nested guest reset by itself in the middle of the scenario (QEMU ended with no end of the scenario and no last line of the guest's init on the console)"
	}
	return ""
}

// qemuAssertion is QEMU's line when one of its own assertions fails (it
// aborts then): "qemu-system-x86_64: system/physmem.c:2671:
// iotlb_to_section: Assertion `…' failed."
var qemuAssertion = regexp.MustCompile(`qemu-system-x86_64: [^\n]*Assertion [^\n]* failed\.?`)

// guestLimits are waitGuest's: how long the scenario may print nothing,
// how long the kernel may report a CPU stuck, how long it has to answer a
// magic SysRq, and after how long a silence the kernel is first asked
// whether the machine still runs (0: only at the stall).
type guestLimits struct{ stall, lockup, answer, probe time.Duration }

// errLockup is waitGuest's verdict on a guest whose kernel reported a CPU
// stuck for the lockup limit.
var errLockup = errors.New("soft lockup")

// waitGuest waits for the guest to end, or kills it (its whole process
// group) when its scenario printed nothing for the stall limit (asking its
// kernel for its state first where in, the console's input, is given:
// stalled), its kernel reported a CPU stuck for the lockup limit, or ctx
// ends, and says which.
func waitGuest(ctx context.Context, cmd *exec.Cmd, in io.Writer, watch *guestWatch, start time.Time, lim guestLimits) error {
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	kill := func() { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	every := min(time.Second, lim.stall/4, lim.lockup/4)
	if lim.probe > 0 {
		every = min(every, lim.probe/4)
	}
	tick := time.NewTicker(every)
	defer tick.Stop()
	probed := false
	// end kills a silent guest: why it was taken for hung, and whether its
	// machine had stopped (errStopped).
	end := func(why string, stopped bool) error {
		kill()
		<-done
		err := fmt.Errorf("killed after %s: %s", time.Since(start).Round(time.Second), why)
		if stopped {
			return fmt.Errorf("%w: %w", errStopped, err)
		}
		return err
	}
	for {
		select {
		case err := <-done:
			kill() // what the scenario started and left (direct runs)
			return err
		case <-ctx.Done():
			asked := ""
			if errors.Is(ctx.Err(), context.DeadlineExceeded) && in != nil && askKernel(in, watch, lim.answer) {
				asked = "; its kernel answered a magic SysRq: each CPU's stack and the blocked tasks are on the console"
			}
			kill()
			<-done
			return fmt.Errorf("killed after %s: %w%s", time.Since(start).Round(time.Second), ctx.Err(), asked)
		case <-tick.C:
			if stuck, what := watch.lockup(); stuck >= lim.lockup {
				kill()
				<-done
				return fmt.Errorf("killed after %s: %w: its kernel says %q", time.Since(start).Round(time.Second), errLockup, what)
			}
			if quiet := watch.quiet(); !probed && lim.probe > 0 && quiet > lim.probe && quiet <= lim.stall && in != nil {
				// The machine still runs, or it is ended now (GuestProbe).
				probed = true
				if why, stopped := stalled(in, watch, lim.answer, quiet); stopped {
					return end(why, true)
				}
			}
			if quiet := watch.quiet(); quiet > lim.stall { // read again: a probe takes seconds
				return end(stalled(in, watch, lim.answer, quiet))
			}
		}
	}
}

// stalled says why a guest whose scenario printed nothing for quiet is
// ended. Where in (the console's input) is given, it asks the kernel
// first: its answer, each CPU's stack and the blocked tasks, goes to the
// console, and stopped reports that there was none.
func stalled(in io.Writer, watch *guestWatch, wait, quiet time.Duration) (why string, stopped bool) {
	why = fmt.Sprintf("the guest's scenario printed nothing for %s (hung: no step's heartbeat)", quiet.Round(time.Second))
	switch {
	case in == nil:
		return why, false
	case !askKernel(in, watch, wait):
		return why + fmt.Sprintf(", and its kernel did not answer a magic SysRq in %s", wait), true
	}
	why += "; its kernel answered a magic SysRq: each CPU's stack and the blocked tasks are on the console"
	if cs := watch.silentCPUs(); len(cs) > 0 {
		// No process stops a CPU from taking an NMI: the machine's CPU
		// itself had stopped (ci34 of 2026-12-06: CPU 0 of the boot
		// session's guest, while CPU 1 ran a microVM's vCPU thread).
		return why + fmt.Sprintf(", but its CPU %v never answered the NMI that asks for its stack", cs), true
	}
	return why, false
}

// testDeadline is the test binary's deadline, where t has one.
func testDeadline(t testing.TB) (time.Time, bool) {
	if d, ok := t.(interface{ Deadline() (time.Time, bool) }); ok {
		return d.Deadline()
	}
	return time.Time{}, false
}
