package schema

import (
	"fmt"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

var (
	msbSizeRe     = lazyRegexp(`^([0-9]+[MmGg]?|[0-9]*\.[0-9]+[Gg])$`)
	msbDurationRe = lazyRegexp(`^[0-9]+[smh]?$`)
)

// ParseMsbSize checks a size the way msb 0.7.2 reads memory and tmpfs sizes:
// a whole number with an optional unit M or G (MiB when there is none), or
// a fraction of G (1.5G, .5G), below 4194304G. msb rejects K, T, MB, GiB
// and the like.
func ParseMsbSize(s string) error {
	if !msbSizeRe().MatchString(s) {
		return fmt.Errorf("size %q is not a number with an optional unit M or G (e.g. 512M, 4G)", s)
	}
	f, err := strconv.ParseFloat(strings.TrimRight(s, "MmGg"), 64)
	if err != nil || f <= 0 {
		return fmt.Errorf("size %q must be greater than 0", s)
	}
	if strings.HasSuffix(strings.ToUpper(s), "G") {
		f *= 1024
	}
	if f >= 1<<32 {
		return fmt.Errorf("size %q is too large (msb reads at most 4194303G)", s)
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
	if re := Duration(s); re != nil {
		l.errf(n, field, re.Fix, "%s %q %s", field, s, re.Why)
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
	l.judgeKeys(top)
	sb := &Sandbox{}
	ok := l.mapping(top, "", SandboxKeys, func(key string, _, v *yaml.Node) {
		if isNull(v) {
			return // msb treats a null value as absent
		}
		if read, ok := sandboxKey[key]; ok {
			read(l, sb, key, v)
		}
	})
	if !ok {
		return nil, top
	}
	return sb, top
}

// sandboxKey reads each top-level key of sandbox.yaml into the Sandbox:
// one small reader per key, as msb has one field per key.
var sandboxKey = map[string]func(l *loader, sb *Sandbox, key string, v *yaml.Node){
	"image": (*loader).image,
	"pull_policy": func(l *loader, sb *Sandbox, k string, v *yaml.Node) {
		sb.PullPolicy, _ = l.oneOf(v, k, "missing", "always", "never")
	},
	"registry":     func(l *loader, sb *Sandbox, k string, v *yaml.Node) { l.anyMapping(v, k, &sb.Registry) },
	"secrets":      func(l *loader, sb *Sandbox, k string, v *yaml.Node) { l.anyMapping(v, k, &sb.Secrets) },
	"init":         func(l *loader, sb *Sandbox, k string, v *yaml.Node) { l.anyMapping(v, k, &sb.Init) },
	"cpus":         (*loader).cpus,
	"memory":       (*loader).memory,
	"max_duration": func(l *loader, sb *Sandbox, k string, v *yaml.Node) { sb.MaxDuration, _ = l.duration(v, k) },
	"idle_timeout": func(l *loader, sb *Sandbox, k string, v *yaml.Node) { sb.IdleTimeout, _ = l.duration(v, k) },
	"workdir":      func(l *loader, sb *Sandbox, k string, v *yaml.Node) { sb.Workdir, _ = l.str(v, k) },
	"shell":        func(l *loader, sb *Sandbox, k string, v *yaml.Node) { sb.Shell, _ = l.nonEmpty(v, k) },
	"user":         func(l *loader, sb *Sandbox, k string, v *yaml.Node) { sb.User, _ = l.str(v, k) },
	"hostname":     func(l *loader, sb *Sandbox, k string, v *yaml.Node) { sb.Hostname, _ = l.nonEmpty(v, k) },
	"security": func(l *loader, sb *Sandbox, k string, v *yaml.Node) {
		sb.Security, _ = l.oneOf(v, k, "default", "restricted")
	},
	"entrypoint":  func(l *loader, sb *Sandbox, k string, v *yaml.Node) { l.argv(v, k, &sb.Entrypoint) },
	"cmd":         func(l *loader, sb *Sandbox, k string, v *yaml.Node) { l.argv(v, k, &sb.Cmd) },
	"env":         func(l *loader, sb *Sandbox, k string, v *yaml.Node) { sb.Env = l.env(v, k) },
	"labels":      func(l *loader, sb *Sandbox, k string, v *yaml.Node) { sb.Labels = l.strMap(v, k) },
	"scripts":     func(l *loader, sb *Sandbox, k string, v *yaml.Node) { sb.Scripts = l.strMap(v, k) },
	"rlimits":     func(l *loader, sb *Sandbox, k string, v *yaml.Node) { l.mappingList(v, k, &sb.Rlimits) },
	"patch_files": func(l *loader, sb *Sandbox, k string, v *yaml.Node) { l.mappingList(v, k, &sb.PatchFiles) },
	"patches":     func(l *loader, sb *Sandbox, k string, v *yaml.Node) { l.mappingList(v, k, &sb.Patches) },
	"mounts":      (*loader).mounts,
	"network":     func(l *loader, sb *Sandbox, k string, v *yaml.Node) { sb.Network = l.network(v, k) },
	"ports":       func(l *loader, sb *Sandbox, k string, v *yaml.Node) { sb.Ports = l.ports(v, k) },
	"secret_violation_action": func(l *loader, sb *Sandbox, k string, v *yaml.Node) {
		sb.SecretViolationAction, _ = l.oneOf(v, k, violationActions...)
	},
}

func (l *loader) image(sb *Sandbox, key string, v *yaml.Node) {
	if v.Kind == yaml.MappingNode {
		l.at[key] = v // refused by the key table (judgeKeys)
		return
	}
	sb.Image, _ = l.str(v, key)
}

func (l *loader) cpus(sb *Sandbox, key string, v *yaml.Node) {
	if n, ok := l.wholeNumber(v, key); ok {
		if re := CPUs(int(n)); re != nil {
			l.errf(v, key, re.Fix, "cpus %s %s", re.Value, re.Why)
		} else {
			sb.CPUs = int(n)
		}
	}
}

func (l *loader) memory(sb *Sandbox, key string, v *yaml.Node) {
	if s, ok := l.str(v, key); ok {
		if re := Memory(s); re != nil {
			l.errf(v, key, re.Fix, "memory %q %s", s, re.Why)
		} else {
			sb.Memory = s
		}
	}
}

func (l *loader) mounts(sb *Sandbox, key string, v *yaml.Node) {
	items, _ := l.seq(v, key)
	for i, it := range items {
		if m, ok := l.mount(it, fmt.Sprintf("mounts[%d]", i)); ok {
			sb.Mounts = append(sb.Mounts, m)
			l.mountIndex = append(l.mountIndex, i)
		}
	}
}

// anyMapping keeps v (a mapping of any keys, passed to msb as it is) in dst.
func (l *loader) anyMapping(v *yaml.Node, key string, dst *yaml.Node) {
	if l.mapping(v, key, nil, func(string, *yaml.Node, *yaml.Node) {}) {
		*dst = *v
	}
}

// argv keeps v (a list of strings) in dst; msb needs a program first.
func (l *loader) argv(v *yaml.Node, key string, dst *yaml.Node) {
	if args := l.strList(v, key); args != nil {
		if len(args) > 0 && args[0] == "" {
			l.errf(v.Content[0], key+"[0]", "name the program to run first", "%s: the program (the first item) is empty; msb rejects it", key)
			return
		}
		*dst = *v
	}
}

// mappingList keeps v (a list of mappings) in dst.
func (l *loader) mappingList(v *yaml.Node, key string, dst *yaml.Node) {
	if items, ok := l.seq(v, key); ok {
		for i, it := range items {
			l.mapping(it, fmt.Sprintf("%s[%d]", key, i), nil, func(string, *yaml.Node, *yaml.Node) {})
		}
		*dst = *v
	}
}

// violationActions are the spellings msb 0.7.2 accepts.
var violationActions = []string{"block", "block-and-log", "block-and-terminate",
	"Block", "BlockAndLog", "BlockAndTerminate", "block_and_log", "block_and_terminate"}

func (l *loader) ports(v *yaml.Node, field string) []string {
	return l.checkedList(v, field, func(s string) *RuleError {
		_, re := Port(s)
		return re
	}, " (add /udp for UDP)")
}

// MountKeys are the keys of a mount object msb 0.7.2 accepts.
