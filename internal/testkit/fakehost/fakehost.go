// Package fakehost is a canned host.Host per host shape, so tests can run
// asb's host checks as they would go on any machine.
package fakehost

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"testing/fstest"
)

// ShapeEnv names the shape a test binary acting as asb pretends to run on
// ("can-boot", "kvm-no-virt", "no-kvm"); unset, it looks at the real host.
const ShapeEnv = "ASB_TEST_HOST_SHAPE"

// Host is a Linux x86_64 machine of one shape; what the boot checks do not
// look at comes from the real machine.
type Host struct {
	KVM  bool // /dev/kvm is there and usable
	Virt bool // /proc/cpuinfo has vmx
	Env  func(string) string
}

// ForShape returns the host of shape, or false for an unknown name.
func ForShape(shape string) (*Host, bool) {
	switch shape {
	case "can-boot":
		return &Host{KVM: true, Virt: true}, true
	case "kvm-no-virt":
		return &Host{KVM: true}, true
	case "no-kvm":
		return &Host{}, true
	}
	return nil, false
}

// GOOS is linux.
func (h *Host) GOOS() string { return "linux" }

// GOARCH is amd64.
func (h *Host) GOARCH() string { return "amd64" }

// LookPath finds nothing: the boot checks do not look.
func (h *Host) LookPath(string) (string, error) { return "", errors.New("not found") }

// EvalSymlinks returns p.
func (h *Host) EvalSymlinks(p string) (string, error) { return p, nil }

// Glob finds nothing.
func (h *Host) Glob(string) ([]string, error) { return nil, nil }

// Stat knows /dev/kvm.
func (h *Host) Stat(p string) (fs.FileInfo, error) {
	if p == "/dev/kvm" && h.KVM {
		return fstest.MapFS{"kvm": {Mode: fs.ModeDevice | fs.ModeCharDevice | 0o660}}.Stat("kvm")
	}
	return nil, fs.ErrNotExist
}

// OpenRW succeeds.
func (h *Host) OpenRW(string) error { return nil }

// MeminfoEnv, as "TOTAL_MIB,AVAILABLE_MIB", gives the fake host a
// /proc/meminfo (the capacity check's memory); unset, it has none.
const MeminfoEnv = "ASB_TEST_MEMINFO"

// ReadFile knows /proc/cpuinfo, and /proc/meminfo when MeminfoEnv is set.
func (h *Host) ReadFile(p string) ([]byte, error) {
	if total, avail, ok := strings.Cut(os.Getenv(MeminfoEnv), ","); ok && p == "/proc/meminfo" {
		t, _ := strconv.Atoi(total)
		a, _ := strconv.Atoi(avail)
		return fmt.Appendf(nil, "MemTotal: %d kB\nMemAvailable: %d kB\n", t*1024, a*1024), nil
	}
	if p != "/proc/cpuinfo" {
		return nil, fs.ErrNotExist
	}
	if h.Virt {
		return []byte("processor\t: 0\nflags\t\t: fpu vme vmx sse\n"), nil
	}
	return []byte("processor\t: 0\nflags\t\t: fpu vme sse hypervisor\n"), nil
}

// Run runs nothing.
func (h *Host) Run(context.Context, string, ...string) ([]byte, []byte, error) {
	return nil, nil, errors.New("exit status 1")
}

// Getenv is the process's environment (ASB_SKIP_HOST_CHECK reaches the check).
func (h *Host) Getenv(k string) string {
	if h.Env != nil {
		return h.Env(k)
	}
	return os.Getenv(k)
}

// Getwd is os.Getwd.
func (h *Host) Getwd() (string, error) { return os.Getwd() }

// FreeDiskEnv sets the free bytes FreeDisk reports (a script test's small
// disk); unset, it reports plenty.
const FreeDiskEnv = "ASB_TEST_FREE_DISK"

// FreeDisk reports plenty, or FreeDiskEnv's bytes.
func (h *Host) FreeDisk(string) (uint64, error) {
	if n, err := strconv.ParseUint(h.Getenv(FreeDiskEnv), 10, 64); err == nil {
		return n, nil
	}
	return 100 << 30, nil
}
