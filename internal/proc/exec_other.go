//go:build !linux

package proc

import "syscall"

// Exec replaces asb with the program at path (syscall.Exec).
func Exec(path string, argv, env []string) error { return syscall.Exec(path, argv, env) }
