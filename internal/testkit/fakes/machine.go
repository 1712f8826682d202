package fakes

import (
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"github.com/agents-sandbox/asb/host"
)

// awaitStarting waits until the record of the VM a machine boots says
// Starting: its create or start writes it just after starting the machine,
// and a verdict written before would be overwritten (the machine of a boot
// at once, `msb hold`, would then see its VM not Running and end, and the
// create wait for ever). False: SIGTERM came, or no record after 10 s.
func (e *env) awaitStarting(name string, term <-chan os.Signal) bool {
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		var vm VMRecord
		if e.get("msb-vms", name, &vm) == nil && vm.Status == "Starting" {
			return true
		}
		select {
		case <-term:
			return false
		case <-time.After(2 * time.Millisecond):
		}
	}
	return false
}

// machine is `msb machine`: the VM's own process. It boots (or spins) for
// --seconds, then sets the VM Running and stays (--outcome ok) or Stopped and
// exits 1; SIGTERM stops it at any time, the VM Stopped.
func (e *env) machine(args []string) error {
	fl, _, _ := flags(args, "--name", "--seconds", "--outcome")
	name := last(fl["--name"])
	secs, _ := strconv.ParseFloat(last(fl["--seconds"]), 64)
	term := make(chan os.Signal, 1)
	signal.Notify(term, syscall.SIGTERM, syscall.SIGINT)
	defer os.Remove(e.path("msb-machines", name))
	if d, err := strconv.ParseFloat(os.Getenv(MachineDelayEnv), 64); err == nil {
		time.Sleep(time.Duration(d * float64(time.Second)))
	}
	lock, err := holdLifecycleLock(name)
	if err != nil {
		return err
	}
	defer lock.Close()
	tellHeld()
	if !e.awaitStarting(name, term) {
		return e.setStatus(name, "Stopped")
	}
	select {
	case <-term:
		return e.setStatus(name, "Stopped")
	case <-time.After(time.Duration(secs * float64(time.Second))):
	}
	if last(fl["--outcome"]) != "ok" {
		_ = e.setStatus(name, "Stopped")
		return exitError{1, "KVM_EXIT_INTERNAL_ERROR"}
	}
	if err := e.setStatus(name, "Running"); err != nil {
		return err
	}
	if e.runUntilGone(name, term) {
		return nil
	}
	return e.setStatus(name, "Stopped")
}

// heldFDEnv names the descriptor a machine closes once it holds its VM's
// lifecycle lock: the create or start that started it waits for that.
const heldFDEnv = "ASB_FAKE_HELD_FD"

// tellHeld closes the descriptor heldFDEnv names, when it is set.
func tellHeld() {
	fd, err := strconv.Atoi(os.Getenv(heldFDEnv))
	if err != nil || fd < 3 {
		return
	}
	_ = os.Unsetenv(heldFDEnv)
	if f := os.NewFile(uintptr(fd), "held"); f != nil {
		_ = f.Close()
	}
}

// holdLifecycleLock takes the VM's lifecycle lock as msb's sandbox
// process does, for as long as the process lives.
func holdLifecycleLock(name string) (*os.File, error) {
	home := os.Getenv("MSB_HOME")
	if home == "" {
		h, err := os.UserHomeDir()
		if err != nil {
			return nil, err
		}
		home = filepath.Join(h, ".microsandbox")
	}
	p := host.MSBLifecycleLock(home, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(p, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}
