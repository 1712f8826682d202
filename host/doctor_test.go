package host

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"runtime"
	"slices"
	"strings"
	"testing"
	"testing/fstest"
	"time"
)

// fakeHost is a Host made of maps; every command run is recorded.
type fakeHost struct {
	goos    string
	goarch  string
	paths   map[string]string // LookPath
	links   map[string]string // EvalSymlinks
	globs   map[string][]string
	modes   map[string]fs.FileMode // Stat: present paths and their modes
	noRW    map[string]bool        // OpenRW fails
	files   map[string]string      // ReadFile
	env     map[string]string
	wd      string
	free    uint64
	freeErr error
	// cmds answers Run: key "name arg1 arg2"; a missing key exits 1.
	cmds map[string]fakeRun
	ran  []string
}

type fakeRun struct {
	out, errOut string
	fail        bool
}

func (h *fakeHost) GOOS() string { return h.goos }
func (h *fakeHost) GOARCH() string {
	if h.goarch == "" {
		return "amd64"
	}
	return h.goarch
}
func (h *fakeHost) LookPath(n string) (string, error) {
	if p, ok := h.paths[n]; ok {
		return p, nil
	}
	return "", errors.New("executable file not found in $PATH")
}
func (h *fakeHost) EvalSymlinks(p string) (string, error) {
	if r, ok := h.links[p]; ok {
		return r, nil
	}
	return p, nil
}
func (h *fakeHost) Glob(pattern string) ([]string, error) { return h.globs[pattern], nil }
func (h *fakeHost) Stat(p string) (fs.FileInfo, error) {
	m, ok := h.modes[p]
	if !ok {
		return nil, fs.ErrNotExist
	}
	return fstest.MapFS{"f": {Mode: m}}.Stat("f")
}
func (h *fakeHost) OpenRW(p string) error {
	if h.noRW[p] {
		return fs.ErrPermission
	}
	return nil
}
func (h *fakeHost) ReadFile(p string) ([]byte, error) {
	s, ok := h.files[p]
	if !ok {
		return nil, fs.ErrNotExist
	}
	return []byte(s), nil
}
func (h *fakeHost) Getenv(k string) string          { return h.env[k] }
func (h *fakeHost) Getwd() (string, error)          { return h.wd, nil }
func (h *fakeHost) FreeDisk(string) (uint64, error) { return h.free, h.freeErr }
func (h *fakeHost) Run(_ context.Context, name string, args ...string) ([]byte, []byte, error) {
	key := strings.Join(append([]string{name}, args...), " ")
	h.ran = append(h.ran, key)
	r, ok := h.cmds[key]
	if !ok {
		return nil, []byte("fake: unknown command " + key), errors.New("exit status 1")
	}
	var err error
	if r.fail {
		err = errors.New("exit status 1")
	}
	return []byte(r.out), []byte(r.errOut), err
}

const (
	fakeMSB  = "/home/u/.tools/bin/msb"
	fakeReal = "/home/u/.tools/msb-0.7.2/package/bin/msb"
	fakeLib  = "/home/u/.tools/msb-0.7.2/package/lib/libkrunfw.so.5.6.1"
)

// goodLinux is a Linux host where everything is in place (docker as builder).
func goodLinux() *fakeHost {
	return &fakeHost{
		goos:  "linux",
		paths: map[string]string{"msb": fakeMSB, "docker": "/usr/bin/docker", "podman": "/usr/bin/podman"},
		links: map[string]string{fakeMSB: fakeReal},
		globs: map[string][]string{"/home/u/.tools/msb-0.7.2/package/lib/libkrunfw.so.*": {fakeLib}},
		modes: map[string]fs.FileMode{"/dev/kvm": fs.ModeDevice | fs.ModeCharDevice | 0o660},
		files: map[string]string{"/proc/cpuinfo": "processor\t: 0\nflags\t\t: fpu vme de pse vmx sse\n\nprocessor\t: 1\nflags\t\t: fpu vme de pse vmx sse\n"},
		env:   map[string]string{},
		wd:    "/home/u/proj",
		free:  50 << 30,
		cmds: map[string]fakeRun{
			fakeMSB + " --version": {out: "msb 0.7.8\n"},
			fakeMSB + " doctor":    {out: "   ✓ msb\n"},
			"/usr/bin/docker version --format {{.Server.Version}}": {out: "28.2.2\n"},
			"/usr/bin/podman --version":                            {out: "podman version 4.3.1\n"},
		},
	}
}

// macOS turns the good Linux host into a good Apple Silicon Mac.
func macOS(h *fakeHost) {
	h.goos = "darwin"
	h.cmds["uname -m"] = fakeRun{out: "arm64\n"}
	delete(h.modes, "/dev/kvm")
	h.globs = map[string][]string{"/home/u/.tools/msb-0.7.2/package/lib/libkrunfw*.dylib": {"/home/u/.tools/msb-0.7.2/package/lib/libkrunfw.5.dylib"}}
}

func check(t *testing.T, r DoctorReport, name string) Check {
	t.Helper()
	for _, c := range r.Checks {
		if c.Name == name {
			return c
		}
	}
	t.Fatalf("no check %q in %+v", name, r.Checks)
	return Check{}
}

func TestDoctorAllGood(t *testing.T) {
	h := goodLinux()
	r := Doctor(context.Background(), h)
	if !r.OK() {
		t.Fatalf("OK() = false, blocking %v", r.Blocking())
	}
	want := []struct {
		name, detail string
	}{
		{CheckMSB, fakeMSB},
		{CheckMSBVersion, "0.7.8 (strict hostname checking, readable 403 denials, secrets in named headers only)"},
		{CheckLibkrunfw, fakeLib},
		{CheckKVM, "present and writable"},
		{CheckVirt, "Intel VT-x (vmx)"},
		{CheckBuilder, "docker 28.2.2, daemon reachable"},
		{CheckDisk, "50.0 GiB free in /home/u/proj"},
		{CheckMSBDoctor, "no problems"},
	}
	if len(r.Checks) != len(want) {
		t.Fatalf("%d checks, want %d: %+v", len(r.Checks), len(want), r.Checks)
	}
	for i, w := range want {
		c := r.Checks[i]
		if c.Name != w.name || c.Status != StatusOK || c.Detail != w.detail || c.Fix != "" {
			t.Errorf("check %d = %+v, want ok %q %q", i, c, w.name, w.detail)
		}
	}
}

func TestDoctorFailures(t *testing.T) {
	tests := []struct {
		name     string
		edit     func(h *fakeHost)
		check    string
		status   Status
		detail   string // substring
		fix      string // substring
		blocking bool   // the report is not OK
	}{
		{"msb missing", func(h *fakeHost) { delete(h.paths, "msb") },
			CheckMSB, StatusFail, "not found on PATH", "npm pack @superradcompany/microsandbox-linux-x64-gnu@0.7.2", true},
		{"msb missing on macOS", func(h *fakeHost) {
			delete(h.paths, "msb")
			h.goos = "darwin"
			h.cmds["uname -m"] = fakeRun{out: "arm64\n"}
		}, CheckMSB, StatusFail, "not found", "Apple Silicon", true},
		{"msb newer than the table", func(h *fakeHost) { h.cmds[fakeMSB+" --version"] = fakeRun{out: "msb 0.7.11\n"} },
			CheckMSBVersion, StatusWarn, "0.7.11: newer than asb's table of msb releases knows (up to 0.7.8); asb writes for 0.7.8's behaviour", "update asb", false},
		{"msb 0.7.2: microsandbox's own reason to upgrade", func(h *fakeHost) { h.cmds[fakeMSB+" --version"] = fakeRun{out: "msb 0.7.2\n"} },
			CheckMSBVersion, StatusWarn, "Earlier v0.7 releases have compatibility gaps addressed in v0.7.3", "install msb 0.7.3 or later", false},
		{"msb 0.6", func(h *fakeHost) { h.cmds[fakeMSB+" --version"] = fakeRun{out: "msb 0.6.18\n"} },
			CheckMSBVersion, StatusFail, "0.6.18: asb supports 0.7.2 and later 0.7 releases", "install msb 0.7.3 or later", true},
		{"msb broken", func(h *fakeHost) {
			h.cmds[fakeMSB+" --version"] = fakeRun{errOut: "error while loading shared libraries: libkrunfw.so.5", fail: true}
		}, CheckMSBVersion, StatusFail, "libkrunfw.so.5", "symlink, not a copy", true},
		{"libkrunfw missing (a copied msb)", func(h *fakeHost) { delete(h.links, fakeMSB); h.globs = nil },
			CheckLibkrunfw, StatusFail, "no libkrunfw.so.* in /home/u/.tools/lib", "symlink bin/msb", true},
		{"no /dev/kvm", func(h *fakeHost) { delete(h.modes, "/dev/kvm") },
			CheckKVM, StatusFail, "missing", "modprobe kvm_intel", true},
		{"/dev/kvm a regular file", func(h *fakeHost) { h.modes["/dev/kvm"] = 0o644 },
			CheckKVM, StatusFail, "not a device", "character device", true},
		{"/dev/kvm not writable", func(h *fakeHost) { h.noRW = map[string]bool{"/dev/kvm": true} },
			CheckKVM, StatusFail, "not writable", "kvm group", true},
		{"/dev/kvm on macOS", macOS,
			CheckKVM, StatusSkip, "not used on darwin", "", false},
		{"no vmx nor svm", func(h *fakeHost) {
			h.files["/proc/cpuinfo"] = "processor\t: 0\nflags\t\t: fpu vme de pse sse hypervisor\n"
		}, CheckVirt, StatusFail, "missing: no vmx or svm flag", "BIOS", true},
		{"vmx only in another field", func(h *fakeHost) {
			h.files["/proc/cpuinfo"] = "model name\t: vmx-lookalike\nflags\t\t: fpu sse\nvmx flags\t: ept\n"
		}, CheckVirt, StatusFail, "missing", "nested virtualization", true},
		{"AMD", func(h *fakeHost) { h.files["/proc/cpuinfo"] = "flags\t\t: fpu svm sse\n" },
			CheckVirt, StatusOK, "AMD-V (svm)", "", false},
		{"no cpuinfo", func(h *fakeHost) { delete(h.files, "/proc/cpuinfo") },
			CheckVirt, StatusFail, "cannot read /proc/cpuinfo", "VT-x", true},
		{"Apple Silicon", macOS,
			CheckVirt, StatusOK, "Apple Silicon", "", false},
		{"Intel Mac", func(h *fakeHost) { h.goos = "darwin"; h.cmds["uname -m"] = fakeRun{out: "x86_64\n"} },
			CheckVirt, StatusFail, "this Mac is x86_64", "Apple Silicon Mac", true},
		{"Windows", func(h *fakeHost) { h.goos = "windows" },
			CheckVirt, StatusFail, "does not run on windows", "Linux with KVM", true},
		{"docker daemon down, podman there", func(h *fakeHost) {
			h.cmds["/usr/bin/docker version --format {{.Server.Version}}"] = fakeRun{errOut: "Cannot connect to the Docker daemon at unix:///var/run/docker.sock. Is the docker daemon running?\n", fail: true}
		}, CheckBuilder, StatusOK, "podman version 4.3.1; docker's daemon is not reachable: Cannot connect to the Docker daemon", "", false},
		{"docker daemon down, no podman", func(h *fakeHost) {
			delete(h.paths, "podman")
			h.cmds["/usr/bin/docker version --format {{.Server.Version}}"] = fakeRun{errOut: "Cannot connect to the Docker daemon\n", fail: true}
		}, CheckBuilder, StatusFail, "not reachable: Cannot connect", "start the docker daemon", true},
		{"podman only", func(h *fakeHost) { delete(h.paths, "docker") },
			CheckBuilder, StatusOK, "podman version 4.3.1", "", false},
		{"podman broken", func(h *fakeHost) {
			delete(h.paths, "docker")
			h.cmds["/usr/bin/podman --version"] = fakeRun{errOut: "podman: cannot open libgpgme\n", fail: true}
		}, CheckBuilder, StatusFail, "podman --version failed: podman: cannot open libgpgme", "reinstall podman, or install docker", true},
		{"docker down, podman broken", func(h *fakeHost) {
			h.cmds["/usr/bin/docker version --format {{.Server.Version}}"] = fakeRun{errOut: "Cannot connect\n", fail: true}
			h.cmds["/usr/bin/podman --version"] = fakeRun{fail: true}
		}, CheckBuilder, StatusFail, "not reachable: Cannot connect; podman --version failed: exit status 1", "start the docker daemon", true},
		{"no builder", func(h *fakeHost) { delete(h.paths, "docker"); delete(h.paths, "podman") },
			CheckBuilder, StatusFail, "neither docker nor podman found", "apt-get install podman", true},
		{"ASB_BUILDER=podman with docker there", func(h *fakeHost) { h.env["ASB_BUILDER"] = "podman --storage-driver vfs" },
			CheckBuilder, StatusOK, "podman version 4.3.1 ($ASB_BUILDER)", "", false},
		{"ASB_BUILDER names a missing tool", func(h *fakeHost) { h.env["ASB_BUILDER"] = "nerdctl" },
			CheckBuilder, StatusFail, "nerdctl not found ($ASB_BUILDER)", "install nerdctl, or unset ASB_BUILDER", true},
		{"ASB_BUILDER=docker, daemon down", func(h *fakeHost) {
			h.env["ASB_BUILDER"] = "docker"
			h.cmds["/usr/bin/docker version --format {{.Server.Version}}"] = fakeRun{errOut: "Cannot connect\n", fail: true}
		}, CheckBuilder, StatusFail, "not reachable: Cannot connect ($ASB_BUILDER)", "start the docker daemon", true},
		{"low disk", func(h *fakeHost) { h.free = 3 << 30 },
			CheckDisk, StatusWarn, "3.0 GiB free in /home/u/proj", "at least 10 GiB", false},
		{"disk unknown", func(h *fakeHost) { h.freeErr = errors.New("statfs: denied") },
			CheckDisk, StatusWarn, "statfs: denied", "", false},
		{"msb doctor unhappy", func(h *fakeHost) {
			h.cmds[fakeMSB+" doctor"] = fakeRun{errOut: "warn: reflink\nerror: CPU virtualization is not available\n  → no vmx\nerror: /dev/kvm is not present\n", fail: true}
		}, CheckMSBDoctor, StatusWarn, "reports: CPU virtualization is not available; /dev/kvm is not present", "msb doctor --fix", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := goodLinux()
			tt.edit(h)
			r := Doctor(context.Background(), h)
			c := check(t, r, tt.check)
			if c.Status != tt.status || !strings.Contains(c.Detail, tt.detail) || !strings.Contains(c.Fix, tt.fix) {
				t.Errorf("%s = %+v\nwant status %s, detail ~%q, fix ~%q", tt.check, c, tt.status, tt.detail, tt.fix)
			}
			if (c.Status == StatusFail) != (c.Fix != "") && c.Status != StatusWarn {
				t.Errorf("%s: a failed check needs a fix, a passing one none: %+v", tt.check, c)
			}
			if r.OK() == tt.blocking {
				t.Errorf("OK() = %v, want %v (blocking: %v)", r.OK(), !tt.blocking, r.Blocking())
			}
			if tt.blocking && !slices.Contains(r.Blocking(), tt.check) {
				t.Errorf("Blocking() = %v, want it to name %s", r.Blocking(), tt.check)
			}
		})
	}
}

func TestDoctorMSBMissingSkipsItsChecks(t *testing.T) {
	h := goodLinux()
	delete(h.paths, "msb")
	r := Doctor(context.Background(), h)
	for _, name := range []string{CheckMSBVersion, CheckLibkrunfw, CheckMSBDoctor} {
		if c := check(t, r, name); c.Status != StatusSkip {
			t.Errorf("%s = %+v, want skipped", name, c)
		}
	}
	for _, cmd := range h.ran {
		if strings.Contains(cmd, "msb") {
			t.Errorf("ran %q though msb is missing", cmd)
		}
	}
	if got := r.Blocking(); !slices.Equal(got, []string{CheckMSB}) {
		t.Errorf("Blocking() = %v, want [msb]", got)
	}
}

func TestVirtFlag(t *testing.T) {
	for in, want := range map[string]string{
		"flags\t: a vmx b":            "vmx",
		"flags\t: a svm":              "svm",
		"flags\t: vmxx svm_lock":      "",
		"vmx flags\t: vnmi\nflags: a": "",
		"":                            "",
	} {
		if got := virtFlag([]byte(in)); got != want {
			t.Errorf("virtFlag(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestRealDoctorHost runs the checks on this machine: the virtualization line
// says missing exactly when /proc/cpuinfo has neither vmx nor svm.
func TestRealDoctorHost(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the cpuinfo cross-check is Linux-only")
	}
	start := time.Now()
	r := Doctor(context.Background(), SystemHost{})
	t.Logf("asb doctor checks: %v", time.Since(start).Round(time.Millisecond))
	raw, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		t.Fatal(err)
	}
	hasVirt := false
	for _, line := range strings.Split(string(raw), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "flags" {
			f := " " + v + " "
			hasVirt = hasVirt || strings.Contains(f, " vmx ") || strings.Contains(f, " svm ")
		}
	}
	c := check(t, r, CheckVirt)
	if missing := strings.HasPrefix(c.Detail, "missing"); missing == hasVirt {
		t.Errorf("cpuinfo has vmx/svm: %v, but the doctor says %+v", hasVirt, c)
	}
	if !hasVirt && (c.Status != StatusFail || r.OK()) {
		t.Errorf("no virtualization must fail the report: %+v, OK=%v", c, r.OK())
	}
	_, kvmErr := os.Stat("/dev/kvm")
	if k := check(t, r, CheckKVM); (kvmErr != nil) != (k.Status == StatusFail) {
		t.Errorf("/dev/kvm stat error %v, but the doctor says %+v", kvmErr, k)
	}
	for _, c := range r.Checks {
		t.Logf("%-20s %-4s %s", c.Name, c.Status, c.Detail)
	}
}
