package host

import (
	"context"
	"io/fs"
	"slices"
	"strings"
	"testing"
)

// TestBootTable runs the pre-boot check on every host shape asb meets:
// cpuinfo, /dev/kvm and the platform as fixtures.
func TestBootTable(t *testing.T) {
	const (
		vmx   = "processor\t: 0\nflags\t\t: fpu vme vmx sse\n"
		svm   = "processor\t: 0\nflags\t\t: fpu svm sse\n"
		plain = "processor\t: 0\nflags\t\t: fpu vme de pse sse hypervisor\n"
		// A "vmx" outside the flags line is no flag.
		decoy = "model name\t: vmx-capable? no\nflags\t\t: fpu sse\n"
	)
	kvm := map[string]fs.FileMode{"/dev/kvm": fs.ModeDevice | fs.ModeCharDevice | 0o660}
	notDevice := map[string]fs.FileMode{"/dev/kvm": 0o644}
	cases := []struct {
		name     string
		goos     string
		goarch   string
		modes    map[string]fs.FileMode
		cpuinfo  string
		noRW     bool
		uname    string
		skip     bool
		ok       bool
		shape    string
		blocking []string
	}{
		{name: "x86_64 kvm vmx", goos: "linux", modes: kvm, cpuinfo: vmx, ok: true, shape: "can-boot"},
		{name: "x86_64 kvm svm", goos: "linux", modes: kvm, cpuinfo: svm, ok: true, shape: "can-boot"},
		{name: "x86_64 kvm, no flag", goos: "linux", modes: kvm, cpuinfo: plain, shape: "kvm-no-virt", blocking: []string{CheckVirt}},
		{name: "x86_64 kvm, decoy", goos: "linux", modes: kvm, cpuinfo: decoy, shape: "kvm-no-virt", blocking: []string{CheckVirt}},
		{name: "x86_64 no kvm, vmx", goos: "linux", cpuinfo: vmx, shape: "no-kvm", blocking: []string{CheckKVM}},
		{name: "x86_64 no kvm, no flag", goos: "linux", cpuinfo: plain, shape: "no-kvm", blocking: []string{CheckKVM, CheckVirt}},
		{name: "x86_64 kvm not writable", goos: "linux", modes: kvm, cpuinfo: vmx, noRW: true, shape: "kvm-no-virt", blocking: []string{CheckKVM}},
		{name: "x86_64 kvm not a device", goos: "linux", modes: notDevice, cpuinfo: vmx, shape: "kvm-no-virt", blocking: []string{CheckKVM}},
		{name: "x86_64 no cpuinfo", goos: "linux", modes: kvm, shape: "kvm-no-virt", blocking: []string{CheckVirt}},
		{name: "arm64 kvm", goos: "linux", goarch: "arm64", modes: kvm, cpuinfo: plain, ok: true, shape: "can-boot"},
		{name: "arm64 no kvm", goos: "linux", goarch: "arm64", shape: "no-kvm", blocking: []string{CheckKVM}},
		{name: "apple silicon", goos: "darwin", goarch: "arm64", uname: "arm64", ok: true, shape: "can-boot"},
		{name: "intel mac", goos: "darwin", uname: "x86_64", shape: "unsupported", blocking: []string{CheckVirt}},
		{name: "windows", goos: "windows", shape: "unsupported", blocking: []string{CheckVirt}},
		{name: "skipped", goos: "linux", cpuinfo: plain, skip: true, ok: true, shape: "no-kvm"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := &fakeHost{goos: tc.goos, goarch: tc.goarch, modes: tc.modes, files: map[string]string{},
				noRW: map[string]bool{"/dev/kvm": tc.noRW}, env: map[string]string{}, cmds: map[string]fakeRun{}}
			if tc.cpuinfo != "" {
				h.files["/proc/cpuinfo"] = tc.cpuinfo
			}
			if tc.uname != "" {
				h.cmds["uname -m"] = fakeRun{out: tc.uname + "\n"}
			}
			if tc.skip {
				h.env[SkipEnv] = "1"
			}
			r := Boot(context.Background(), h)
			if r.OK() != tc.ok || r.Skipped != tc.skip {
				t.Fatalf("Boot: ok=%v skipped=%v, want ok=%v skipped=%v: %+v", r.OK(), r.Skipped, tc.ok, tc.skip, r.Checks)
			}
			if got := (DoctorReport{Checks: r.Checks}).Blocking(); !slices.Equal(got, tc.blocking) {
				t.Errorf("blocking = %v, want %v", got, tc.blocking)
			}
			if got := Shape(context.Background(), h); got != tc.shape {
				t.Errorf("Shape = %q, want %q", got, tc.shape)
			}
			for _, c := range r.Checks {
				if c.Status == StatusFail && c.Fix == "" {
					t.Errorf("%s failed without a fix", c.Name)
				}
				if c.Status == StatusFail && tc.goos == "linux" && !strings.Contains(c.Fix, SkipEnv+"=1") {
					t.Errorf("%s: the fix does not name %s: %s", c.Name, SkipEnv, c.Fix)
				}
			}
			// The doctor reports the same facts, check for check.
			d := Doctor(context.Background(), h)
			for _, bc := range BootChecks(context.Background(), h) {
				i := slices.IndexFunc(d.Checks, func(c Check) bool { return c.Name == bc.Name })
				if i < 0 || d.Checks[i] != bc {
					t.Errorf("doctor's %s check differs from the boot check: %+v vs %+v", bc.Name, d.Checks, bc)
				}
			}
		})
	}
}
