package runner

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"syscall"
)

// ExitStatusError is a command that ran and exited with a code other than
// 0 (or was killed by a signal: the shell's 128+N).
type ExitStatusError struct{ Code int }

func (e *ExitStatusError) Error() string { return fmt.Sprintf("exit status %d", e.Code) }

// ExitCode is the command's code, for asb's own exit.
func (e *ExitStatusError) ExitCode() int { return e.Code }

// RunForeground runs argv[0] (found on PATH) in dir with env as asb's
// child, on asb's own terminal: the agent's interface on the warm path, the
// user's chosen raw channel to the VM. asb stays its parent, so that it can
// review what the run changed once it returns (outer.ReviewHostRun). While
// it waits, a Ctrl-C or Ctrl-\ is the child's alone (the terminal sends it
// to both; asb takes no action on it), and a SIGTERM or SIGHUP sent to asb
// is passed on. (No parent-death signal: it is tied to the thread that
// started the child, and an agent's session lasts hours.) It returns the
// child's exit code as an ExitStatusError.
func RunForeground(argv, env []string, dir string) error {
	path, err := exec.LookPath(argv[0])
	if err != nil {
		return err
	}
	// Caught, not ignored: an ignored signal would stay ignored in the
	// child too.
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, os.Interrupt, syscall.SIGQUIT, syscall.SIGTERM, syscall.SIGHUP)
	defer signal.Stop(sigs)
	cmd := exec.Command(path, argv[1:]...)
	cmd.Args[0] = argv[0]
	cmd.Env, cmd.Dir = env, dir
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	if err := cmd.Start(); err != nil {
		return err
	}
	done := make(chan struct{})
	defer close(done)
	go func() {
		for {
			select {
			case <-done:
				return
			case sig := <-sigs:
				if sig == syscall.SIGTERM || sig == syscall.SIGHUP {
					_ = cmd.Process.Signal(sig)
				}
			}
		}
	}()
	err = cmd.Wait()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code := ee.ExitCode()
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			code = 128 + int(ws.Signal())
		}
		return &ExitStatusError{Code: code}
	}
	return err
}
