package proc

import (
	"os/exec"
	"syscall"
)

// DieWithParent has the kernel kill cmd when asb dies, kill -9 included:
// a git left running by a killed asb init would race the next run.
func DieWithParent(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
}

// EndWithParent has the kernel send cmd SIGTERM when asb dies (kill -9
// included): a program attached to the terminal (msb exec, the agent's
// client) ends as it would at a Ctrl-C, putting the terminal back, never
// left without the process that started it.
func EndWithParent(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Pdeathsig = syscall.SIGTERM
}
