package archtest

import (
	"regexp"
	"testing"
)

// ownStarts are the product files that may start a process otherwise than
// through internal/proc, each with why.
var ownStarts = map[string]string{
	"internal/proc/proc.go":         "the one place",
	"internal/proc/exec_linux.go":   "the one place asb is replaced by another program (proc.Exec)",
	"internal/proc/exec_other.go":   "proc.Exec where no parent-death signal exists",
	"internal/proc/keeper_linux.go": "the keeper at the head of a proc.Group runs the group's program, tied to itself",
	"runner/attach.go":              "msb exec on the terminal: asb waits for it however its own context ends, and passes SIGTERM and SIGHUP on by hand (it is tied to asb by proc.EndWithParent)",
}

var startRe = regexp.MustCompile(`\bexec\.(Command|CommandContext)\(|\bexec\.Cmd\{|\bos\.StartProcess\(|\bsyscall\.(ForkExec|Exec)\(`)

// One way to start a process, impossible to forget: every process asb
// starts ends by internal/proc's rule (SIGTERM when asb's context ends, a
// kill Grace later, a bounded wait for its pipes, killed when asb dies), so
// no product file but the listed ones starts one with os/exec itself.
func TestProcessesStartThroughProc(t *testing.T) {
	for r, raw := range shippedSources(t) {
		if _, ok := ownStarts[r]; !ok && startRe.Match(raw) {
			t.Errorf("%s starts a process with os/exec or execs one with syscall.Exec: use proc.Command or proc.Exec (internal/proc), or list it in proc_test.go with why", r)
		}
	}
}
