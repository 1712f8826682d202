package proc

import (
	"errors"
	"os"
	"runtime"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The parent-death signal asb was started with (DieWithParent,
// EndWithParent, set by the process that started it), and that process.
// The kernel keeps the signal per thread: only the main thread, the one
// that was forked, has it, and package initialization runs there.
var startDeathSig, startParent = func() (int, int) {
	var sig int32
	if err := unix.Prctl(unix.PR_GET_PDEATHSIG, uintptr(unsafe.Pointer(&sig)), 0, 0, 0); err != nil || sig == 0 {
		return 0, 0 // no parent to follow: nothing more to read at start
	}
	return int(sig), os.Getppid()
}()

// errParentGone: the process that started asb, and asked for it to end
// with it, has ended already.
var errParentGone = errors.New("the process that started asb has ended")

// Exec replaces asb with the program at path (syscall.Exec), keeping the
// parent-death signal asb was started with. A Go program execs from
// whichever thread its goroutine runs on, and a thread other than the
// main one has no such signal: the program would outlive asb's parent
// (asb serve's asb task, by then asb-task, ran on after serve was killed
// with -9, and so did the boot it had started). So the signal is set on
// this thread, locked, before the exec.
func Exec(path string, argv, env []string) error {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if startDeathSig != 0 {
		if err := unix.Prctl(unix.PR_SET_PDEATHSIG, uintptr(startDeathSig), 0, 0, 0); err != nil {
			return err
		}
		if os.Getppid() != startParent {
			return errParentGone // its signal went to no one: it would have ended asb
		}
	}
	return syscall.Exec(path, argv, env)
}
