package host

import (
	"context"
	"io/fs"
	"strings"
)

// SkipEnv, set to 1, turns off the pre-boot check (`asb doctor --boot`):
// for a host where asb's reading of it is wrong, and for tests that drive
// msb on hosts that cannot boot.
const SkipEnv = "ASB_SKIP_HOST_CHECK"

// skipHint ends the fix of every boot check.
const skipHint = "; if this host can boot microVMs all the same, set " + SkipEnv + "=1 to skip asb's check"

// What a microVM needs to boot, per platform (microsandbox runs on libkrun):
//
//	Linux x86_64  a usable /dev/kvm and the vmx (Intel VT-x) or svm (AMD-V) CPU flag
//	Linux arm64   a usable /dev/kvm
//	macOS         Apple silicon (Hypervisor.framework)
//
// Without them msb create fails: at once when /dev/kvm is missing, and only
// after minutes of a spinning `msb machine` when /dev/kvm exists but the CPU
// flag does not (KVM_EXIT_INTERNAL_ERROR). BootChecks tells in a millisecond.

// BootChecks returns the checks a VM boot depends on: /dev/kvm and CPU
// virtualization. They are part of Doctor's report too.
func BootChecks(ctx context.Context, h Host) []Check {
	return []Check{checkKVM(h), checkVirt(ctx, h)}
}

// BootReport is the pre-boot check: the boot checks, or none when SkipEnv
// is set (Skipped says so).
type BootReport struct {
	Checks  []Check
	Skipped bool
}

// Boot runs the pre-boot check.
func Boot(ctx context.Context, h Host) BootReport {
	if h.Getenv(SkipEnv) == "1" {
		return BootReport{Skipped: true}
	}
	return BootReport{Checks: BootChecks(ctx, h)}
}

// OK reports whether a VM can boot here (or the check was skipped).
func (r BootReport) OK() bool { return DoctorReport{Checks: r.Checks}.OK() }

// Shape names the host for logs: "can-boot", "kvm-no-virt" (/dev/kvm but
// no CPU virtualization: a boot spins for minutes, then fails), "no-kvm"
// (a boot fails at once), or "unsupported" (not Linux, not Apple silicon).
func Shape(ctx context.Context, h Host) string {
	kvm, virt := checkKVM(h), checkVirt(ctx, h)
	switch {
	case kvm.Status != StatusFail && virt.Status != StatusFail:
		return "can-boot"
	case h.GOOS() != "linux":
		return "unsupported"
	case kvm.Detail == kvmMissing:
		return "no-kvm"
	default:
		return "kvm-no-virt"
	}
}

const kvmMissing = "missing"

func checkKVM(h Host) Check {
	c := Check{Name: CheckKVM, Blocking: true}
	if h.GOOS() != "linux" {
		c.Status, c.Blocking = StatusSkip, false
		c.Detail = "not used on " + h.GOOS()
		return c
	}
	fi, err := h.Stat("/dev/kvm")
	if err != nil {
		c.Status, c.Detail = StatusFail, kvmMissing
		c.Fix = "load the KVM module (modprobe kvm_intel or kvm_amd) on a machine with CPU virtualization; in a container or CI job the host must pass /dev/kvm through" + skipHint
		return c
	}
	if fi.Mode()&fs.ModeDevice == 0 {
		c.Status, c.Detail = StatusFail, "present but not a device"
		c.Fix = "/dev/kvm should be the KVM character device; check the kernel's KVM module" + skipHint
		return c
	}
	if err := h.OpenRW("/dev/kvm"); err != nil {
		c.Status, c.Detail = StatusFail, "present but not writable by this user"
		c.Fix = "add yourself to the kvm group (sudo usermod -aG kvm $USER, then log in again), or fix /dev/kvm's permissions" + skipHint
		return c
	}
	c.Status, c.Detail = StatusOK, "present and writable"
	return c
}

func checkVirt(ctx context.Context, h Host) Check {
	c := Check{Name: CheckVirt, Blocking: true}
	switch {
	case h.GOOS() == "linux" && h.GOARCH() == "arm64":
		c.Status, c.Blocking = StatusOK, true
		c.Detail = "arm64: KVM is all a microVM needs"
	case h.GOOS() == "linux":
		raw, err := h.ReadFile("/proc/cpuinfo")
		if err != nil {
			c.Status, c.Detail = StatusFail, "cannot read /proc/cpuinfo: "+err.Error()
			c.Fix = "asb needs /proc/cpuinfo to tell whether the CPU has VT-x or AMD-V" + skipHint
			return c
		}
		switch virtFlag(raw) {
		case "vmx":
			c.Status, c.Detail = StatusOK, "Intel VT-x (vmx)"
		case "svm":
			c.Status, c.Detail = StatusOK, "AMD-V (svm)"
		default:
			c.Status = StatusFail
			c.Detail = "missing: no vmx or svm flag in /proc/cpuinfo, so microVMs cannot boot here"
			c.Fix = "enable virtualization (Intel VT-x / AMD-V) in the BIOS or UEFI; inside a VM, turn on nested virtualization on its host, or use a machine that has it" + skipHint
		}
	case h.GOOS() == "darwin":
		ctx, cancel := context.WithTimeout(ctx, doctorTimeout)
		defer cancel()
		// uname, not GOARCH: an x86_64 asb under Rosetta still runs on Apple silicon.
		out, _, err := h.Run(ctx, "uname", "-m")
		arch := strings.TrimSpace(string(out))
		if err == nil && arch == "arm64" {
			c.Status, c.Detail = StatusOK, "Apple Silicon (Hypervisor.framework)"
			return c
		}
		if arch == "" {
			arch = "unknown"
		}
		c.Status, c.Detail = StatusFail, "this Mac is "+arch+"; microsandbox runs on Apple Silicon (arm64) only"
		c.Fix = "use an Apple Silicon Mac or a Linux machine with KVM"
	default:
		c.Status, c.Detail = StatusFail, "microsandbox does not run on "+h.GOOS()
		c.Fix = "use Linux with KVM, or an Apple Silicon Mac"
	}
	return c
}

// virtFlag returns "vmx", "svm" or "" from /proc/cpuinfo's flags lines.
func virtFlag(cpuinfo []byte) string {
	for line := range strings.SplitSeq(string(cpuinfo), "\n") {
		key, val, ok := strings.Cut(line, ":")
		if !ok || strings.TrimSpace(key) != "flags" {
			continue
		}
		for f := range strings.FieldsSeq(val) {
			if f == "vmx" || f == "svm" {
				return f
			}
		}
	}
	return ""
}
