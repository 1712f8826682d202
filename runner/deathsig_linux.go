package runner

import (
	"os/exec"
	"syscall"
)

// dieWithParent has the kernel kill cmd when asb dies, kill -9 included:
// a git left running by a killed asb init would race the next run.
func dieWithParent(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
}
