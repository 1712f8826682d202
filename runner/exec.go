// Package runner runs things on the host: the go-task executor that drives
// the outer folder's Taskfile, and the host tools (git, msb, docker, podman)
// behind small interfaces, so tests can put stand-ins at the process boundary.
package runner

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"

	"github.com/agents-sandbox/asb/internal/proc"
)

// ToolError is a host tool that failed: which command, its exit code and
// the tail of what it printed.
type ToolError struct {
	Cmd    []string
	Code   int
	Output string
	Err    error
}

func (e *ToolError) Error() string {
	msg := fmt.Sprintf("%s failed", strings.Join(e.Cmd, " "))
	if e.Code > 0 {
		msg += fmt.Sprintf(" (exit %d)", e.Code)
	}
	if out := strings.TrimSpace(e.Output); out != "" {
		msg += ": " + lastLines(out, 5)
	} else if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

func (e *ToolError) Unwrap() error { return e.Err }

// Output runs name with args in dir and returns its standard output. On
// failure the error carries the exit code and standard error.
func Output(ctx context.Context, dir, name string, args ...string) ([]byte, error) {
	return OutputEnv(ctx, dir, nil, name, args...)
}

// OutputEnv is Output with env added to this process's environment.
func OutputEnv(ctx context.Context, dir string, env []string, name string, args ...string) ([]byte, error) {
	cmd := proc.Command(ctx, name, args...)
	cmd.Dir = dir
	if env != nil {
		cmd.Env = append(os.Environ(), env...)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		te := &ToolError{Cmd: append([]string{name}, args...), Output: stderr.String(), Err: err}
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			te.Code = ee.ExitCode()
		}
		return stdout.Bytes(), te
	}
	return stdout.Bytes(), nil
}

func lastLines(s string, n int) string {
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// ExecProcess replaces this process with argv[0] (found on PATH) run in
// dir with env; it returns only when that cannot be done.
func ExecProcess(argv, env []string, dir string) error {
	path, err := exec.LookPath(argv[0])
	if err != nil {
		return err
	}
	if err := os.Chdir(dir); err != nil {
		return err
	}
	return proc.Exec(path, argv, env)
}
