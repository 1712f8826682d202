package schema

import (
	"fmt"
	"path"
	"slices"
	"strconv"
	"strings"
)

// The VM's limits: how long it runs and how much disk it takes. Each is
// one rule here (Limit), used by asb init's flags, asb limit set and asb
// validate alike; each lives where msb 0.7.2 reads it.

// Limit names, as asb limit and the init flags (--NAME) write them.
const (
	LimitIdleTimeout    = "idle-timeout"
	LimitMaxDuration    = "max-duration"
	LimitRootDisk       = "root-disk"
	LimitTmpSize        = "tmp-size"
	LimitWorkspaceQuota = "workspace-quota"
	LimitContainerDisk  = "container-disk"
)

// Where a limit is written.
const (
	InSandbox  = "sandbox.yaml"
	InTaskfile = "Taskfile.yml"
)

// DefaultIdleTimeout is the idle_timeout asb init writes. msb counts an
// attached exec session (asb task agent, vm:shell, vm:exec) as activity and
// never stops a VM while one is open, so the timer only runs once the last
// client has left: half an hour covers a meeting or lunch, and a VM
// forgotten at the end of the day gives its memory back by the evening. The
// next asb task agent starts it again (the home volume and the root disk
// stay; only tmpfs mounts are emptied).
const DefaultIdleTimeout = "30m"

// DefaultContainerDisk is the disk for containers run inside the VM
// (Taskfile.yml's CONTAINER_DISK, msb create --mount-owned …,size=).
const DefaultContainerDisk = "8G"

// DefaultRootDisk is msb 0.7.2's own root disk of an OCI image (managed,
// 4096 MiB, as msb inspect shows it); asb init writes it explicitly.
const DefaultRootDisk = "4G"

// LimitSpec is one limit: where it lives and what it bounds.
type LimitSpec struct {
	Name  string // e.g. root-disk
	Where string // InSandbox or InTaskfile
	Key   string // sandbox.yaml key, Taskfile var, or the mount it changes
	Kind  string // duration or size
	// MinMiB is the least size asb takes (0: any size msb reads).
	MinMiB int64
	What   string
}

// Limits is the table of limits, in the order asb limit ls shows them.
var Limits = []LimitSpec{
	{LimitIdleTimeout, InSandbox, "idle_timeout", "duration", 0,
		"stop the VM after this long with no client attached (msb never stops it while an exec session is open)"},
	{LimitMaxDuration, InSandbox, "max_duration", "duration", 0,
		"stop the VM this long after it started, even with a client attached"},
	{LimitRootDisk, InTaskfile, "ROOT_DISK", "size", 1024,
		"the VM's root disk (the image plus what is installed in it), on the host's disk under MSB_HOME"},
	{LimitTmpSize, InSandbox, "mounts[/tmp].tmpfs.size", "size", 16,
		"/tmp as a tmpfs of this size, in the VM's memory (unset: /tmp is on the root disk)"},
	{LimitWorkspaceQuota, InSandbox, "mounts[/workspace] quota=", "size", 16,
		"how much the VM may add to workspace/ on the host (unset: msb's default for a bind)"},
	{LimitContainerDisk, InTaskfile, "CONTAINER_DISK", "size", 256,
		"the disk for containers run inside the VM, on the host's disk under MSB_HOME (msb needs at least 256M)"},
}

// LimitNames are the names of the limits.
func LimitNames() []string {
	out := make([]string, len(Limits))
	for i, l := range Limits {
		out[i] = l.Name
	}
	return out
}

// LookupLimit returns the limit called name.
func LookupLimit(name string) (LimitSpec, *RuleError) {
	i := slices.IndexFunc(Limits, func(l LimitSpec) bool { return l.Name == name })
	if i < 0 {
		return LimitSpec{}, &RuleError{Value: name, Why: "is not a limit asb knows",
			Fix: "use one of " + strings.Join(LimitNames(), ", ")}
	}
	return Limits[i], nil
}

// Limit is the rule on a limit's value: a duration msb reads (whole
// seconds, minutes or hours: 90s, 30m, 12h) or a size msb reads (M or G),
// at least the limit's minimum.
func Limit(name, value string) *RuleError {
	l, re := LookupLimit(name)
	if re != nil {
		return re
	}
	if l.Kind == "duration" {
		return Duration(value)
	}
	if err := ParseMsbSize(value); err != nil {
		return &RuleError{Value: value, Why: "is not a size msb reads", Fix: "use a number with a unit M or G, e.g. 512M or 8G (msb reads no other unit)"}
	}
	mib, _ := ParseSize(value)
	if mib < l.MinMiB {
		return &RuleError{Value: value, Why: fmt.Sprintf("is %d MiB: too small for the %s", mib, strings.ReplaceAll(name, "-", " ")),
			Fix: fmt.Sprintf("give at least %dM", l.MinMiB)}
	}
	return nil
}

// Duration is the rule on msb's durations (idle_timeout, max_duration): a
// whole number with an optional unit s, m or h, above zero. msb 0.7.2
// reads "1h30m", "1d" or "1.5h" as errors; it takes "0", which asb refuses
// (not supported by asb, because a VM stopped at once is no VM).
func Duration(s string) *RuleError {
	fix := "use whole seconds, minutes or hours, e.g. 90s, 30m or 12h"
	if !msbDurationRe().MatchString(s) {
		return &RuleError{Value: s, Why: "is not a duration msb reads", Fix: fix}
	}
	if n, err := strconv.ParseUint(strings.TrimRight(s, "smh"), 10, 64); err != nil || n == 0 {
		return &RuleError{Value: s, Why: "is zero: not supported by asb, because the VM would stop as soon as it started", Fix: fix}
	}
	return nil
}

// DurationSeconds is a duration Duration accepts, in seconds.
func DurationSeconds(s string) int64 {
	mult := int64(1)
	switch {
	case strings.HasSuffix(s, "m"):
		mult = 60
	case strings.HasSuffix(s, "h"):
		mult = 3600
	}
	n, _ := strconv.ParseInt(strings.TrimRight(s, "smh"), 10, 64)
	return n * mult
}

// WorkspaceQuota returns the quota= option of a short mount's options
// ("rw,quota=8G" → "8G").
func WorkspaceQuota(opts string) string {
	for o := range strings.SplitSeq(opts, ",") {
		if v, ok := strings.CutPrefix(o, "quota="); ok {
			return v
		}
	}
	return ""
}

// TmpMount is where the tmp-size limit mounts its tmpfs.
const TmpMount = "/tmp"

// IsTmpLimit reports whether m is the tmp-size limit: a tmpfs at /tmp. It
// is the one mount allowed at /tmp: memory of the VM over the root disk's
// /tmp, which shows the VM nothing of the host.
func IsTmpLimit(m Mount) bool {
	return m.Kind == "tmpfs" && path.Clean(m.Target) == TmpMount
}
