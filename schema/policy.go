package schema

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// The policy: a floor no outer folder can go below. An administrator's
// file (MachinePolicyPath) and the user's own ($XDG_CONFIG_HOME/asb/
// policy.yaml) each say what any folder may ask for: network modes, the
// hosts a secret may be sent to, hosts never allowed, where images come
// from, whether host binds and port forwards are allowed, the most CPUs,
// memory and disk. A folder must pass every file in force, so the user's
// file can only narrow the machine's, never loosen a key it sets. Each
// key is one rule (policy_rules.go), which every door applies: asb init's
// flags, the edit commands, validate (and so vm:create), trust, task.

// Policy file names and places.
const (
	PolicyFile        = "policy.yaml"
	MachinePolicyPath = "/etc/asb/policy.yaml"
	// PolicySchemaURL is the policy's JSON Schema, for editors.
	PolicySchemaURL = "https://raw.githubusercontent.com/agents-sandbox/asb/main/schema/policy.schema.json"
)

// The keys of a policy file.
const (
	PolicyNetworkModes = "network_modes"
	PolicySecretHosts  = "secret_hosts"
	PolicyNeverAllow   = "never_allow"
	PolicyImagesFrom   = "images_from"
	PolicyHostBinds    = "host_binds"
	PolicyPorts        = "ports"
	PolicyMax          = "max"
)

// PolicyKeys are the keys of a policy file, in the order docs show them.
var PolicyKeys = []string{PolicyNetworkModes, PolicySecretHosts, PolicyNeverAllow, PolicyImagesFrom, PolicyHostBinds, PolicyPorts, PolicyMax}

// PolicyMaxKeys are the keys under max.
var PolicyMaxKeys = []string{"cpus", "memory", "disk"}

// Network modes a policy names: an allow list, the public internet,
// everything (private ranges too), no network.
var PolicyNetworkModeNames = []string{"allow", "public", "open", "none"}

// PolicyLayer is one policy file: each key, when set, with its line.
type PolicyLayer struct {
	Path    string
	Machine bool // the administrator's (MachinePolicyPath), not the user's

	NetworkModes []string // nil: not set
	SecretHosts  []string
	NeverAllow   []string
	ImagesFrom   []string
	HostBinds    *bool
	Ports        *bool
	MaxCPUs      int    // 0: not set
	MaxMemory    string // "": not set
	MaxDisk      string

	lines map[string]int // key (max.cpus for max's) → line
}

// Line is where key is set in the file (0: it is not).
func (l *PolicyLayer) Line(key string) int { return l.lines[key] }

// Where names key's line, for messages: "/etc/asb/policy.yaml:3".
func (l *PolicyLayer) Where(key string) string {
	return l.Path + ":" + strconv.Itoa(l.lines[key])
}

// Policy is the policy files in force, the machine's first.
type Policy struct{ Layers []*PolicyLayer }

// Empty reports whether no policy file is in force.
func (p *Policy) Empty() bool { return p == nil || len(p.Layers) == 0 }

// Files lists the policy files in force.
func (p *Policy) Files() []string {
	var out []string
	if p != nil {
		for _, l := range p.Layers {
			out = append(out, l.Path)
		}
	}
	return out
}

// UserPolicyPath is the user's policy file: $XDG_CONFIG_HOME/asb/policy.yaml,
// by default ~/.config/asb/policy.yaml ("" when neither is set).
func UserPolicyPath(getenv func(string) string) string {
	base := getenv("XDG_CONFIG_HOME")
	if base == "" || !filepath.IsAbs(base) {
		home := getenv("HOME")
		if home == "" || !filepath.IsAbs(home) {
			return ""
		}
		base = filepath.Join(home, ".config")
	}
	return filepath.Join(base, "asb", PolicyFile)
}

// PolicyError is a policy file asb cannot read or that breaks a rule:
// every door then refuses (a floor that cannot be read is not lowered).
type PolicyError struct {
	Path     string
	Problems []Problem
	Err      error
}

func (e *PolicyError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "the policy %s cannot be used, so asb runs and changes nothing", e.Path)
	if e.Err != nil {
		fmt.Fprintf(&b, ": %v", e.Err)
	}
	for _, p := range e.Problems {
		fmt.Fprintf(&b, "\n  %s", p)
	}
	return b.String() + "\n(fix the file" + map[bool]string{true: ", or ask whoever administers this machine", false: ""}[e.Path == MachinePolicyPath] + "; docs/trust.md describes it)"
}

// LoadPolicy reads the policy files in force: machine (the administrator's
// path; "" for none) and the user's. A missing file is no policy.
func LoadPolicy(machine, user string) (*Policy, error) {
	p := &Policy{}
	for _, f := range []struct {
		path    string
		machine bool
	}{{machine, true}, {user, false}} {
		if f.path == "" {
			continue
		}
		raw, err := ReadFile(f.path)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, &PolicyError{Path: f.path, Err: err}
		}
		l, probs := ParsePolicy(f.path, raw)
		if HasErrors(probs) {
			return nil, &PolicyError{Path: f.path, Problems: probs}
		}
		l.Machine = f.machine
		p.Layers = append(p.Layers, l)
	}
	return p, nil
}

// ParsePolicy reads one policy file; every problem has its line.
func ParsePolicy(path string, raw []byte) (*PolicyLayer, []Problem) {
	l := &PolicyLayer{Path: path, lines: map[string]int{}}
	var probs []Problem
	bad := func(n *yaml.Node, field, fix, format string, args ...any) {
		probs = append(probs, Problem{File: path, Line: n.Line, Col: n.Column, Severity: SeverityError, Field: field, Fix: fix, Msg: fmt.Sprintf(format, args...)})
	}
	var doc yaml.Node
	if err := yaml.NewDecoder(bytes.NewReader(raw)).Decode(&doc); err != nil {
		if err.Error() == "EOF" {
			return l, nil // an empty file sets nothing
		}
		return l, []Problem{{File: path, Line: 1, Severity: SeverityError, Msg: "not YAML: " + err.Error(), Fix: "see docs/trust.md for the keys"}}
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		bad(root, "", "write keys such as network_modes: [allow, none]", "a policy is a mapping of keys")
		return l, probs
	}
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, v := root.Content[i], root.Content[i+1]
		l.lines[k.Value] = k.Line
		l.parseKey(k, v, bad)
	}
	return l, probs
}

// parseKey reads one key of a policy file.
func (l *PolicyLayer) parseKey(k, v *yaml.Node, bad policyBad) {
	switch k.Value {
	case PolicyNetworkModes:
		l.NetworkModes = policyList(v, k.Value, bad, func(s string) string {
			if !slices.Contains(PolicyNetworkModeNames, s) {
				return "use " + strings.Join(PolicyNetworkModeNames, ", ")
			}
			return ""
		})
	case PolicySecretHosts, PolicyNeverAllow:
		hosts := policyList(v, k.Value, bad, func(s string) string {
			if re := Host(s); re != nil {
				return re.Fix
			}
			return ""
		})
		if k.Value == PolicySecretHosts {
			l.SecretHosts = hosts
		} else {
			l.NeverAllow = hosts
		}
	case PolicyImagesFrom:
		l.ImagesFrom = policyList(v, k.Value, bad, func(s string) string {
			if strings.ContainsAny(s, " \t${}") {
				return "give a registry or repository prefix, e.g. registry.example.com/ or docker.io/library/debian"
			}
			return ""
		})
	case PolicyHostBinds, PolicyPorts:
		var b bool
		if v.Kind != yaml.ScalarNode || v.Decode(&b) != nil {
			bad(v, k.Value, "write "+k.Value+": false (or true)", "%s is not true or false", k.Value)
			return
		}
		if k.Value == PolicyHostBinds {
			l.HostBinds = &b
		} else {
			l.Ports = &b
		}
	case PolicyMax:
		parsePolicyMax(l, v, bad)
	default:
		bad(k, k.Value, "use one of "+strings.Join(PolicyKeys, ", "), "unknown key %s", k.Value)
	}
}

type policyBad func(n *yaml.Node, field, fix, format string, args ...any)

// policyList reads a list of strings, each judged by check (its fix, or
// "" when it is right). A list is never nil once set.
func policyList(v *yaml.Node, key string, bad policyBad, check func(string) string) []string {
	out := []string{}
	if v.Kind != yaml.SequenceNode {
		bad(v, key, "write a list, e.g. "+key+": [a, b]", "%s is not a list", key)
		return out
	}
	for i, e := range v.Content {
		field := fmt.Sprintf("%s[%d]", key, i)
		if e.Kind != yaml.ScalarNode || e.Value == "" {
			bad(e, field, "write a plain value", "%s is not a plain value", field)
			continue
		}
		if fix := check(e.Value); fix != "" {
			bad(e, field, fix, "%s %q is not allowed here", field, e.Value)
			continue
		}
		out = append(out, e.Value)
	}
	return out
}

func parsePolicyMax(l *PolicyLayer, v *yaml.Node, bad policyBad) {
	if v.Kind != yaml.MappingNode {
		bad(v, PolicyMax, "write max: {cpus: 4, memory: 8G, disk: 40G}", "max is not a mapping")
		return
	}
	for i := 0; i+1 < len(v.Content); i += 2 {
		k, val := v.Content[i], v.Content[i+1]
		field := PolicyMax + "." + k.Value
		l.lines[field] = k.Line
		switch k.Value {
		case "cpus":
			n, err := strconv.Atoi(val.Value)
			if err != nil || CPUs(n) != nil {
				bad(val, field, "give a whole number of CPUs, e.g. 4", "%s %q is not a number of CPUs", field, val.Value)
				continue
			}
			l.MaxCPUs = n
		case "memory", "disk":
			if _, err := ParseSize(val.Value); err != nil {
				bad(val, field, "use a number with a unit M or G, e.g. 8G", "%s %q is not a size", field, val.Value)
				continue
			}
			if k.Value == "memory" {
				l.MaxMemory = val.Value
			} else {
				l.MaxDisk = val.Value
			}
		default:
			bad(k, field, "use one of "+strings.Join(PolicyMaxKeys, ", "), "unknown key %s", field)
		}
	}
}

// PolicyPaths lists the policy paths asb looks at (the machine's, the
// user's), for a cache that must notice one appearing.
func PolicyPaths(machine, user string) []string {
	var out []string
	for _, p := range []string{machine, user} {
		if p != "" {
			out = append(out, p)
		}
	}
	return out
}
