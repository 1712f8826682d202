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

// endWithParent has the kernel send cmd SIGTERM when asb dies (kill -9
// included): an attached msb exec ends its session as it would at a
// Ctrl-C, never left without the process that started it.
func endWithParent(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Pdeathsig = syscall.SIGTERM
}
