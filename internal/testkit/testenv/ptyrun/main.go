// Command ptyrun runs a command with a new pseudo-terminal as its
// controlling terminal and copies what it prints to standard output: the
// nested can-boot guest has only a serial console, and `asb task agent`
// attaches to the VM with a terminal (msb exec -t), as a user's does.
// Standard input is not forwarded (the scenario is non-interactive). It
// exits with the command's exit code.
//
// SIGTERM, SIGINT or SIGHUP (a step's timeout) ends the run as a user's
// closed terminal window does: ptyrun hangs the terminal up (SIGHUP to the
// command's process group), says so on standard error, and kills what is
// left of the command's process group after hangupGrace. Before, ptyrun
// died alone and left `asb task agent` attached to the VM, holding its
// run lock under the retry. Built statically for the guest's data disk;
// never linked into asb.
package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"syscall"
	"time"
	"unsafe"
)

// hangupGrace is how long the command has to end after the hangup
// (PTYRUN_GRACE, in seconds, for ptyrun's own test).
func hangupGrace() time.Duration {
	if n, err := strconv.Atoi(os.Getenv("PTYRUN_GRACE")); err == nil && n > 0 {
		return time.Duration(n) * time.Second
	}
	return 10 * time.Second
}

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: ptyrun CMD [ARGS...]")
		os.Exit(2)
	}
	code, err := run(os.Args[1:])
	if err != nil {
		fmt.Fprintln(os.Stderr, "ptyrun:", err)
		os.Exit(127)
	}
	os.Exit(code)
}

func ioctl(fd uintptr, req uintptr, arg unsafe.Pointer) error {
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, fd, req, uintptr(arg)); e != 0 {
		return e
	}
	return nil
}

// openPTY returns a new terminal's two ends.
func openPTY() (master, slave *os.File, err error) {
	master, err = os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		return nil, nil, err
	}
	var unlock int32
	if err := ioctl(master.Fd(), syscall.TIOCSPTLCK, unsafe.Pointer(&unlock)); err != nil {
		master.Close()
		return nil, nil, fmt.Errorf("unlock pty: %w", err)
	}
	var n uint32
	if err := ioctl(master.Fd(), syscall.TIOCGPTN, unsafe.Pointer(&n)); err != nil {
		master.Close()
		return nil, nil, fmt.Errorf("pty number: %w", err)
	}
	slave, err = os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		master.Close()
		return nil, nil, err
	}
	return master, slave, nil
}

func run(argv []string) (int, error) {
	master, slave, err := openPTY()
	if err != nil {
		return 0, err
	}
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = slave, slave, slave
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	if err := cmd.Start(); err != nil {
		master.Close()
		return 0, err
	}
	_ = slave.Close()
	copied := make(chan struct{})
	go func() { _, _ = io.Copy(os.Stdout, master); close(copied) }()
	waited := make(chan error, 1)
	go func() { waited <- cmd.Wait() }()
	var werr error
	select {
	case werr = <-waited:
		<-copied // EIO once the last holder of the terminal is gone
		master.Close()
	case s := <-sigs:
		werr = hangUp(s, cmd.Process.Pid, master, waited)
	}
	var ee *exec.ExitError
	if errors.As(werr, &ee) {
		return exitCode(ee), nil
	}
	return 0, werr
}

// hangUp ends the run on signal s: the terminal closed, then, after
// hangupGrace, SIGKILL to pid's process group (the command's session:
// asb and the msb exec it attached with).
func hangUp(s os.Signal, pid int, master *os.File, waited <-chan error) error {
	fmt.Fprintf(os.Stderr, "ptyrun: %v: hung up the terminal of %d (%s)\n", s, pid, os.Args[1])
	// What the kernel does when a terminal's last master closes: SIGHUP
	// to its session's leader and foreground group, here both pid's group.
	// (Closing master alone does not: the copy's read still holds it.)
	_ = syscall.Kill(-pid, syscall.SIGHUP)
	_ = syscall.Kill(-pid, syscall.SIGCONT)
	master.Close()
	grace := hangupGrace()
	select {
	case err := <-waited:
		return err
	case <-time.After(grace):
	}
	fmt.Fprintf(os.Stderr, "ptyrun: %d still running %s after the hangup: killed its process group\n", pid, grace)
	_ = syscall.Kill(-pid, syscall.SIGKILL)
	return <-waited
}

// exitCode is the command's exit code, 128+N when signal N ended it (as a
// shell says).
func exitCode(ee *exec.ExitError) int {
	if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return ee.ExitCode()
}
