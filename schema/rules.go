package schema

import (
	"fmt"
	"net/netip"
	"slices"
	"strings"

	"golang.org/x/net/publicsuffix"
)

// The rules on the values a user gives asb: secret names, hosts, ports,
// CPUs, memory. Each rule is here once, and every door applies it the same
// way: the flags of asb init (through the validator's asb_* tags), the
// edit commands (asb secret, network, port, mount), and asb validate of
// sandbox.yaml and secrets.yaml. A test feeds the same bad values through
// all three doors and expects the same reason (rules_test.go).

// RuleError is a value a rule refuses: why, and how to fix it. Each door
// frames it (the flag, the argument, the file and line) and shows Why and
// Fix as they are.
type RuleError struct {
	Value string // "" when it is not to be echoed
	Why   string // what is wrong, e.g. "is the VM's search path, not a credential"
	Fix   string // what to do instead
}

func (e *RuleError) Error() string {
	if e.Value == "" {
		return e.Why + "; " + e.Fix
	}
	return fmt.Sprintf("%q %s; %s", e.Value, e.Why, e.Fix)
}

// The range of cpus, in sandbox.yaml and --cpus: msb 0.7.2 takes 1 to 255.
const (
	MinCPUs = 1
	MaxCPUs = 255
	// MinMemoryMiB is the least memory asb gives a VM: the agent, Node.js
	// and git do not start in less.
	MinMemoryMiB = 256
)

// reservedEnv are variables the VM (or msb, or asb) needs for itself: as a
// secret, the guest would get a placeholder in place of its value.
var reservedEnv = []string{"PATH", "HOME", "USER", "LOGNAME", "SHELL", "PWD", "OLDPWD", "TERM", "LANG",
	"LANGUAGE", "TZ", "TMPDIR", "HOSTNAME", "MAIL", "EDITOR", "VISUAL", "PAGER", "DISPLAY", "IFS", "PS1", "PS2",
	"SHLVL", "_", "NODE_OPTIONS", "NODE_PATH", "NODE_EXTRA_CA_CERTS", "PYTHONPATH", "PYTHONHOME", "GOPATH",
	"GOROOT", "JAVA_HOME", "SSL_CERT_FILE", "SSL_CERT_DIR", "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE",
	"HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "ALL_PROXY", "SSH_AUTH_SOCK", "GIT_DIR", "GIT_WORK_TREE"}

// reservedEnvPrefixes are families of such variables: msb's own
// placeholders (MSB_), asb's settings (ASB_), the locale, the loaders.
var reservedEnvPrefixes = []string{"MSB_", "ASB_", "LC_", "LD_", "DYLD_", "XDG_", "BASH_"}

// MaxProjectName is the longest project name: the name is the claim, the
// pod's host name and the Service of the Kubernetes export, each a DNS
// label of at most 63 characters, as much as msb's VM names allow.
const MaxProjectName = 63

// ProjectName is the rule on the project's name (asb init --name, the
// folder's name, asb.yaml's name): it names the VMs, volumes and image, and
// every object of the Kubernetes export (asb export kubernetes), whose API
// server takes a name only as an RFC 1035 label: lowercase letters, digits
// and dashes, starting with a letter and ending with a letter or digit.
func ProjectName(s string) *RuleError {
	fix := "use lowercase letters, digits and dashes, starting with a letter and ending with a letter or digit, at most 63 characters (e.g. my-project)"
	switch {
	case s == "":
		return &RuleError{Why: "a project needs a name", Fix: fix}
	case len(s) > MaxProjectName:
		return &RuleError{Value: s, Why: fmt.Sprintf("is longer than %d characters", MaxProjectName), Fix: fix}
	case !ValidProjectName(s) || s[0] < 'a' || s[0] > 'z' || s[len(s)-1] == '-':
		return &RuleError{Value: s, Why: "is not a project name (it names the VMs and image, and every object of the Kubernetes export, whose API server takes only DNS labels)", Fix: fix}
	}
	return nil
}

// SecretName is the rule on a secret's name: the variable the VM sees, in
// upper case, and none the VM or msb needs for something else.
func SecretName(s string) *RuleError {
	fix := "name it after what it holds, in capitals, e.g. GITHUB_TOKEN"
	switch {
	case s == "":
		return &RuleError{Why: "a secret needs a name", Fix: fix}
	case !ValidEnvName(s):
		return &RuleError{Value: s, Why: "is not an environment variable name (letters, digits and _, not starting with a digit)", Fix: fix}
	case strings.ToUpper(s) != s:
		return &RuleError{Value: s, Why: "has lower-case letters; secret names are upper case, so that no ordinary variable is taken for one", Fix: fix}
	case slices.Contains(reservedEnv, s):
		return &RuleError{Value: s, Why: "is a variable the VM needs for itself: as a secret, the guest would get a placeholder in place of its value", Fix: fix}
	}
	for _, p := range reservedEnvPrefixes {
		if strings.HasPrefix(s, p) {
			return &RuleError{Value: s, Why: "starts with " + p + ", which belongs to " + prefixOwner[p], Fix: fix}
		}
	}
	return nil
}

var prefixOwner = map[string]string{"MSB_": "msb (its placeholders are MSB_<NAME>)", "ASB_": "asb's own settings",
	"LC_": "the locale", "LD_": "the dynamic loader", "DYLD_": "the dynamic loader", "XDG_": "the desktop's folders",
	"BASH_": "bash"}

// Host is the rule on a host the VM may reach or a secret may be sent to: a
// domain name (api.github.com) or every subdomain of one (*.example.com),
// never an IP address, a port, a scheme or a path, nor a wildcard over a
// whole top-level domain.
func Host(s string) *RuleError {
	fix := "use a domain name such as api.github.com or *.example.com (no scheme, port, path or IP address)"
	// msb compares names without case and without the root's trailing dot.
	h := strings.ToLower(strings.TrimSuffix(s, "."))
	switch {
	case strings.TrimSpace(s) == "":
		return &RuleError{Why: "a host is empty", Fix: fix}
	case strings.Contains(s, "://"):
		return &RuleError{Value: s, Why: "is a URL, not a host", Fix: "give its host alone, e.g. " + hostOfURL(s)}
	case isIP(s):
		return &RuleError{Value: s, Why: "is an IP address; msb allows domains", Fix: fix}
	case strings.HasPrefix(h, ".") && ValidHost(h[1:]):
		return &RuleError{Value: s, Why: "starts with a dot: not supported by asb, because it is unclear whether it means the name or every name below it",
			Fix: "write " + h[1:] + " or *." + h[1:]}
	case strings.HasPrefix(h, "*.") && strings.Count(h, ".") < 2:
		return &RuleError{Value: s, Why: "would allow a whole top-level domain (msb refuses it)", Fix: "name the domain, e.g. *.example.com"}
	case !ValidHost(h):
		return &RuleError{Value: s, Why: "is not a domain name", Fix: fix}
	case strings.HasPrefix(h, "*.") && isPublicSuffix(h[2:]):
		return &RuleError{Value: s, Why: "is a wildcard over the public suffix " + h[2:] + ": not supported by asb, because every site anyone registers under it would be reachable",
			Fix: "name the site below it, e.g. *.example." + h[2:]}
	}
	return nil
}

// isPublicSuffix reports whether name is a suffix under which anyone can
// register a name (co.uk, github.io, workers.dev), by the Public Suffix List.
func isPublicSuffix(name string) bool {
	ps, _ := publicsuffix.PublicSuffix(name)
	return ps == name
}

func hostOfURL(s string) string {
	_, rest, _ := strings.Cut(s, "://")
	h, _, _ := strings.Cut(rest, "/")
	h, _, _ = strings.Cut(h, ":")
	if !ValidHost(h) {
		return "api.example.com"
	}
	return h
}

func isIP(s string) bool {
	_, err := netip.ParseAddr(strings.Trim(s, "[]"))
	return err == nil
}

// Port is the rule on a forwarded port, [BIND:]HOST:GUEST[/tcp|/udp].
func Port(s string) (PortSpec, *RuleError) {
	p, err := ParsePort(s)
	if err != nil {
		// ParsePort's message starts with the value: the door shows it.
		why := strings.TrimPrefix(err.Error(), fmt.Sprintf("port %q", s))
		return p, &RuleError{Value: s, Why: strings.TrimSpace(strings.TrimPrefix(why, ":")), Fix: "use HOST:GUEST, e.g. 8080:80 or 127.0.0.1:8080:80/tcp"}
	}
	return p, nil
}

// PortConflict is the rule between forwarded ports: a host port (of one
// protocol) is forwarded once. It returns the index of the first spec that
// takes a host port an earlier one took, with the reason, or -1.
func PortConflict(specs []PortSpec) (int, *RuleError) {
	for j, b := range specs {
		for _, a := range specs[:j] {
			if SameHostPort(a, b) {
				return j, &RuleError{Value: b.String(), Why: fmt.Sprintf("forwards host port %d/%s, which %s forwards already", b.Host, b.Protocol, a),
					Fix: "forward each host port once: drop one of them, or use another host port"}
			}
		}
	}
	return -1, nil
}

// SameHostPort reports whether a and b take the same host port: the same
// number and protocol on the same address (0.0.0.0 takes them all).
func SameHostPort(a, b PortSpec) bool {
	return a.Host == b.Host && a.Protocol == b.Protocol &&
		(bindOf(a) == bindOf(b) || anyAddr(bindOf(a)) || anyAddr(bindOf(b)))
}

func anyAddr(s string) bool { return s == "0.0.0.0" || s == "::" }

func bindOf(p PortSpec) string {
	if p.Bind == "" {
		return "127.0.0.1"
	}
	return p.Bind
}

// PortExposure says who else can reach p ("" when only this machine can:
// msb's default 127.0.0.1 and all of 127.0.0.0/8 are loopback).
func PortExposure(p PortSpec) string {
	if a, err := netip.ParseAddr(bindOf(p)); err == nil && a.IsLoopback() {
		return ""
	}
	return fmt.Sprintf("port %d is bound to %s, so other machines may reach it, not only this one", p.Host, bindOf(p))
}

// CPUs is the rule on the VM's CPUs.
func CPUs(n int) *RuleError {
	if n < MinCPUs || n > MaxCPUs {
		return &RuleError{Value: fmt.Sprint(n), Why: fmt.Sprintf("is out of range: a VM has %d to %d CPUs", MinCPUs, MaxCPUs),
			Fix: "give a whole number of CPUs in that range, e.g. 2"}
	}
	return nil
}

// MaxMemoryMiB is the most memory asb gives a VM (1024G); msb itself
// takes up to 4194303G and fails only when the VM boots.
const MaxMemoryMiB = 1024 * 1024

// Memory is the rule on the VM's memory: a size msb reads (M or G), from
// MinMemoryMiB to MaxMemoryMiB.
func Memory(s string) *RuleError {
	mib, err := ParseSize(s)
	if err != nil && strings.Contains(err.Error(), "too large") {
		return &RuleError{Value: s, Why: "is too large: msb reads at most 4194303G (and asb gives a VM at most 1024G)",
			Fix: fmt.Sprintf("give the VM at most %dG", MaxMemoryMiB/1024)}
	}
	if err != nil {
		return &RuleError{Value: s, Why: "is not a size msb reads", Fix: "use a number with a unit M or G, e.g. 512M or 4G (msb reads no other unit)"}
	}
	if mib < MinMemoryMiB {
		return &RuleError{Value: s, Why: fmt.Sprintf("is %d MiB, too little for the agent", mib), Fix: fmt.Sprintf("give the VM at least %dM", MinMemoryMiB)}
	}
	if mib > MaxMemoryMiB {
		return &RuleError{Value: s, Why: fmt.Sprintf("is %d MiB: not supported by asb, because no host has it (msb would fail only at boot)", mib),
			Fix: fmt.Sprintf("give the VM at most %dG", MaxMemoryMiB/1024)}
	}
	return nil
}
