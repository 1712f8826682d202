//go:build !linux

package runner

import "os/exec"

// dieWithParent: only Linux can tie a child's life to its parent's.
func dieWithParent(*exec.Cmd) {}

// endWithParent: only Linux can tie a child's life to its parent's.
func endWithParent(*exec.Cmd) {}
