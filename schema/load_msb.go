package schema

import (
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Checks msb 0.7.2 makes on values while reading sandbox.yaml, found by
// feeding its parser generated files (e2e/differential_real_test.go).

// nonEmpty reads a string msb rejects when empty (hostname, shell).
func (l *loader) nonEmpty(n *yaml.Node, field string) (string, bool) {
	s, ok := l.str(n, field)
	if ok && s == "" {
		l.errf(n, field, "give it a value, or remove the key", "%s is empty; msb rejects an empty %s", field, field)
		return "", false
	}
	return s, ok
}

// env reads the env map: msb keeps the MSB_ prefix for itself.
func (l *loader) env(n *yaml.Node, field string) map[string]string {
	out := l.strMap(n, field)
	for name := range out {
		if strings.HasPrefix(name, "MSB_") {
			l.errf(l.at[field+"."+name], field+"."+name, "rename it: MSB_ is msb's (its secret placeholders are MSB_<NAME>)",
				"%s.%s uses the reserved MSB_ prefix; msb rejects it", field, name)
			delete(out, name)
		}
	}
	return out
}

// guestDotDot reports a guest path with a .. component, which msb rejects.
func guestDotDot(p string) bool {
	for part := range strings.SplitSeq(p, "/") {
		if part == ".." {
			return true
		}
	}
	return false
}

// The values msb 0.7.2 reads for a bind's (or a folder volume's) two
// passthrough policies, in both forms: stat_virtualization: / stat-virt=
// and host_permissions: / host-perms=.
var (
	StatVirtValues  = []string{"strict", "relaxed", "off"}
	HostPermsValues = []string{"private", "mirror"}
)

// virtiofsConflict is msb's one refusal of the two policies together: off
// has no overlay, so chmod already reaches the host inode and mirror would
// do nothing. It returns the reason, or "".
func virtiofsConflict(m Mount) string {
	if m.StatVirtualization == "off" && m.HostPermissions == "mirror" {
		return "stat_virtualization off cannot be combined with host_permissions mirror (off has no overlay: the VM's chmod already reaches the host file, so msb refuses mirror beside it)"
	}
	return ""
}

// shortOptions reads the options of a short mount ("ro,noexec", "uid=1000,
// gid=1000", "quota=1G", "host-perms=mirror") as msb does: each flag once,
// ro and rw together once, uid with gid. It returns the reason msb would
// refuse them, "" when it reads them.
func shortOptions(m *Mount, opts string) string {
	seen := map[string]bool{}
	for opt := range strings.SplitSeq(opts, ",") {
		if opt == "" {
			continue
		}
		key, val, kv := strings.Cut(opt, "=")
		name := key
		if key == "ro" || key == "rw" {
			name = "ro/rw"
		}
		if seen[name] {
			return "option " + name + " is given more than once"
		}
		seen[name] = true
		switch {
		case !kv && (key == "ro" || key == "rw"):
			m.Readonly = key == "ro"
		case !kv && key == "noexec":
			m.Noexec = true
		case !kv && key == "nosuid":
			m.Nosuid = true
		case !kv && key == "nodev":
			m.Nodev = true
		case kv && (key == "uid" || key == "gid"):
			if _, err := strconv.ParseUint(val, 10, 32); err != nil {
				return "option " + key + "=" + val + " is not an unsigned number"
			}
		case kv && key == "quota":
			if err := ParseMsbSize(val); err != nil {
				return "option quota: " + err.Error()
			}
		case kv && key == "stat-virt":
			if !slices.Contains(StatVirtValues, val) {
				return "option stat-virt=" + strconv.Quote(val) + " is not one of " + strings.Join(StatVirtValues, ", ")
			}
			m.StatVirtualization = val
		case kv && key == "host-perms":
			if !slices.Contains(HostPermsValues, val) {
				return "option host-perms=" + strconv.Quote(val) + " is not one of " + strings.Join(HostPermsValues, ", ")
			}
			m.HostPermissions = val
		default:
			return "option " + strconv.Quote(opt) + " is not valid here"
		}
	}
	if seen["uid"] != seen["gid"] {
		return "options uid and gid must be given together"
	}
	return virtiofsConflict(*m)
}
