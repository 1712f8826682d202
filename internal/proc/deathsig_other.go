//go:build !linux

package proc

import "os/exec"

// DieWithParent: only Linux can tie a child's life to its parent's.
func DieWithParent(*exec.Cmd) {}

// EndWithParent: only Linux can tie a child's life to its parent's.
func EndWithParent(*exec.Cmd) {}
