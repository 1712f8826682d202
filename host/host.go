// Package host knows what this machine offers the agent's microVM: the
// operating system and CPU, KVM and CPU virtualization, msb and its VM
// firmware, an image builder and free disk. `asb doctor` reports all of it;
// the pre-boot check of vm:create and vm:start (`asb doctor --boot`) uses
// the same boot facts (boot.go), so the two can never disagree.
package host

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/agents-sandbox/asb/internal/proc"
)

// Host is what the checks look at. SystemHost is the real one; tests pass
// a fake to reach every outcome.
type Host interface {
	GOOS() string
	GOARCH() string
	LookPath(name string) (string, error)
	EvalSymlinks(path string) (string, error)
	Glob(pattern string) ([]string, error)
	Stat(path string) (fs.FileInfo, error)
	// OpenRW opens path read-write and closes it again: can we use it?
	OpenRW(path string) error
	ReadFile(path string) ([]byte, error)
	// Run runs a command; a non-zero exit is an error (stdout and stderr are
	// returned anyway).
	Run(ctx context.Context, name string, args ...string) (stdout, stderr []byte, err error)
	Getenv(key string) string
	Getwd() (string, error)
	// FreeDisk returns the bytes available to this user on path's file system.
	FreeDisk(path string) (uint64, error)
}

// SystemHost is the real machine.
type SystemHost struct{}

// GOOS is runtime.GOOS.
func (SystemHost) GOOS() string { return runtime.GOOS }

// GOARCH is runtime.GOARCH.
func (SystemHost) GOARCH() string { return runtime.GOARCH }

// LookPath is exec.LookPath, made absolute.
func (SystemHost) LookPath(name string) (string, error) {
	p, err := exec.LookPath(name)
	if err != nil {
		return "", err
	}
	return filepath.Abs(p)
}

// EvalSymlinks is filepath.EvalSymlinks.
func (SystemHost) EvalSymlinks(p string) (string, error) { return filepath.EvalSymlinks(p) }

// Glob is filepath.Glob.
func (SystemHost) Glob(pattern string) ([]string, error) { return filepath.Glob(pattern) }

// Stat is os.Stat.
func (SystemHost) Stat(p string) (fs.FileInfo, error) { return os.Stat(p) }

// OpenRW opens p read-write and closes it.
func (SystemHost) OpenRW(p string) error {
	f, err := os.OpenFile(p, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	return f.Close()
}

// ReadFile is os.ReadFile.
func (SystemHost) ReadFile(p string) ([]byte, error) { return os.ReadFile(p) }

// Getenv is os.Getenv.
func (SystemHost) Getenv(k string) string { return os.Getenv(k) }

// Getwd is os.Getwd.
func (SystemHost) Getwd() (string, error) { return os.Getwd() }

// FreeDisk returns the bytes available on p's file system.
func (SystemHost) FreeDisk(p string) (uint64, error) { return freeDisk(p) }

// Run runs name with args.
func (SystemHost) Run(ctx context.Context, name string, args ...string) ([]byte, []byte, error) {
	cmd := proc.Command(ctx, name, args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if err != nil && errors.Is(ctx.Err(), context.DeadlineExceeded) {
		err = fmt.Errorf("no answer within %v: %w", doctorTimeout, err)
	}
	return out.Bytes(), errb.Bytes(), err
}

func firstLine(s string, err error) string {
	for line := range strings.SplitSeq(s, "\n") {
		if line = strings.TrimSpace(line); line != "" {
			return line
		}
	}
	if err != nil {
		return err.Error()
	}
	return "no output"
}

func humanBytes(n uint64) string {
	const gib = 1 << 30
	if n >= gib {
		return fmt.Sprintf("%.1f GiB", float64(n)/gib)
	}
	return fmt.Sprintf("%d MiB", n>>20)
}
