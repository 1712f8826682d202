package schema

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// The loaders read sandbox.yaml and secrets.yaml as msb 0.7.2 does, but walk
// the yaml.Node tree themselves so that every problem carries the file, line,
// column and field path. msb is strict and so are they: unknown keys, YAML
// anchors, aliases, merge keys and tags, several documents, duplicate keys,
// and YAML 1.1 booleans (yes/no/on/off) are all rejected. Each check below
// was compared with what the real msb says (see TestRealMsbAgrees*).

// LoadSandbox reads sandbox.yaml (file names it in the problems). It returns
// the decoded config (nil when the file is not a YAML mapping), the root
// mapping node (for positions), and every problem found.
func LoadSandbox(file string, data []byte) (*Sandbox, *yaml.Node, []Problem) {
	l := newLoader(file)
	sb, root := l.sandbox(data)
	return sb, root, l.probs
}

// LoadSecrets reads secrets.yaml: a mapping of secret name to binding.
func LoadSecrets(file string, data []byte) (Secrets, *yaml.Node, []Problem) {
	l := newLoader(file)
	s, root := l.secrets(data)
	return s, root, l.probs
}

// loader collects problems and remembers the node of every field path it
// decoded, so the checks in check.go can point at a line.
type loader struct {
	file  string
	probs []Problem
	at    map[string]*yaml.Node
	lines int // of the file, once parsed: positions are clamped to it
	// mountIndex[i] is the index in the file's mounts list of Sandbox.Mounts[i]
	// (entries with problems are left out of Sandbox.Mounts).
	mountIndex []int
}

func newLoader(file string) *loader {
	return &loader{file: file, at: map[string]*yaml.Node{}}
}

func (l *loader) add(n *yaml.Node, sev Severity, field, fix, format string, args ...any) {
	p := Problem{File: l.file, Severity: sev, Field: field, Msg: fmt.Sprintf(format, args...), Fix: fix}
	if n != nil {
		p.Line, p.Col = n.Line, n.Column
	}
	if l.lines > 0 && p.Line > l.lines {
		// yaml.v3 puts an implicit null after the last line.
		p.Line, p.Col = l.lines, 0
	}
	l.probs = append(l.probs, p)
}

func (l *loader) errf(n *yaml.Node, field, fix, format string, args ...any) {
	l.add(n, SeverityError, field, fix, format, args...)
}

var (
	yamlLineRe   = regexp.MustCompile(`line (\d+)(?:, column (\d+))?:? ?`)
	yamlAnchorRe = regexp.MustCompile(`unknown anchor '([^']*)' referenced`)
)

// parse reads exactly one YAML document and rejects the YAML features msb
// refuses. It returns the document's top node, nil when there is nothing
// usable (the problems say why).
func (l *loader) parse(data []byte) *yaml.Node {
	l.lines = countLines(data)
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			l.probs = append(l.probs, Problem{File: l.file, Line: 1, Col: 1, Severity: SeverityError,
				Msg: "the file is empty; msb needs a YAML mapping", Fix: "write at least `image: NAME`, or run asb init again"})
			return nil
		}
		l.syntaxError(data, err)
		return nil
	}
	var next yaml.Node
	switch err := dec.Decode(&next); {
	case err == nil:
		l.errf(&next, "", "keep one document: remove the `---` line and what follows, or merge it into the first",
			"the file holds several YAML documents; msb reads only single-document files")
	case !errors.Is(err, io.EOF):
		l.syntaxError(data, err)
		l.errf(nil, "", "keep one document: remove the `---` line and what follows", "the file holds several YAML documents; msb reads only single-document files")
		if last := &l.probs[len(l.probs)-1]; last.Line == 0 {
			last.Line, last.Col = secondDocLine(data), 1
		}
	}
	if len(doc.Content) == 0 {
		return nil
	}
	top := doc.Content[0]
	l.rejectFeatures(top)
	return top
}

func secondDocLine(data []byte) int {
	for i, line := range strings.Split(string(data), "\n") {
		if i > 0 && strings.HasPrefix(line, "---") {
			return i + 1
		}
	}
	return 1
}

func (l *loader) syntaxError(data []byte, err error) {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	p := Problem{File: l.file, Severity: SeverityError, Msg: "YAML syntax error: " + yamlLineRe.ReplaceAllString(msg, ""),
		Fix: "fix the YAML at that line (indent with spaces, quote values holding `: ` or `#`)"}
	p.Msg = strings.TrimRight(strings.ReplaceAll(p.Msg, ":  ", ": "), ": ")
	if m := yamlLineRe.FindStringSubmatch(msg); m != nil {
		p.Line, _ = strconv.Atoi(m[1])
		if m[2] != "" {
			p.Col, _ = strconv.Atoi(m[2])
		}
	} else if m := yamlAnchorRe.FindStringSubmatch(msg); m != nil {
		// An alias with no anchor: point at the alias.
		p.Line = 1
		for i, line := range strings.Split(string(data), "\n") {
			if j := strings.Index(line, "*"+m[1]); j >= 0 {
				p.Line, p.Col = i+1, j+1
				break
			}
		}
		p.Msg = fmt.Sprintf("YAML alias *%s: msb does not support anchors and aliases (and this one has no anchor)", m[1])
		p.Fix = "write the value out in full"
	} else {
		p.Line = 1
		if strings.Contains(msg, "cannot start any token") {
			// Most often a tab in the indentation.
			for i, line := range strings.Split(string(data), "\n") {
				if j := strings.IndexByte(line, '\t'); j >= 0 && strings.TrimLeft(line[:j], " ") == "" {
					p.Line, p.Col = i+1, j+1
					p.Fix = "indent with spaces: YAML does not allow tabs in indentation"
					break
				}
			}
		}
	}
	if p.Col == 0 && strings.Contains(msg, "cannot start any token") {
		lines := strings.Split(string(data), "\n")
		if p.Line <= len(lines) {
			if j := strings.IndexByte(lines[p.Line-1], '\t'); j >= 0 {
				p.Col = j + 1
				p.Fix = "indent with spaces: YAML does not allow tabs in indentation"
			}
		}
	}
	if n := countLines(data); p.Line > n {
		p.Line, p.Col = n, 0
	}
	l.probs = append(l.probs, p)
}

// rejectFeatures walks the tree for anchors, aliases, merge keys and tags.
func (l *loader) rejectFeatures(n *yaml.Node) {
	if n == nil {
		return
	}
	if n.Anchor != "" {
		l.errf(n, "", "write the value out in full at each place it is needed",
			"YAML anchor &%s: msb does not support anchors and aliases", n.Anchor)
	}
	if n.Kind == yaml.AliasNode {
		l.errf(n, "", "write the value out in full instead of *"+n.Value, "YAML alias *%s: msb does not support anchors and aliases", n.Value)
		return
	}
	if n.Style&yaml.TaggedStyle != 0 && n.Tag != "!!str" && n.Tag != "tag:yaml.org,2002:str" {
		l.errf(n, "", "remove the tag; write the plain value", "YAML tag %s: msb does not accept tagged values", n.Tag)
	}
	if n.Kind == yaml.MappingNode {
		for i := 0; i+1 < len(n.Content); i += 2 {
			if k := n.Content[i]; k.Kind == yaml.ScalarNode && k.ShortTag() == "!!merge" {
				l.errf(k, "", "write the keys out in full", "YAML merge key <<: msb does not support merge keys")
			}
		}
	}
	for _, c := range n.Content {
		l.rejectFeatures(c)
	}
}

// --- typed accessors ------------------------------------------------------

func describe(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.AliasNode:
		return "an alias"
	}
	switch n.ShortTag() {
	case "!!null":
		return "null"
	case "!!bool":
		return "a boolean"
	case "!!int":
		return "an integer"
	case "!!float":
		return "a number"
	case "!!str":
		return "a string"
	}
	return "a " + strings.TrimPrefix(n.ShortTag(), "!!")
}

func isNull(n *yaml.Node) bool {
	return n == nil || (n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null")
}

// skip reports whether n was already reported by rejectFeatures.
func skip(n *yaml.Node) bool { return n.Kind == yaml.AliasNode }

func (l *loader) str(n *yaml.Node, field string) (string, bool) {
	if skip(n) {
		return "", false
	}
	if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!str" {
		fix := "write a string"
		if n.Kind == yaml.ScalarNode {
			fix = "quote it to make it a string, e.g. \"...\""
		}
		l.errf(n, field, fix, "%s must be a string, not %s", field, describe(n))
		return "", false
	}
	l.at[field] = n
	return n.Value, true
}

var yaml11Bools = []string{"yes", "no", "on", "off", "y", "n"}

func (l *loader) boolean(n *yaml.Node, field string) (bool, bool) {
	if skip(n) {
		return false, false
	}
	if n.Kind == yaml.ScalarNode && n.ShortTag() == "!!bool" {
		l.at[field] = n
		return strings.EqualFold(n.Value, "true"), true
	}
	if n.Kind == yaml.ScalarNode && n.Style == 0 && slices.Contains(yaml11Bools, strings.ToLower(n.Value)) {
		want := "true"
		if v := strings.ToLower(n.Value); v == "no" || v == "off" || v == "n" {
			want = "false"
		}
		l.errf(n, field, "write "+want, "%s: bare %s is a string in YAML 1.2, and msb rejects it where a boolean is expected", field, n.Value)
		return false, false
	}
	l.errf(n, field, "write true or false", "%s must be a boolean, not %s", field, describe(n))
	return false, false
}

func (l *loader) integer(n *yaml.Node, field string, min, max int64) (int64, bool) {
	if skip(n) {
		return 0, false
	}
	var v int64
	if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!int" || n.Decode(&v) != nil {
		l.errf(n, field, fmt.Sprintf("write a whole number from %d to %d, unquoted", min, max), "%s must be an integer, not %s", field, describe(n))
		return 0, false
	}
	if v < min || v > max {
		l.errf(n, field, fmt.Sprintf("use a number from %d to %d", min, max), "%s is %d, out of range", field, v)
		return 0, false
	}
	l.at[field] = n
	return v, true
}

func (l *loader) oneOf(n *yaml.Node, field string, allowed ...string) (string, bool) {
	s, ok := l.str(n, field)
	if !ok {
		return "", false
	}
	if !slices.Contains(allowed, s) {
		l.errf(n, field, "use one of: "+strings.Join(allowed, ", "), "%s %q is not a valid value", field, s)
		return "", false
	}
	return s, true
}

func (l *loader) seq(n *yaml.Node, field string) ([]*yaml.Node, bool) {
	if skip(n) {
		return nil, false
	}
	if n.Kind != yaml.SequenceNode {
		l.errf(n, field, "write a YAML list (one `- item` per line, or [a, b])", "%s must be a list, not %s", field, describe(n))
		return nil, false
	}
	l.at[field] = n
	return n.Content, true
}

func (l *loader) strList(n *yaml.Node, field string) []string {
	items, ok := l.seq(n, field)
	if !ok {
		return nil
	}
	out := make([]string, 0, len(items))
	for i, it := range items {
		if s, ok := l.str(it, fmt.Sprintf("%s[%d]", field, i)); ok {
			out = append(out, s)
		}
	}
	return out
}

// mapping calls fn for each key of n (a mapping) after checking it is known
// and not duplicated; keys == nil accepts any string key.
func (l *loader) mapping(n *yaml.Node, field string, keys []string, fn func(key string, k, v *yaml.Node)) bool {
	if skip(n) {
		return false
	}
	if n.Kind != yaml.MappingNode {
		what := field
		if what == "" {
			what = "the file"
		}
		l.errf(n, field, "write a mapping of `key: value` lines", "%s must be a mapping, not %s", what, describe(n))
		return false
	}
	if field != "" {
		l.at[field] = n
	}
	seen := map[string]*yaml.Node{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Kind != yaml.ScalarNode || k.ShortTag() == "!!merge" {
			if k.ShortTag() != "!!merge" && !skip(k) {
				l.errf(k, field, "use plain names as keys", "%s: a key must be a plain name, not %s", orFile(field), describe(k))
			}
			continue
		}
		name := k.Value
		if k.ShortTag() == "!!null" || name == "" {
			l.errf(k, field, "give the key a name", "%s: a key is empty", orFile(field))
			continue
		}
		path := joinField(field, name)
		if first, dup := seen[name]; dup {
			l.errf(k, path, fmt.Sprintf("remove one of them (the first is on line %d)", first.Line), "key %s is given twice", name)
			continue
		}
		seen[name] = k
		if keys != nil && !slices.Contains(keys, name) {
			fix := "remove it; accepted keys: " + strings.Join(keys, ", ")
			if s := closest(name, keys); s != "" {
				fix = fmt.Sprintf("did you mean %s? accepted keys: %s", s, strings.Join(keys, ", "))
			}
			l.errf(k, path, fix, "unknown key %s in %s (msb rejects unknown keys)", name, orFile(field))
			continue
		}
		fn(name, k, v)
	}
	return true
}

func orFile(field string) string {
	if field == "" {
		return "the top level"
	}
	return field
}

func joinField(parent, key string) string {
	if parent == "" {
		return key
	}
	return parent + "." + key
}

func (l *loader) strMap(n *yaml.Node, field string) map[string]string {
	out := map[string]string{}
	l.mapping(n, field, nil, func(key string, _, v *yaml.Node) {
		if s, ok := l.str(v, field+"."+key); ok {
			out[key] = s
		}
	})
	return out
}

// closest returns the accepted key nearest to s, if it is a likely typo.
func closest(s string, keys []string) string {
	best, bestD := "", 3
	for _, k := range keys {
		if d := editDistance(s, k); d < bestD {
			best, bestD = k, d
		}
	}
	return best
}

func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// --- sandbox.yaml ----------------------------------------------------------

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
			if n, ok := l.integer(v, key, 1, 255); ok {
				sb.CPUs = int(n)
			}
		case "memory":
			sb.Memory, _ = l.size(v, key)
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
		if _, err := ParsePort(s); err != nil {
			l.errf(it, f, ruleHelp["asb_port"]+" (add /udp for UDP)", "%s: %v", f, err)
			continue
		}
		out = append(out, s)
	}
	return out
}

// MountKeys are the keys of a mount object msb 0.7.2 accepts.
var MountKeys = []string{"bind", "named", "tmpfs", "disk", "target", "readonly", "noexec", "nosuid", "nodev", "create", "format", "fstype"}

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
		f := field + "." + key
		var ok bool
		switch key {
		case "bind", "named", "disk":
			if isNull(v) {
				return
			}
			var s string
			if s, ok = l.str(v, f); ok {
				switch key {
				case "bind":
					m.Bind = s
				case "named":
					m.Named = s
				default:
					m.Disk = s
				}
			}
			kinds = append(kinds, key)
		case "tmpfs":
			if isNull(v) {
				return
			}
			kinds = append(kinds, key)
			m.Tmpfs = &TmpfsOpts{}
			ok = l.mapping(v, f, []string{"size"}, func(_ string, _, sv *yaml.Node) {
				if !isNull(sv) {
					if m.Tmpfs.Size, ok = l.size(sv, f+".size"); !ok {
						good = false
					}
				}
			})
		case "target":
			if m.Target, ok = l.str(v, f); ok {
				if !strings.HasPrefix(m.Target, "/") {
					l.errf(v, f, "use an absolute path in the VM, e.g. /workspace", "%s %q must be an absolute guest path", f, m.Target)
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
		case "fstype":
			if m.Fstype, ok = l.str(v, f); ok && (m.Fstype == "" || strings.ContainsAny(m.Fstype, ",;:=")) {
				l.errf(v, f, "use a filesystem name such as ext4", "%s must be non-empty and free of , ; : =", f)
				ok = false
			}
		}
		if !ok {
			good = false
		}
	})
	if !good {
		return m, false
	}
	switch {
	case len(kinds) != 1:
		l.errf(n, field, "give exactly one of bind: ./HOST, named: VOLUME, tmpfs: {size: 64M}, disk: ./IMAGE",
			"%s must contain exactly one of bind, named, tmpfs or disk", field)
		return m, false
	case m.Target == "":
		l.errf(n, field, "add target: /GUEST/PATH", "%s has no target", field)
		return m, false
	case m.Create != "" && kinds[0] != "named":
		l.errf(l.at[field+".create"], field+".create", "remove create, or use named: VOLUME", "%s.create is only valid for a named mount", field)
		return m, false
	case (m.Format != "" || m.Fstype != "") && kinds[0] != "disk":
		l.errf(n, field, "remove format and fstype, or use disk: ./IMAGE", "%s: format and fstype are only valid for a disk mount", field)
		return m, false
	}
	return m, true
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
	if len(parts) == 3 {
		for opt := range strings.SplitSeq(parts[2], ",") {
			switch opt {
			case "ro":
				m.Readonly = true
			case "rw":
				m.Readonly = false
			case "noexec":
				m.Noexec = true
			case "nosuid":
				m.Nosuid = true
			case "nodev":
				m.Nodev = true
			default:
				l.errf(n, field, "use the options "+strings.Join(shortMountFlags, ", ")+", separated by commas",
					"mount %q: option %q is not valid here", n.Value, opt)
				return m, false
			}
		}
	}
	// Like docker, a source that is not a path names a volume.
	if src := parts[0]; strings.HasPrefix(src, ".") || strings.HasPrefix(src, "/") || strings.HasPrefix(src, "~") || strings.Contains(src, "/") {
		m.Bind = src
	} else {
		m.Named = src
	}
	return m, true
}

// NetworkKeys are the keys of the network object msb 0.7.2 accepts.
var NetworkKeys = []string{"policy", "allow", "deny", "ports", "dns", "tls", "strict", "trust_host_cas",
	"max_connections", "max_tcp_connections", "max_udp_connections"}

// NetworkPolicies are the values of network (string form) and network.policy.
var NetworkPolicies = []string{"none", "public", "open"}

func (l *loader) network(n *yaml.Node, field string) *Network {
	if skip(n) {
		return nil
	}
	if n.Kind == yaml.ScalarNode {
		p, ok := l.oneOf(n, field, NetworkPolicies...)
		if !ok {
			return nil
		}
		return &Network{Short: true, Policy: p}
	}
	if n.Kind != yaml.MappingNode {
		l.errf(n, field, "write none, public or open, or a mapping such as {allow: [api.example.com]}", "%s must be a string or a mapping, not %s", field, describe(n))
		return nil
	}
	nw := &Network{}
	good := true
	optBool := func(v *yaml.Node, f string) *bool {
		b, ok := l.boolean(v, f)
		if !ok {
			good = false
			return nil
		}
		return &b
	}
	optInt := func(v *yaml.Node, f string) *int {
		i, ok := l.integer(v, f, 0, 1<<32-1)
		if !ok {
			good = false
			return nil
		}
		n := int(i)
		return &n
	}
	l.mapping(n, field, NetworkKeys, func(key string, _, v *yaml.Node) {
		f := field + "." + key
		if isNull(v) {
			return
		}
		switch key {
		case "policy":
			nw.Policy, _ = l.oneOf(v, f, NetworkPolicies...)
		case "allow":
			nw.Allow = l.rules(v, f)
		case "deny":
			nw.Deny = l.rules(v, f)
		case "ports":
			nw.Ports = l.ports(v, f)
		case "dns":
			nw.DNS = &DNS{}
			l.mapping(v, f, []string{"rebind_protection", "nameservers", "query_timeout"}, func(k string, _, dv *yaml.Node) {
				if isNull(dv) {
					return
				}
				switch k {
				case "rebind_protection":
					nw.DNS.RebindProtection = optBool(dv, f+"."+k)
				case "nameservers":
					nw.DNS.Nameservers = l.strList(dv, f+"."+k)
				case "query_timeout":
					nw.DNS.QueryTimeout, _ = l.duration(dv, f+"."+k)
				}
			})
		case "tls":
			nw.TLS = &TLS{}
			l.mapping(v, f, []string{"enabled", "bypass", "verify_upstream", "block_quic"}, func(k string, _, tv *yaml.Node) {
				if isNull(tv) {
					return
				}
				switch k {
				case "enabled":
					nw.TLS.Enabled = optBool(tv, f+"."+k)
				case "bypass":
					nw.TLS.Bypass = l.strList(tv, f+"."+k)
				case "verify_upstream":
					nw.TLS.VerifyUpstream = optBool(tv, f+"."+k)
				case "block_quic":
					nw.TLS.BlockQUIC = optBool(tv, f+"."+k)
				}
			})
		case "strict":
			nw.Strict = optBool(v, f)
		case "trust_host_cas":
			nw.TrustHostCAs = optBool(v, f)
		case "max_connections":
			nw.MaxConnections = optInt(v, f)
		case "max_tcp_connections":
			nw.MaxTCPConnections = optInt(v, f)
		case "max_udp_connections":
			nw.MaxUDPConnections = optInt(v, f)
		}
	})
	if nw.MaxConnections != nil && (nw.MaxTCPConnections != nil || nw.MaxUDPConnections != nil) {
		l.errf(l.at[field+".max_connections"], field+".max_connections", "give either max_connections or max_tcp_connections/max_udp_connections",
			"%s.max_connections cannot be combined with max_tcp_connections or max_udp_connections (msb rejects it)", field)
	}
	_ = good
	return nw
}

// rules reads network.allow / network.deny: each entry a domain. msb takes a
// single label as an ambiguous keyword and rejects it.
func (l *loader) rules(v *yaml.Node, field string) []string {
	items, _ := l.seq(v, field)
	var out []string
	for i, it := range items {
		f := fmt.Sprintf("%s[%d]", field, i)
		s, ok := l.str(it, f)
		if !ok {
			continue
		}
		if !strings.Contains(s, ".") {
			l.errf(it, f, "use a full domain name such as api.example.com", "%s %q is a single label; msb rejects it as ambiguous", f, s)
			continue
		}
		out = append(out, s)
	}
	return out
}

// --- secrets.yaml ----------------------------------------------------------

// SecretKeys are the keys of a binding in secrets.yaml msb 0.7.2 accepts.
var SecretKeys = []string{"value", "placeholder", "allow", "substitution", "passthrough", "violation_action", "require_tls_identity"}

func (l *loader) secrets(data []byte) (Secrets, *yaml.Node) {
	top := l.parse(data)
	if top == nil {
		return nil, nil
	}
	if isNull(top) {
		l.errf(top, "", "add a binding, e.g. NAME: {value: \"${NAME}\", allow: [api.example.com]}, or remove the file",
			"the file has no secrets; msb needs a YAML mapping of secret names")
		return nil, top
	}
	out := Secrets{}
	ok := l.mapping(top, "", nil, func(name string, k, v *yaml.Node) {
		l.at[name+".key"] = k
		if s, ok := l.secret(v, name); ok {
			out[name] = s
		}
	})
	if !ok {
		return nil, top
	}
	return out, top
}

func (l *loader) secret(n *yaml.Node, name string) (Secret, bool) {
	var s Secret
	if n.Kind != yaml.MappingNode {
		if !skip(n) {
			// Never echo the value: a user may have pasted the secret itself.
			l.errf(n, name, fmt.Sprintf("write %s: {value: \"${%s}\", allow: [HOST]}", name, name), "%s must be a mapping with value and allow, not %s", name, describe(n))
		}
		return s, false
	}
	good := true
	l.mapping(n, name, SecretKeys, func(key string, _, v *yaml.Node) {
		f := name + "." + key
		if isNull(v) {
			return
		}
		var ok bool
		switch key {
		case "value":
			if v.Kind != yaml.ScalarNode || v.ShortTag() != "!!str" {
				if !skip(v) {
					l.errf(v, f, fmt.Sprintf("write value: \"${%s}\"", envGuess(name)), "%s must be a string \"${VAR}\", not %s", f, describe(v))
				}
				good = false
				return
			}
			l.at[f] = v
			s.Value = v.Value
			ok = true
			if strings.HasPrefix(v.Value, "${") && strings.HasSuffix(v.Value, "}") {
				if _, ok := EnvRef(v.Value); !ok {
					// Only ${NAME} is an env reference for msb; the value is
					// not a secret here but is still not echoed.
					l.errf(v, f, "use ${NAME} with NAME of letters, digits and _, not starting with a digit",
						"%s is an unsupported environment expression; msb accepts only ${NAME}", f)
					good = false
				}
			}
		case "placeholder":
			s.Placeholder, ok = l.str(v, f)
		case "allow":
			s.Allow = l.strList(v, f)
			ok = true
		case "substitution":
			s.Substitution = &Substitution{}
			ok = l.mapping(v, f, []string{"headers", "query", "body"}, func(k string, _, bv *yaml.Node) {
				if isNull(bv) {
					return
				}
				b, bok := l.boolean(bv, f+"."+k)
				if !bok {
					good = false
					return
				}
				switch k {
				case "headers":
					s.Substitution.Headers = &b
				case "query":
					s.Substitution.Query = &b
				case "body":
					s.Substitution.Body = &b
				}
			})
		case "passthrough":
			s.Passthrough = l.strList(v, f)
			ok = true
		case "violation_action":
			s.ViolationAction, ok = l.oneOf(v, f, violationActions...)
		case "require_tls_identity":
			var b bool
			if b, ok = l.boolean(v, f); ok {
				s.RequireTLSIdentity = &b
			}
		}
		if !ok {
			good = false
		}
	})
	return s, good
}

func envGuess(name string) string {
	if ValidEnvName(name) {
		return name
	}
	return "VAR"
}

// countLines counts lines as YAML does: \r\n, \r, \n, NEL, LS and PS each
// end one.
func countLines(data []byte) int {
	n := 1
	s := strings.ReplaceAll(string(data), "\r\n", "\n")
	for _, r := range s {
		switch r {
		case '\n', '\r', '\u0085', '\u2028', '\u2029':
			n++
		}
	}
	return n
}
