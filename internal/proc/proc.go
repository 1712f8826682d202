// Package proc is how asb starts a process: one rule, for every tool and
// program it runs (git, msb, docker, podman, a secret's command, asb-task
// and asb-export as children), for how that process ends.
//
//   - When the context ends (a Ctrl-C or a SIGTERM to asb, a timeout), the
//     process is asked to end with SIGTERM, as at a Ctrl-C, so that it
//     cleans up (git removes its lock files, go-task in asb-task stops msb's
//     boot and runs its clean-up); one still running Grace later is killed.
//   - asb's wait for it is bounded: Grace after it ended, or after it was
//     asked to, asb stops waiting for a pipe that a process it left behind
//     still holds (a helper of git's, a shell's background job).
//   - Should asb die, kill -9 included, the kernel kills it (Linux).
package proc

import (
	"context"
	"os/exec"
	"syscall"
	"time"
)

// Grace is how long a process asked to end has to clean up before it is
// killed, and how long asb waits for its pipes once it has ended.
const Grace = 5 * time.Second

// Command is exec.CommandContext(ctx, name, args...) with asb's rule for
// how the process ends (the package's comment).
func Command(ctx context.Context, name string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = Grace
	DieWithParent(cmd)
	return cmd
}

// Graceful is Command for a program that must be asked to end, never
// killed, should asb die: the kernel sends it SIGTERM instead of SIGKILL
// (EndWithParent). One on the user's terminal (the agent's client, asb
// kube agent's exporter) puts the terminal back; asb serve's asb task
// ends the boot its engine started.
func Graceful(ctx context.Context, name string, args ...string) *exec.Cmd {
	cmd := Command(ctx, name, args...)
	EndWithParent(cmd)
	return cmd
}

// Group is Command for a process that starts many of its own (mmdebstrap's
// apt and dpkg): it runs in a process group of its own, and the SIGTERM
// goes to the whole group. The terminal's Ctrl-C does not reach that group:
// it reaches asb, whose context ends. On Linux a keeper stands between
// (keeper_linux.go): asb starts the keeper, the keeper the program in a
// group of the program's own, and the keeper passes the SIGTERM on to that
// group, and ends it when asb dies, kill -9 included, not only the process
// asb started.
func Group(ctx context.Context, name string, args ...string) *exec.Cmd {
	cmd := Command(ctx, name, args...)
	kept(cmd)
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM) }
	return cmd
}
