package host

import (
	"crypto/sha256"
	"encoding/hex"
	"path/filepath"
)

// What msb keeps in its state folder that asb reads without running msb
// (a fact of every supported release, see msbRows).
//
// A sandbox's own process holds an exclusive flock(2) on its lifecycle
// lock, MSB_HOME/run/locks/HEX.lock (HEX: the first 16 bytes of the
// SHA-256 of the sandbox's name), for as long as it runs, kill -9
// included: the kernel drops it with the process. msb's own maintenance
// asks the lock the same way (try_acquire_lifecycle_guard in
// microsandbox-runtime's ipc.rs: 0.6.14 to 0.7.8; seen held by 0.7.2's
// sandbox here, and the file left, not held, by a stopped one). The lock
// file stays after the sandbox stops; it is missing for a name msb never
// ran, or under a release that keeps it elsewhere, and then a caller
// knows nothing and asks msb.
//
// msb exec into a stopped sandbox does not refuse: it starts the sandbox
// itself, with the environment of the msb exec process (not the values
// asb secret exec hands a start), then stops it when the command ends
// (msb 0.7.2: `error: failed to start "NAME"` and exit 1 where the host
// cannot boot). Into a sandbox msb does not have, it answers
// `error: sandbox not found: NAME` and exits 1.

// MSBLifecycleLock is the lifecycle lock of sandbox name under msb's state
// folder home.
func MSBLifecycleLock(home, name string) string {
	sum := sha256.Sum256([]byte(name))
	return filepath.Join(home, "run", "locks", hex.EncodeToString(sum[:16])+".lock")
}

// MSBNotFound, MSBFailedStart and MSBNotStartable begin the first line msb
// exec answers, exit 1, when it reaches no running sandbox: none of that
// name; a stopped one it could not start; one in a state it cannot start
// from, such as a boot still in flight, whose own process holds the
// lifecycle lock ("error: sandbox 'NAME' is in state Starting and cannot be
// started", seen in the booted guest after a kill -9 of the asb that
// started the boot). At a terminal msb colours "error:" (ANSI SGR). msb
// 0.7.2; e2e TestRealMSBExecAnswers checks the first two.
func MSBNotFound(name string) string { return "error: sandbox not found: " + name + "\n" }

// MSBFailedStart: see MSBNotFound.
func MSBFailedStart(name string) string { return "error: failed to start \"" + name + "\"\n" }

// MSBNotStartable: see MSBNotFound.
func MSBNotStartable(name string) string { return "error: sandbox '" + name + "' is in state " }
