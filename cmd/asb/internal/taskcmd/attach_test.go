package taskcmd_test

import (
	"context"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agents-sandbox/asb/generator"
	"github.com/agents-sandbox/asb/internal/testkit/fakes"
)

// TestWarmVMExec: asb task vm:exec -- CMD ARGS… is warm too, whatever the
// arguments (the record holds marks, never them): one msb exec with them,
// quoted as go-task quotes them, and the exit code of the command; without
// a command, its precondition fails and the engine says so.
func TestWarmVMExec(t *testing.T) {
	s := newSandbox(t, generator.DefaultOptions("opencode", "demo"))
	id := s.identity()
	s.viaEngine(t, "cold", "task", "vm:exec", "--", "ls", "-la")
	got := s.warm(t, "task", "vm:exec", "--", "echo", "it's", "$HOME", "a b")
	if !slices.Equal(got, []string{"msb exec"}) {
		t.Fatalf("warm vm:exec invoked %q", got)
	}
	out, _, _ := s.run("", "task", "vm:exec", "--", "printf", "%s\n", "x;y", `"q"`)
	if want := "fake-exec[" + id.VM + "]: printf %s\n x;y \"q\""; !strings.Contains(out, want) {
		t.Errorf("the arguments did not reach msb exec as given: %q, want %q", out, want)
	}
	stderr, code, ran := s.countingRun("task", "vm:exec")
	if code == 0 || !ran || !strings.Contains(stderr, "say what to run") {
		t.Errorf("vm:exec without a command: exit %d, engine %v\n%s", code, ran, stderr)
	}
}

// signaller is a started asb (testenv.Proc).
type signaller interface {
	Signal(syscall.Signal) error
	Interrupt() error
}

// TestAttachedSignals: the warm path's msb exec runs as asb's child. A
// SIGINT sent to asb alone does nothing (a terminal's Ctrl-C reaches the
// whole group, msb exec included, and that ends the command: exit 130); a
// SIGTERM or SIGHUP asb gets it passes on, and asb exits with msb's code.
func TestAttachedSignals(t *testing.T) {
	p := newProcSandbox(t)
	id := p.identity()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if _, errOut, code := p.start(t, "task", "vm:exec", "--", "true").Wait(ctx); code != 0 {
		t.Fatalf("cold vm:exec: exit %d\n%s", code, errOut)
	}
	for _, c := range []struct {
		name string
		send func(signaller) error
		code int
	}{
		{"SIGTERM to asb", func(r signaller) error {
			if err := r.Signal(syscall.SIGINT); err != nil { // ignored
				return err
			}
			time.Sleep(300 * time.Millisecond)
			return r.Signal(syscall.SIGTERM)
		}, 128 + int(syscall.SIGTERM)},
		{"SIGHUP to asb", func(r signaller) error {
			return r.Signal(syscall.SIGHUP)
		}, 128 + int(syscall.SIGHUP)},
		{"Ctrl-C to the group", func(r signaller) error {
			return r.Interrupt()
		}, 128 + int(syscall.SIGINT)},
	} {
		p.calls()
		run := p.start(t, "task", "vm:exec", "--", fakes.WaitCommand)
		for !fakes.Waiting(p.state, id.VM) {
			select {
			case <-run.Done():
				_, errOut, code := run.Wait(ctx)
				t.Fatalf("%s: the run ended before its command waited: exit %d\n%s", c.name, code, errOut)
			case <-ctx.Done():
				t.Fatalf("%s: the command never waited", c.name)
			case <-time.After(20 * time.Millisecond):
			}
		}
		if err := c.send(run); err != nil {
			t.Fatal(err)
		}
		_, errOut, code := run.Wait(ctx)
		if code != c.code || !strings.Contains(errOut, "fake-exec: ended by") {
			t.Errorf("%s: exit %d, want %d (msb's own)\n%s", c.name, code, c.code, errOut)
		}
		if got := summary(p.calls()); !slices.Equal(got, []string{"msb exec"}) {
			t.Errorf("%s: the run was not warm: %q", c.name, got)
		}
	}
}
