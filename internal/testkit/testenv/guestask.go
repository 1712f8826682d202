package testenv

import (
	"errors"
	"io"
	"time"
)

// GuestAnswer is how long the nested guest's kernel has to answer a magic
// SysRq (askKernel) once its scenario was silent for GuestStall. A live
// kernel answers within a second, even under emulation on a loaded host:
// the serial port's interrupt handler prints the answer itself.
const GuestAnswer = 20 * time.Second

// GuestProbe is how long the nested guest's scenario may print nothing
// before its kernel is asked (askKernel) whether the machine still runs:
// three missed heartbeats (guestlib.sh beats every minute). A kernel that
// does not answer, or a CPU of it silent to the NMI that asks for its
// stack, is a stopped machine, ended then; one that answers in full is
// left to run on to GuestStall. A stopped CPU (ci46 of 2026-12-06) cost
// the whole GuestStall before it was named, 8.5 minutes of that run.
const GuestProbe = 3 * time.Minute

// errStopped is waitGuest's verdict on a silent guest whose kernel did not
// answer a magic SysRq either: neither the scenario nor the kernel ran any
// more, the machine itself had stopped (CI of 6de2f51: the network
// session's console went silent in a step's msb exec, no heartbeat, no
// kernel report, QEMU still busy on one host CPU). The scenario runs as an
// ordinary user and cannot stop the kernel: that is the emulation's.
var errStopped = errors.New("the machine stopped")

// sysrqKeys are the magic SysRq keys askKernel sends, in order: print at
// every log level (the guest boots with loglevel=1), each CPU's stack (an
// NMI to each), the tasks blocked in the kernel.
const sysrqKeys = "9lw"

// askKernel asks the guest's kernel for its state by magic SysRq on the
// serial console (QEMU's -serial mon:stdio: Ctrl-A b sends a break, and the
// next key is the SysRq key; the kernel boots with sysrq_always_enabled).
// Its answers go to the console, so to the session's log and the test's
// message. It says whether the kernel answered within wait, having given
// it a few seconds more to print the stacks.
func askKernel(in io.Writer, w *guestWatch, wait time.Duration) bool {
	w.forgetNMIs() // each CPU answers this ask, or is silent to it
	before := w.sysrqs.Load()
	gap := min(time.Second, wait/20) // between keys; the key 5 s at most after its break
	for _, k := range sysrqKeys {
		if _, err := io.WriteString(in, "\x01b"); err != nil {
			return false
		}
		time.Sleep(gap / 3)
		if _, err := io.WriteString(in, string(k)); err != nil {
			return false
		}
		time.Sleep(gap)
	}
	// Each key's answer begins with a line of its own ("sysrq: Show
	// Blocked State"); "9" prints two.
	all := before + int64(len(sysrqKeys)) + 1
	for end := time.Now().Add(wait); time.Now().Before(end) && w.sysrqs.Load() < all; {
		time.Sleep(100 * time.Millisecond)
	}
	answered := w.sysrqs.Load() > before
	if answered {
		time.Sleep(min(wait, 3*time.Second)) // the stacks after the last line
	}
	return answered
}
