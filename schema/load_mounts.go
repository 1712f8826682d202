package schema

import (
	"strings"

	"go.yaml.in/yaml/v3"
)

var MountKeys = []string{"bind", "named", "tmpfs", "disk", "target", "readonly", "noexec", "nosuid", "nodev", "create", "format", "fstype",
	"stat_virtualization", "host_permissions"}

// shortMountFlags are the options of the string form msb accepts.
var shortMountFlags = []string{"ro", "rw", "noexec", "nosuid", "nodev"}

func (l *loader) mount(n *yaml.Node, field string) (Mount, bool) {
	var m Mount
	if skip(n) {
		return m, false
	}
	if n.Kind == yaml.ScalarNode && n.ShortTag() == "!!str" {
		l.at[field] = n
		return l.shortMount(n, field)
	}
	if n.Kind != yaml.MappingNode {
		l.errf(n, field, "write \"./HOST:/GUEST[:ro]\" or a mapping {bind: ./HOST, target: /GUEST, readonly: true}",
			"%s must be a string or a mapping, not %s", field, describe(n))
		return m, false
	}
	good := true
	var kinds []string
	l.mapping(n, field, MountKeys, func(key string, _, v *yaml.Node) {
		if isNull(v) && (key == "bind" || key == "named" || key == "disk" || key == "tmpfs") {
			return
		}
		switch key {
		case "bind", "named", "disk", "tmpfs":
			kinds = append(kinds, key)
		}
		if !l.mountKey(&m, key, v, field+"."+key) {
			good = false
		}
	})
	if len(kinds) == 1 {
		m.Kind = kinds[0]
	}
	return m, good && l.mountShape(n, field, m, kinds)
}

// mountKey reads one key of a mount mapping into m.
func (l *loader) mountKey(m *Mount, key string, v *yaml.Node, f string) bool {
	var ok bool
	switch key {
	case "bind":
		m.Bind, ok = l.str(v, f)
	case "named":
		m.Named, ok = l.str(v, f)
	case "disk":
		m.Disk, ok = l.str(v, f)
	case "tmpfs":
		m.Tmpfs = &TmpfsOpts{}
		good := true
		ok = l.mapping(v, f, []string{"size"}, func(_ string, _, sv *yaml.Node) {
			if !isNull(sv) {
				var sok bool
				if m.Tmpfs.Size, sok = l.size(sv, f+".size"); !sok {
					good = false
				}
			}
		})
		ok = ok && good
	case "target":
		if m.Target, ok = l.str(v, f); ok {
			if !strings.HasPrefix(m.Target, "/") {
				l.errf(v, f, "use an absolute path in the VM, e.g. /workspace", "%s %q must be an absolute guest path", f, m.Target)
				ok = false
			} else if guestDotDot(m.Target) {
				l.errf(v, f, "write the guest path without ..", "%s %q contains .., which msb rejects", f, m.Target)
				ok = false
			} else if m.Target == "/" {
				l.errf(v, f, "mount below /, e.g. /workspace", "%s: msb cannot mount a volume at the guest root /", f)
				ok = false
			}
		}
	case "readonly":
		m.Readonly, ok = l.boolean(v, f)
	case "noexec":
		m.Noexec, ok = l.boolean(v, f)
	case "nosuid":
		m.Nosuid, ok = l.boolean(v, f)
	case "nodev":
		m.Nodev, ok = l.boolean(v, f)
	case "create":
		m.Create, ok = l.oneOf(v, f, "ensure-exists", "create")
	case "format":
		m.Format, ok = l.oneOf(v, f, "raw", "qcow2", "vmdk")
	case "stat_virtualization":
		m.StatVirtualization, ok = l.oneOf(v, f, StatVirtValues...)
	case "host_permissions":
		m.HostPermissions, ok = l.oneOf(v, f, HostPermsValues...)
	case "fstype":
		if m.Fstype, ok = l.str(v, f); ok && (m.Fstype == "" || strings.ContainsAny(m.Fstype, ",;:=")) {
			l.errf(v, f, "use a filesystem name such as ext4", "%s must be non-empty and free of , ; : =", f)
			ok = false
		}
	}
	return ok
}

// mountShape checks the keys of a mount mapping fit together: one kind of
// source, a target, and options only where that kind takes them.
func (l *loader) mountShape(n *yaml.Node, field string, m Mount, kinds []string) bool {
	switch {
	case len(kinds) != 1:
		l.errf(n, field, "give exactly one of bind: ./HOST, named: VOLUME, tmpfs: {size: 64M}, disk: ./IMAGE",
			"%s must contain exactly one of bind, named, tmpfs or disk", field)
	case m.Target == "":
		l.errf(n, field, "add target: /GUEST/PATH", "%s has no target", field)
	case m.Create != "" && kinds[0] != "named":
		l.errf(l.at[field+".create"], field+".create", "remove create, or use named: VOLUME", "%s.create is only valid for a named mount", field)
	case (m.StatVirtualization != "" || m.HostPermissions != "") && kinds[0] != "bind" && kinds[0] != "named":
		l.errf(n, field, "remove them, or use bind: or named:", "%s: stat_virtualization and host_permissions are only valid for a bind or named mount", field)
	case virtiofsConflict(m) != "":
		l.errf(n, field, "remove stat_virtualization: off (host_permissions: mirror keeps the VM's modes on the host)", "%s: %s", field, virtiofsConflict(m))
	case (m.Format != "" || m.Fstype != "") && kinds[0] != "disk":
		l.errf(n, field, "remove format and fstype, or use disk: ./IMAGE", "%s: format and fstype are only valid for a disk mount", field)
	default:
		return true
	}
	return false
}

func (l *loader) shortMount(n *yaml.Node, field string) (Mount, bool) {
	m := Mount{Short: n.Value}
	parts := strings.Split(n.Value, ":")
	fix := "write SOURCE:/GUEST[:ro], e.g. \"./src:/src:ro\""
	if len(parts) < 2 || len(parts) > 3 || parts[0] == "" || !strings.HasPrefix(parts[1], "/") {
		l.errf(n, field, fix, "mount %q is not SOURCE:/GUEST[:OPTIONS]", n.Value)
		return m, false
	}
	if parts[1] == "/" {
		l.errf(n, field, "mount below /, e.g. /workspace", "mount %q: msb cannot mount a volume at the guest root /", n.Value)
		return m, false
	}
	m.Target = parts[1]
	if guestDotDot(m.Target) {
		l.errf(n, field, "write the guest path without ..", "mount %q: the guest path contains .., which msb rejects", n.Value)
		return m, false
	}
	if len(parts) == 3 {
		if why := shortOptions(&m, parts[2]); why != "" {
			l.errf(n, field, "use the options "+strings.Join(shortMountFlags, ", ")+", uid=N,gid=N, quota=SIZE, stat-virt=strict|relaxed|off or host-perms=private|mirror, each once, separated by commas",
				"mount %q: %s", n.Value, why)
			return m, false
		}
	}
	// Like docker, a source that is not a path names a volume.
	if src := parts[0]; strings.HasPrefix(src, ".") || strings.HasPrefix(src, "/") || strings.HasPrefix(src, "~") || strings.Contains(src, "/") {
		m.Bind, m.Kind = src, "bind"
	} else {
		m.Named, m.Kind = src, "named"
	}
	return m, true
}

// NetworkKeys are the keys of the network object msb 0.7.2 accepts.
