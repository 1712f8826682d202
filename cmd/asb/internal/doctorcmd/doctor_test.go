package doctorcmd

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/agents-sandbox/asb/cmd/asb/internal/cmdutil"
	"github.com/agents-sandbox/asb/host"
)

// fakeHost is a fake host.Host: a Linux box with msb, docker and podman;
// virt and kvm say whether the CPU flag and /dev/kvm are there.
type fakeHost struct {
	virt, kvm bool
	skip      bool // ASB_SKIP_HOST_CHECK=1
}

func (h fakeHost) GOOS() string   { return "linux" }
func (h fakeHost) GOARCH() string { return "amd64" }
func (h fakeHost) LookPath(n string) (string, error) {
	switch n {
	case "msb", "docker", "podman":
		return "/opt/bin/" + n, nil
	}
	return "", errors.New("not found")
}
func (h fakeHost) EvalSymlinks(p string) (string, error) { return p, nil }
func (h fakeHost) Glob(string) ([]string, error)         { return []string{"/opt/lib/libkrunfw.so.5.6.1"}, nil }
func (h fakeHost) Stat(p string) (fs.FileInfo, error) {
	if p == "/dev/kvm" && h.kvm {
		return fstest.MapFS{"kvm": {Mode: fs.ModeDevice | fs.ModeCharDevice | 0o666}}.Stat("kvm")
	}
	return nil, fs.ErrNotExist
}
func (h fakeHost) OpenRW(string) error { return nil }
func (h fakeHost) ReadFile(string) ([]byte, error) {
	if h.virt {
		return []byte("flags\t: fpu vmx\n"), nil
	}
	return []byte("flags\t: fpu\n"), nil
}
func (h fakeHost) Run(_ context.Context, name string, args ...string) ([]byte, []byte, error) {
	switch strings.Join(append([]string{name}, args...), " ") {
	case "/opt/bin/msb --version":
		return []byte("msb 0.7.2\n"), nil, nil
	case "/opt/bin/msb doctor":
		if h.virt && h.kvm {
			return nil, nil, nil
		}
		return nil, []byte("error: CPU virtualization is not available\n"), errors.New("exit status 1")
	case "/opt/bin/docker version --format {{.Server.Version}}":
		return []byte("20.10.24\n"), nil, nil
	}
	return nil, nil, errors.New("exit status 1")
}
func (h fakeHost) Getenv(k string) string {
	if k == host.SkipEnv && h.skip {
		return "1"
	}
	return ""
}
func (h fakeHost) Getwd() (string, error)          { return "/home/u/proj", nil }
func (h fakeHost) FreeDisk(string) (uint64, error) { return 5 << 30, nil }

func run(t *testing.T, h host.Host, format string) (string, error) {
	t.Helper()
	var out bytes.Buffer
	err := Run(context.Background(), &Options{IO: &cmdutil.IOStreams{Out: &out, ErrOut: &out}, Host: h, Format: format})
	return out.String(), err
}

func TestTableNoVirtualization(t *testing.T) {
	out, err := run(t, fakeHost{}, "table")
	if cmdutil.ExitCode(err) != 1 {
		t.Errorf("exit code %d (err %v), want 1", cmdutil.ExitCode(err), err)
	}
	want := `✓ msb                 /opt/bin/msb
! msb version         0.7.2: supported; microsandbox's v0.7 migration guide: "Use v0.7.3 or a later compatible patch release. Earlier v0.7 releases have compatibility gaps addressed in v0.7.3."
                      fix: install msb 0.7.3 or later (the newest 0.7 release)
✓ libkrunfw           /opt/lib/libkrunfw.so.5.6.1
✗ /dev/kvm            missing
                      fix: load the KVM module (modprobe kvm_intel or kvm_amd) on a machine with CPU virtualization; in a container or CI job the host must pass /dev/kvm through; if this host can boot microVMs all the same, set ASB_SKIP_HOST_CHECK=1 to skip asb's check
✗ CPU virtualization  missing: no vmx or svm flag in /proc/cpuinfo, so microVMs cannot boot here
                      fix: enable virtualization (Intel VT-x / AMD-V) in the BIOS or UEFI; inside a VM, turn on nested virtualization on its host, or use a machine that has it; if this host can boot microVMs all the same, set ASB_SKIP_HOST_CHECK=1 to skip asb's check
✓ image builder       docker 20.10.24, daemon reachable
! free disk           5.0 GiB free in /home/u/proj
                      fix: images, microsandbox's layer cache and the VM's disks need room: free up space (at least 10 GiB) or work on a bigger disk
! msb doctor          reports: CPU virtualization is not available
                      fix: run ` + "`msb doctor`" + ` for its details (and ` + "`msb doctor --fix`" + ` for the fixes it knows)

The agent cannot run on this machine: /dev/kvm, CPU virtualization.
`
	if out != want {
		t.Errorf("output:\n%s\nwant:\n%s", out, want)
	}
}

func TestTableAllGood(t *testing.T) {
	out, err := run(t, fakeHost{virt: true, kvm: true}, "table")
	if err != nil {
		t.Errorf("err = %v, want nil (warnings do not fail)", err)
	}
	if !strings.Contains(out, "✓ CPU virtualization  Intel VT-x (vmx)\n") || !strings.Contains(out, "✓ /dev/kvm            present and writable\n") ||
		!strings.HasSuffix(out, "\nThis machine can run the agent.\n") || strings.Contains(out, "✗") {
		t.Errorf("output:\n%s", out)
	}
}

func TestJSON(t *testing.T) {
	out, err := run(t, fakeHost{kvm: true}, "json")
	if cmdutil.ExitCode(err) != 1 {
		t.Errorf("exit code %d, want 1", cmdutil.ExitCode(err))
	}
	var got struct {
		OK       bool     `json:"ok"`
		Blocking []string `json:"blocking"`
		Checks   []struct {
			Name, Status, Detail, Fix string
			Blocking                  bool
		} `json:"checks"`
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	if got.OK || len(got.Blocking) != 1 || got.Blocking[0] != host.CheckVirt || len(got.Checks) != 8 {
		t.Errorf("report = %+v", got)
	}
	for _, c := range got.Checks {
		if c.Name == host.CheckVirt && (c.Status != "fail" || !c.Blocking || !strings.Contains(c.Fix, "BIOS")) {
			t.Errorf("virtualization = %+v", c)
		}
	}
	good, err := run(t, fakeHost{kvm: true, virt: true}, "json")
	if err != nil || !strings.Contains(good, `"ok": true`) || !strings.Contains(good, `"blocking": []`) {
		t.Errorf("good host: err %v\n%s", err, good)
	}
}

func TestFormatFlag(t *testing.T) {
	var out bytes.Buffer
	f := &cmdutil.Factory{IO: &cmdutil.IOStreams{Out: &out, ErrOut: &out}, Host: host.SystemHost{}}
	var got *Options
	cmd := newCmd(f, func(_ context.Context, o *Options) error { got = o; return nil })
	cmd.SetArgs([]string{"--format", "json"})
	if err := cmd.Execute(); err != nil || got == nil || got.Format != "json" {
		t.Fatalf("--format json: err %v, opts %+v", err, got)
	}
	if _, ok := got.Host.(host.SystemHost); !ok {
		t.Errorf("the command must look at the factory's host, got %T", got.Host)
	}
	cmd = newCmd(f, func(context.Context, *Options) error { t.Error("ran with a bad --format"); return nil })
	cmd.SetArgs([]string{"--format", "yaml"})
	cmd.SetOut(&out)
	cmd.SetErr(&out)
	err := cmd.Execute()
	var ue *cmdutil.UsageError
	if !errors.As(err, &ue) || !strings.Contains(err.Error(), `--format "yaml"`) {
		t.Errorf("--format yaml: %v, want a usage error", err)
	}
}

// TestRealDoctorCommand runs `asb doctor` on this machine: on a Linux host
// without vmx/svm it must say so plainly and exit 1.
func TestRealDoctorCommand(t *testing.T) {
	raw, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		t.Skip("no /proc/cpuinfo")
	}
	hasVirt := false
	for l := range strings.SplitSeq(string(raw), "\n") {
		if k, v, ok := strings.Cut(l, ":"); ok && strings.TrimSpace(k) == "flags" {
			v = " " + v + " "
			hasVirt = hasVirt || strings.Contains(v, " vmx ") || strings.Contains(v, " svm ")
		}
	}
	var out bytes.Buffer
	err = Run(context.Background(), &Options{IO: &cmdutil.IOStreams{Out: &out, ErrOut: &out}, Host: host.SystemHost{}, Format: "table"})
	t.Logf("asb doctor here:\n%s", out.String())
	line := ""
	for l := range strings.SplitSeq(out.String(), "\n") {
		if _, rest, ok := strings.Cut(l, " "); ok && strings.HasPrefix(rest, host.CheckVirt+" ") {
			line = l
		}
	}
	if missing := strings.HasPrefix(line, "✗ CPU virtualization  missing"); missing == hasVirt {
		t.Errorf("cpuinfo has vmx/svm: %v; the doctor's line: %q", hasVirt, line)
	}
	if !hasVirt && cmdutil.ExitCode(err) != 1 {
		t.Errorf("no virtualization: exit code %d, want 1", cmdutil.ExitCode(err))
	}
}

// TestBoot is the pre-boot check vm:create and vm:start run: silent on a
// host that can boot, doctor's reason and fix and exit 1 on one that cannot,
// and skipped (with a note) under ASB_SKIP_HOST_CHECK=1.
func TestBoot(t *testing.T) {
	boot := func(h fakeHost, format string) (string, string, error) {
		var out, errOut bytes.Buffer
		err := Run(context.Background(), &Options{IO: &cmdutil.IOStreams{Out: &out, ErrOut: &errOut}, Host: h, Format: format, Boot: true})
		return out.String(), errOut.String(), err
	}
	out, errOut, err := boot(fakeHost{kvm: true, virt: true}, "table")
	if err != nil || out != "" || errOut != "" {
		t.Errorf("a host that can boot: err %v, out %q, stderr %q; want silence", err, out, errOut)
	}
	out, errOut, err = boot(fakeHost{kvm: true}, "table")
	if cmdutil.ExitCode(err) != 1 || out != "" {
		t.Fatalf("no CPU virtualization: exit %d, out %q", cmdutil.ExitCode(err), out)
	}
	doctor, _ := run(t, fakeHost{kvm: true}, "table")
	for _, want := range []string{
		"✗ CPU virtualization  missing: no vmx or svm flag",
		"fix: enable virtualization (Intel VT-x / AMD-V)",
		"set ASB_SKIP_HOST_CHECK=1",
		"This host cannot boot the agent's microVM (CPU virtualization): nothing was started.",
		"asb task image:load",
	} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errOut)
		}
	}
	// Doctor's own lines, word for word.
	for _, l := range strings.Split(errOut, "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), "✗") || strings.HasPrefix(strings.TrimSpace(l), "fix:") {
			if !strings.Contains(doctor, strings.TrimSpace(l)) {
				t.Errorf("--boot says %q, which asb doctor does not", l)
			}
		}
	}
	if strings.Contains(errOut, "/dev/kvm") {
		t.Errorf("--boot lists a check that passed:\n%s", errOut)
	}
	out, errOut, err = boot(fakeHost{skip: true}, "table")
	if err != nil || out != "" || !strings.Contains(errOut, "ASB_SKIP_HOST_CHECK=1") {
		t.Errorf("skipped: err %v, out %q, stderr %q", err, out, errOut)
	}
	out, _, err = boot(fakeHost{}, "json")
	var got struct {
		OK      bool         `json:"ok"`
		Skipped bool         `json:"skipped"`
		Checks  []host.Check `json:"checks"`
	}
	if jerr := json.Unmarshal([]byte(out), &got); jerr != nil || cmdutil.ExitCode(err) != 1 || got.OK || len(got.Checks) != 2 {
		t.Errorf("--boot --format json: exit %d, %v\n%s", cmdutil.ExitCode(err), jerr, out)
	}
}

// TestBootDiskLimits: in an outer folder, --boot also stops a boot whose
// disk limits do not fit the free disk (the fake host has 5 GiB free).
func TestBootDiskLimits(t *testing.T) {
	boot := func(needs []host.DiskNeed, format string) (string, string, error) {
		var out, errOut bytes.Buffer
		err := Run(context.Background(), &Options{IO: &cmdutil.IOStreams{Out: &out, ErrOut: &errOut}, Host: fakeHost{kvm: true, virt: true},
			Format: format, Boot: true, Needs: func() []host.DiskNeed { return needs }})
		return out.String(), errOut.String(), err
	}
	_, errOut, err := boot([]host.DiskNeed{{Path: "/srv/msb", Bytes: 4 << 30, What: "root-disk 4G"}}, "table")
	if err != nil || errOut != "" {
		t.Errorf("limits that fit: err %v, stderr %q; want silence", err, errOut)
	}
	_, errOut, err = boot([]host.DiskNeed{{Path: "/srv/msb", Bytes: 12 << 30, What: "root-disk 4G + container-disk 8G"}}, "table")
	for _, want := range []string{"✗ disk for the limits", "root-disk 4G + container-disk 8G may take 12.0 GiB of the 5.0 GiB free in /srv/msb",
		"asb limit set", "This host cannot boot the agent's microVM (disk for the limits)"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errOut)
		}
	}
	if cmdutil.ExitCode(err) != 1 {
		t.Errorf("limits that do not fit: exit %d, want 1", cmdutil.ExitCode(err))
	}
}
