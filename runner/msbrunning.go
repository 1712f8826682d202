package runner

import (
	"errors"
	"os"
	"syscall"

	"github.com/agents-sandbox/asb/host"
)

// IsRunning reports whether vm's own msb process holds its lifecycle lock
// (host.MSBLifecycleLock), which it does for as long as the VM runs: the
// answer costs an open and a flock(2), no process. false means only that
// IsRunning could not prove it (the VM is stopped or not there, or this msb
// keeps no such lock): a caller that must know asks msb.
//
// The look takes the lock shared and drops it at once; msb's own takers
// either wait for it (a start) or try it and skip (its maintenance), as
// they do for each other.
func (m MSB) IsRunning(vm string) bool {
	home := m.Home()
	if home == "" || vm == "" {
		return false
	}
	f, err := os.OpenFile(host.MSBLifecycleLock(home, vm), os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return false
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return false
	}
	err = syscall.Flock(int(f.Fd()), syscall.LOCK_SH|syscall.LOCK_NB)
	if err == nil {
		_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		return false
	}
	return errors.Is(err, syscall.EWOULDBLOCK)
}
