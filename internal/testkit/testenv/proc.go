package testenv

import (
	"bytes"
	"cmp"
	"context"
	"errors"

	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agents-sandbox/asb/host"
)

// Proc is a command started in a process group of its own, the way a
// shell starts a foreground job: Interrupt is the terminal's Ctrl-C.
type Proc struct {
	cmd            *exec.Cmd
	stdout, stderr bytes.Buffer
	done           chan struct{}
	err            error
}

// Start starts argv in dir with env; the test's cleanup kills what is left
// of its process group.
func Start(t testing.TB, dir string, env []string, argv ...string) *Proc {
	t.Helper()
	p := &Proc{cmd: exec.Command(argv[0], argv[1:]...), done: make(chan struct{})}
	p.cmd.Dir, p.cmd.Env = dir, env
	p.cmd.Stdout, p.cmd.Stderr = &p.stdout, &p.stderr
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	// A process it leaves behind must not keep Wait waiting for the pipes.
	p.cmd.WaitDelay = 2 * time.Second
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", strings.Join(argv, " "), err)
	}
	go func() { p.err = p.cmd.Wait(); close(p.done) }()
	t.Cleanup(func() {
		_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
		<-p.done
	})
	return p
}

// Interrupt sends SIGINT to the whole process group, as Ctrl-C does; a
// group that is gone already (the command ended) is not an error.
func (p *Proc) Interrupt() error {
	if err := syscall.Kill(-p.cmd.Process.Pid, syscall.SIGINT); err != nil && !errors.Is(err, syscall.ESRCH) {
		return err
	}
	return nil
}

// Kill sends SIGKILL to the process alone (kill -9).
func (p *Proc) Kill() error { return p.cmd.Process.Kill() }

// Signal sends s to the process alone (kill -s), not its group.
func (p *Proc) Signal(s syscall.Signal) error { return p.cmd.Process.Signal(s) }

// Done is closed when the process has ended.
func (p *Proc) Done() <-chan struct{} { return p.done }

// Wait waits for the end of the process, at most until ctx is done, and
// returns its output and exit code (-1 when ctx ended first).
func (p *Proc) Wait(ctx context.Context) (stdout, stderr string, code int) {
	select {
	case <-p.done:
	case <-ctx.Done():
		return p.stdout.String(), p.stderr.String(), -1
	}
	code = 0
	var ee *exec.ExitError
	if errors.As(p.err, &ee) {
		code = ee.ExitCode()
	} else if p.err != nil {
		code = -1
	}
	return p.stdout.String(), p.stderr.String(), code
}

// Machines returns the pids of the `msb machine` processes running vm
// with MSB_HOME msbHome ("" for any), found in /proc.
func Machines(vm, msbHome string) []int {
	var pids []int
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		raw, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil {
			continue
		}
		argv := strings.Split(strings.TrimRight(string(raw), "\x00"), "\x00")
		if len(argv) < 2 || filepath.Base(argv[0]) != "msb" || argv[1] != "machine" {
			continue
		}
		if i := slices.Index(argv, "--name"); vm != "" && (i < 0 || i+1 >= len(argv) || argv[i+1] != vm) {
			continue
		}
		if msbHome != "" {
			env, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
			if !slices.Contains(strings.Split(string(env), "\x00"), "MSB_HOME="+msbHome) {
				continue
			}
		}
		if st, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat")); err == nil {
			if i := bytes.LastIndexByte(st, ')'); i >= 0 && i+2 < len(st) && st[i+2] == 'Z' {
				continue // ended, not reaped yet
			}
		}
		pids = append(pids, pid)
	}
	return pids
}

// KillMachinesAtCleanup kills, when the test ends, every msb machine
// process of msbHome it left, and fails the test if there was one: a test
// must not leave a VM boot spinning.
func KillMachinesAtCleanup(t testing.TB, msbHome string) {
	t.Cleanup(func() {
		left := Machines("", msbHome)
		for _, pid := range left {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		if len(left) > 0 {
			t.Errorf("the test left msb machine processes running (pids %v; killed)", left)
		}
	})
}

// NoMachineLeft fails the test when an msb machine of vm runs in msbHome.
// The process may take a moment to exit after its signal: 5 s.
func NoMachineLeft(t testing.TB, vm, msbHome string) {
	t.Helper()
	NoMachineLeftWithin(t, vm, msbHome, 5*time.Second)
}

// NoMachineLeftWithin fails the test when an msb machine of vm still runs
// in msbHome wait from now (a clean-up that runs first: a boot's reap).
func NoMachineLeftWithin(t testing.TB, vm, msbHome string, wait time.Duration) {
	t.Helper()
	deadline := time.Now().Add(wait)
	for {
		left := Machines(vm, msbHome)
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Errorf("msb machine of %s still runs %s on (pids %v)", cmp.Or(vm, "a VM"), wait, left)
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// HostShape is this host's shape for microVMs: "can-boot", "kvm-no-virt"
// or "no-kvm" (host.Shape).
func HostShape() string { return host.Shape(context.Background(), host.SystemHost{}) }

// CanBoot reports whether microVMs boot here.
func CanBoot() bool { return HostShape() == "can-boot" }
