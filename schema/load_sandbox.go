package schema

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

var (
	msbSizeRe     = regexp.MustCompile(`^[0-9]+(\.[0-9]+)?[MmGg]?$`)
	msbDurationRe = regexp.MustCompile(`^[0-9]+[smh]?$`)
)

// ParseMsbSize checks a size the way msb 0.7.2 reads memory and tmpfs sizes:
// a number, optionally with a fraction, and an optional unit M or G (MiB when
// there is none). msb rejects K, T, MB, GiB and the like.
func ParseMsbSize(s string) error {
	if !msbSizeRe.MatchString(s) {
		return fmt.Errorf("size %q is not a number with an optional unit M or G (e.g. 512M, 4G)", s)
	}
	if f, err := strconv.ParseFloat(strings.TrimRight(s, "MmGg"), 64); err != nil || f <= 0 {
		return fmt.Errorf("size %q must be greater than 0", s)
	}
	return nil
}

func (l *loader) size(n *yaml.Node, field string) (string, bool) {
	s, ok := l.str(n, field)
	if !ok {
		return "", false
	}
	if err := ParseMsbSize(s); err != nil {
		l.errf(n, field, "use a number with a unit M or G, e.g. 512M or 4G (msb does not accept K, T, MB or GiB)", "%s: %v", field, err)
		return "", false
	}
	return s, true
}

func (l *loader) duration(n *yaml.Node, field string) (string, bool) {
	s, ok := l.str(n, field)
	if !ok {
		return "", false
	}
	if !msbDurationRe.MatchString(s) {
		l.errf(n, field, "use whole seconds, minutes or hours: 90s, 30m, 2h", "%s %q is not a duration msb reads", field, s)
		return "", false
	}
	return s, true
}

func (l *loader) sandbox(data []byte) (*Sandbox, *yaml.Node) {
	top := l.parse(data)
	if top == nil {
		return nil, nil
	}
	if isNull(top) {
		l.errf(top, "", "write at least `image: NAME`, or run asb init again", "the file has no settings; msb needs a YAML mapping")
		return nil, top
	}
	sb := &Sandbox{}
	ok := l.mapping(top, "", SandboxKeys, func(key string, _, v *yaml.Node) {
		if isNull(v) {
			return // msb treats a null value as absent
		}
		switch key {
		case "image":
			if v.Kind == yaml.MappingNode {
				l.at[key] = v
				sb.Image = "" // the object form; asb keeps only the string form
				l.errf(v, key, "write the image reference as a string, e.g. image: \"name:tag\"", "image as an object is not supported by asb")
				return
			}
			sb.Image, _ = l.str(v, key)
		case "pull_policy":
			sb.PullPolicy, _ = l.oneOf(v, key, "missing", "always", "never")
		case "registry", "secrets":
			if l.mapping(v, key, nil, func(string, *yaml.Node, *yaml.Node) {}) {
				if key == "registry" {
					sb.Registry = *v
				} else {
					sb.Secrets = *v
				}
			}
		case "cpus":
			if n, ok := l.wholeNumber(v, key); ok {
				if re := CPUs(int(n)); re != nil {
					l.errf(v, key, re.Fix, "cpus %s %s", re.Value, re.Why)
				} else {
					sb.CPUs = int(n)
				}
			}
		case "memory":
			if s, ok := l.str(v, key); ok {
				if re := Memory(s); re != nil {
					l.errf(v, key, re.Fix, "memory %q %s", s, re.Why)
				} else {
					sb.Memory = s
				}
			}
		case "max_duration":
			sb.MaxDuration, _ = l.duration(v, key)
		case "idle_timeout":
			sb.IdleTimeout, _ = l.duration(v, key)
		case "workdir":
			sb.Workdir, _ = l.str(v, key)
		case "shell":
			sb.Shell, _ = l.str(v, key)
		case "user":
			sb.User, _ = l.str(v, key)
		case "hostname":
			sb.Hostname, _ = l.str(v, key)
		case "security":
			sb.Security, _ = l.oneOf(v, key, "default", "restricted")
		case "entrypoint", "cmd":
			if l.strList(v, key) != nil {
				if key == "entrypoint" {
					sb.Entrypoint = *v
				} else {
					sb.Cmd = *v
				}
			}
		case "env":
			sb.Env = l.strMap(v, key)
		case "labels":
			sb.Labels = l.strMap(v, key)
		case "scripts":
			sb.Scripts = l.strMap(v, key)
		case "init":
			if l.mapping(v, key, nil, func(string, *yaml.Node, *yaml.Node) {}) {
				sb.Init = *v
			}
		case "rlimits", "patch_files", "patches":
			if items, ok := l.seq(v, key); ok {
				for i, it := range items {
					l.mapping(it, fmt.Sprintf("%s[%d]", key, i), nil, func(string, *yaml.Node, *yaml.Node) {})
				}
				switch key {
				case "rlimits":
					sb.Rlimits = *v
				case "patch_files":
					sb.PatchFiles = *v
				default:
					sb.Patches = *v
				}
			}
		case "mounts":
			items, _ := l.seq(v, key)
			for i, it := range items {
				if m, ok := l.mount(it, fmt.Sprintf("mounts[%d]", i)); ok {
					sb.Mounts = append(sb.Mounts, m)
					l.mountIndex = append(l.mountIndex, i)
				}
			}
		case "network":
			sb.Network = l.network(v, key)
		case "secret_violation_action":
			sb.SecretViolationAction, _ = l.oneOf(v, key, violationActions...)
		case "ports":
			sb.Ports = l.ports(v, key)
		}
	})
	if !ok {
		return nil, top
	}
	return sb, top
}

// violationActions are the spellings msb 0.7.2 accepts.
var violationActions = []string{"block", "block-and-log", "block-and-terminate",
	"Block", "BlockAndLog", "BlockAndTerminate", "block_and_log", "block_and_terminate"}

func (l *loader) ports(v *yaml.Node, field string) []string {
	items, _ := l.seq(v, field)
	var out []string
	for i, it := range items {
		f := fmt.Sprintf("%s[%d]", field, i)
		s, ok := l.str(it, f)
		if !ok {
			continue
		}
		if _, re := Port(s); re != nil {
			l.errf(it, f, re.Fix+" (add /udp for UDP)", "%s %q %s", f, s, re.Why)
			continue
		}
		out = append(out, s)
	}
	return out
}

// MountKeys are the keys of a mount object msb 0.7.2 accepts.
