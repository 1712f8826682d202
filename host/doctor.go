package host

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"time"
)

// MSBVersion is the microsandbox release asb's outer folders are written for.
const MSBVersion = "0.7.2"

// MSBInstallHint says how to install msb on Linux x86-64.
const MSBInstallHint = "npm pack @superradcompany/microsandbox-linux-x64-gnu@" + MSBVersion +
	" && tar xzf superradcompany-microsandbox-linux-x64-gnu-" + MSBVersion + ".tgz, then put a symlink to" +
	" package/bin/msb on PATH (a copy does not work: msb finds ../lib/libkrunfw.so.* beside itself);" +
	" in asb's repository `make tools` does all that"

// Status is the outcome of one check.
type Status string

// Outcomes of a check.
const (
	StatusOK   Status = "ok"
	StatusWarn Status = "warn"
	StatusFail Status = "fail"
	StatusSkip Status = "skip" // not checked (an earlier check failed, or not relevant here)
)

// Check is one line of the doctor's report.
type Check struct {
	Name   string `json:"name"`
	Status Status `json:"status"`
	Detail string `json:"detail"`
	Fix    string `json:"fix,omitempty"`
	// Blocking: when this check fails, the agent cannot run.
	Blocking bool `json:"blocking"`
}

// DoctorReport is every check, in order.
type DoctorReport struct {
	Checks []Check `json:"checks"`
}

// OK reports whether the agent can run: no blocking check failed.
func (r DoctorReport) OK() bool {
	return len(r.Blocking()) == 0
}

// Blocking returns the names of the failed blocking checks.
func (r DoctorReport) Blocking() []string {
	var names []string
	for _, c := range r.Checks {
		if c.Blocking && c.Status == StatusFail {
			names = append(names, c.Name)
		}
	}
	return names
}

// Names of the checks, as printed.
const (
	CheckMSB        = "msb"
	CheckMSBVersion = "msb version"
	CheckLibkrunfw  = "libkrunfw"
	CheckKVM        = "/dev/kvm"
	CheckVirt       = "CPU virtualization"
	CheckBuilder    = "image builder"
	CheckDisk       = "free disk"
	CheckMSBDoctor  = "msb doctor"
)

// MinFreeDisk is the free space under which the doctor warns: an image,
// its copy in microsandbox's cache and the VM's disks need room.
const MinFreeDisk = 10 << 30

// doctorTimeout bounds each command the doctor runs (a hung docker daemon
// must not hang asb doctor).
const doctorTimeout = 10 * time.Second

// Doctor checks whether this host can run the agent's VM: msb and its
// libkrunfw, KVM and CPU virtualization, an image builder, free disk, and
// msb's own doctor.
func Doctor(ctx context.Context, h Host) DoctorReport {
	var r DoctorReport
	add := func(c Check) { r.Checks = append(r.Checks, c) }

	msb, msbCheck := checkMSB(h)
	add(msbCheck)
	if msb != "" {
		add(checkMSBVersion(ctx, h, msb))
		add(checkLibkrunfw(h, msb))
	} else {
		add(Check{Name: CheckMSBVersion, Status: StatusSkip, Detail: "msb not found"})
		add(Check{Name: CheckLibkrunfw, Status: StatusSkip, Detail: "msb not found"})
	}
	for _, c := range BootChecks(ctx, h) {
		add(c)
	}
	add(checkBuilder(ctx, h))
	add(checkDisk(h))
	if msb != "" {
		add(checkMSBDoctor(ctx, h, msb))
	} else {
		add(Check{Name: CheckMSBDoctor, Status: StatusSkip, Detail: "msb not found"})
	}
	return r
}

func checkMSB(h Host) (string, Check) {
	c := Check{Name: CheckMSB, Blocking: true}
	p, err := h.LookPath("msb")
	if err != nil {
		c.Status, c.Detail = StatusFail, "not found on PATH"
		c.Fix = "install msb " + MSBVersion + ": " + MSBInstallHint
		if h.GOOS() == "darwin" {
			c.Fix = "install msb " + MSBVersion + " (microsandbox's macOS build for Apple Silicon) and put it on PATH"
		}
		return "", c
	}
	c.Status, c.Detail = StatusOK, p
	return p, c
}

func checkMSBVersion(ctx context.Context, h Host, msb string) Check {
	c := Check{Name: CheckMSBVersion}
	ctx, cancel := context.WithTimeout(ctx, doctorTimeout)
	defer cancel()
	out, stderr, err := h.Run(ctx, msb, "--version")
	got := strings.TrimSpace(string(out))
	if err != nil {
		c.Status, c.Blocking = StatusFail, true
		c.Detail = fmt.Sprintf("%s --version failed: %s", msb, firstLine(string(stderr), err))
		c.Fix = "msb must sit next to ../lib/libkrunfw.so.* (use a symlink, not a copy); reinstall: " + MSBInstallHint
		return c
	}
	caps, err := CapsOf(got)
	if err != nil {
		c.Status, c.Detail = StatusWarn, err.Error()
		return c
	}
	rememberMSB(h, got) // what validate, which runs no msb, names
	return versionCheck(c, caps)
}

// versionCheck judges a release by the capability table: below 0.7.2 not
// supported, 0.7.2 with microsandbox's own reason to upgrade, newer than
// the table with the row asb assumes.
func versionCheck(c Check, caps MSBCaps) Check {
	upgrade := "install msb " + RecommendedMSB + " or later (the newest 0.7 release)"
	switch {
	case caps.Older:
		c.Status, c.Blocking = StatusFail, true
		c.Detail = fmt.Sprintf("%s: asb supports %s and later 0.7 releases", caps.Version, MinMSB)
		c.Fix = upgrade
	case caps.Newer:
		c.Status = StatusWarn
		c.Detail = fmt.Sprintf("%s: newer than asb's table of msb releases knows (up to %s); asb writes for %s's behaviour", caps.Version, NewestKnownMSB, caps.Row)
		c.Fix = "update asb (go install github.com/agents-sandbox/asb/cmd/...@latest), or install msb " + NewestKnownMSB
	case !caps.StrictDefault:
		c.Status = StatusWarn
		c.Detail = fmt.Sprintf("%s: supported; %s", caps.Version, OldMSBReason)
		c.Fix = upgrade
	default:
		c.Status, c.Detail = StatusOK, fmt.Sprintf("%s (%s)", caps.Version, capsSummary(caps))
	}
	return c
}

// capsSummary names what this release adds that asb uses.
func capsSummary(c MSBCaps) string {
	parts := []string{"strict hostname checking"}
	if c.DenyResponse {
		parts = append(parts, "readable 403 denials")
	}
	if c.HeaderFields {
		parts = append(parts, "secrets in named headers only")
	}
	return strings.Join(parts, ", ")
}

func checkLibkrunfw(h Host, msb string) Check {
	c := Check{Name: CheckLibkrunfw, Blocking: true}
	real, err := h.EvalSymlinks(msb)
	if err != nil {
		real = msb
	}
	pattern := "libkrunfw.so.*"
	if h.GOOS() == "darwin" {
		pattern = "libkrunfw*.dylib"
	}
	lib := filepath.Join(filepath.Dir(filepath.Dir(real)), "lib")
	matches, _ := h.Glob(filepath.Join(lib, pattern))
	if len(matches) == 0 {
		c.Status = StatusFail
		c.Detail = fmt.Sprintf("no %s in %s (beside %s)", pattern, lib, real)
		c.Fix = "msb loads its VM firmware from ../lib next to its real path: keep bin/ and lib/ of the package together and symlink bin/msb onto PATH; " + MSBInstallHint
		return c
	}
	c.Status, c.Detail = StatusOK, matches[len(matches)-1]
	return c
}

// checkBuilder looks for a working image builder: $ASB_BUILDER when set,
// else a docker whose daemon answers, else podman. (Which one a task uses
// is DetectBuilder's choice; this says whether one can build at all.)
func checkBuilder(ctx context.Context, h Host) Check {
	c := Check{Name: CheckBuilder, Blocking: true}
	if env := strings.Fields(h.Getenv("ASB_BUILDER")); len(env) > 0 {
		detail, fix, ok := tryBuilder(ctx, h, env[0])
		c.Detail = detail + " ($ASB_BUILDER)"
		if !ok {
			c.Status, c.Fix = StatusFail, fix+", or unset ASB_BUILDER"
			return c
		}
		c.Status = StatusOK
		c.Detail += isolationNote(h, env[0])
		return c
	}
	dockerDetail, dockerFix, ok := tryBuilder(ctx, h, "docker")
	if ok {
		c.Status, c.Detail = StatusOK, dockerDetail
		return c
	}
	podmanDetail, podmanFix, ok := tryBuilder(ctx, h, "podman")
	_, noDocker := h.LookPath("docker")
	_, noPodman := h.LookPath("podman")
	if ok {
		c.Status, c.Detail = StatusOK, podmanDetail+isolationNote(h, "podman")
		if noDocker == nil {
			c.Detail += "; " + dockerDetail
		}
		return c
	}
	c.Status = StatusFail
	switch {
	case noDocker == nil && noPodman == nil:
		c.Detail, c.Fix = dockerDetail+"; "+podmanDetail, dockerFix+", or "+podmanFix
	case noDocker == nil:
		c.Detail, c.Fix = dockerDetail, dockerFix+", or install podman"
	case noPodman == nil:
		c.Detail, c.Fix = podmanDetail, podmanFix+", or install docker"
	default:
		c.Detail = "neither docker nor podman found"
		c.Fix = "install docker or podman (Debian: sudo apt-get install podman)"
	}
	return c
}

// isolationNote says how podman's builds run RUN steps here, when that is
// not its default (asb picks the isolation itself; ASB_BUILD_ARGS overrides).
func isolationNote(h Host, tool string) string {
	if filepath.Base(tool) != "podman" || h.Getenv("ASB_BUILD_ARGS") != "" {
		return ""
	}
	mi, _ := h.ReadFile("/proc/self/mountinfo")
	if args, why := PodmanBuildArgs(mi); args != "" {
		return "; builds use " + args + " (" + why + ")"
	}
	return ""
}

// tryBuilder checks one builder: docker must reach its daemon, any other
// tool must answer --version.
func tryBuilder(ctx context.Context, h Host, tool string) (detail, fix string, ok bool) {
	name := filepath.Base(tool)
	p, err := h.LookPath(tool)
	if err != nil {
		return name + " not found", "install " + name, false
	}
	ctx, cancel := context.WithTimeout(ctx, doctorTimeout)
	defer cancel()
	if name == "docker" {
		out, stderr, err := h.Run(ctx, p, "version", "--format", "{{.Server.Version}}")
		if v := strings.TrimSpace(string(out)); err == nil && v != "" {
			return "docker " + v + ", daemon reachable", "", true
		}
		return "docker's daemon is not reachable: " + firstLine(string(stderr), err),
			"start the docker daemon (sudo systemctl start docker) or point DOCKER_HOST at one", false
	}
	out, stderr, err := h.Run(ctx, p, "--version")
	if err != nil {
		return name + " --version failed: " + firstLine(string(stderr), err), "reinstall " + name, false
	}
	return strings.TrimSpace(string(out)), "", true
}

func checkDisk(h Host) Check {
	c := Check{Name: CheckDisk}
	wd, err := h.Getwd()
	if err != nil {
		c.Status, c.Detail = StatusWarn, "no working directory: "+err.Error()
		return c
	}
	free, err := h.FreeDisk(wd)
	if err != nil {
		c.Status, c.Detail = StatusWarn, "cannot tell the free space of "+wd+": "+err.Error()
		return c
	}
	c.Detail = fmt.Sprintf("%s free in %s", humanBytes(free), wd)
	if free < MinFreeDisk {
		c.Status = StatusWarn
		c.Fix = "images, microsandbox's layer cache and the VM's disks need room: free up space (at least 10 GiB) or work on a bigger disk"
		return c
	}
	c.Status = StatusOK
	return c
}

func checkMSBDoctor(ctx context.Context, h Host, msb string) Check {
	c := Check{Name: CheckMSBDoctor}
	ctx, cancel := context.WithTimeout(ctx, doctorTimeout)
	defer cancel()
	_, stderr, err := h.Run(ctx, msb, "doctor")
	if err == nil {
		c.Status, c.Detail = StatusOK, "no problems"
		return c
	}
	var errs []string
	for line := range strings.SplitSeq(string(stderr), "\n") {
		if msg, ok := strings.CutPrefix(strings.TrimSpace(line), "error: "); ok {
			errs = append(errs, msg)
		}
	}
	c.Status = StatusWarn
	if len(errs) == 0 {
		c.Detail = "failed: " + firstLine(string(stderr), err)
	} else {
		c.Detail = "reports: " + strings.Join(errs, "; ")
	}
	c.Fix = "run `msb doctor` for its details (and `msb doctor --fix` for the fixes it knows)"
	return c
}
