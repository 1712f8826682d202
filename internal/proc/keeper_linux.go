package proc

import (
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// keeperArg, as a program's first argument, makes any asb binary (any
// program that links this package: asb, asb-task, a test) the keeper of a
// Group's program rather than itself. The rest of the arguments are
// the program to run and its own.
const keeperArg = "__asb-group-keeper"

// keeperGrace is how long the keeper lets its group clean up after asking
// it to end. It is shorter than Grace, after which the process that
// started the keeper kills it (exec.Cmd's WaitDelay): the keeper must
// have killed its group by then, or the group outlives it.
const keeperGrace = Grace - time.Second

func init() {
	if len(os.Args) > 2 && os.Args[1] == keeperArg {
		os.Exit(keep(os.Args[2], os.Args[3:]))
	}
}

// kept puts a keeper between asb and the program cmd names: cmd runs this
// binary as the keeper, and the keeper runs the program in a process group
// of the program's own.
//
// Why: the kernel's parent-death signal reaches one process, the group's
// leader. When asb died (kill -9 included), mmdebstrap was killed and its
// apt, dpkg and their children ran on, holding its files. The keeper gets
// that signal as SIGTERM, asks the program's whole group to end, and kills
// what is left after keeperGrace. A Ctrl-C's SIGTERM (Group's Cancel, to
// the keeper's group) takes the same path.
func kept(cmd *exec.Cmd) {
	if cmd.Err != nil { // the program was not found: Start says so
		return
	}
	cmd.Args = append([]string{cmd.Args[0], keeperArg, cmd.Path}, cmd.Args[1:]...)
	cmd.Path = "/proc/self/exe"
	EndWithParent(cmd)
}

// keep runs the program at path, with the keeper's standard input, output
// and error, in a process group of the program's own, and returns its exit
// status (128 and the signal's number for one that ended by a signal, as a
// shell does). Asked to end (SIGTERM, SIGINT or SIGHUP: asb died, or its
// run was cancelled), it asks the group to end and kills it keeperGrace
// later. However the program ends, what it left in its group is killed.
func keep(path string, args []string) int {
	asked := make(chan os.Signal, 4)
	signal.Notify(asked, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	cmd := exec.Command(path, args...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(os.Stderr, "asb: %v\n", err)
		return 127
	}
	group := -cmd.Process.Pid
	// Told of the program's end without reaping it: until Wait, the
	// program is a zombie, and its group's id cannot be given to another.
	exited := make(chan struct{})
	go func() {
		var info unix.Siginfo
		for unix.Waitid(unix.P_PID, cmd.Process.Pid, &info, unix.WEXITED|unix.WNOWAIT, nil) == unix.EINTR {
		}
		close(exited)
	}()
	select {
	case <-exited:
	case <-asked:
		_ = syscall.Kill(group, syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(keeperGrace):
		}
	}
	_ = syscall.Kill(group, syscall.SIGKILL)
	_ = cmd.Wait() // its streams are files: its only error is the exit, read below
	return exitStatus(cmd.ProcessState)
}

// exitStatus is the program's exit code, or 128 and the signal's number
// for one that ended by a signal.
func exitStatus(st *os.ProcessState) int {
	if st == nil {
		return 127
	}
	if ws, ok := st.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return st.ExitCode()
}
