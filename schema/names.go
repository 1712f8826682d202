// Package schema holds the typed configuration asb reads and writes: the
// options of `asb init`, the agent presets' manifests, and the files msb reads
// (sandbox.yaml for --conf, secrets.yaml for --secret-conf). Every value a user
// supplies is checked here before anything is rendered or written.
package schema

import (
	"fmt"
	"net/netip"
	"strconv"
	"strings"
)

var (
	envNameRe  = lazyRegexp(`^[A-Za-z_][A-Za-z0-9_]*$`)
	imageRefRe = lazyRegexp(`^[a-z0-9]+([._/:@-][a-zA-Z0-9_.-]+)*$`)
)

// ValidProjectName reports whether s may name a project: lowercase letters,
// digits and dashes, starting with a letter or digit, at most 63 characters.
// The name reaches VM names, volume names and image tags, so it is strict.
func ValidProjectName(s string) bool { return shaped(s, 63, isLowerDigit, "-") }

// validLabel reports whether s is a DNS label: lowercase letters, digits
// and dashes, neither first nor last a dash, at most 63 characters.
func validLabel(s string) bool { return ValidProjectName(s) && s[len(s)-1] != '-' }

// shaped reports whether s is 1 to maxLen bytes, the first one that first
// accepts, the others ones that first accepts or in more. (The rules of
// names with a bounded length as loops: as regular expressions, such as
// ^[a-z0-9][a-z0-9-]{0,62}$, each compiles to a program of one state per
// repetition, which the commands that check one name paid at start-up.)
func shaped(s string, maxLen int, first func(byte) bool, more string) bool {
	if s == "" || len(s) > maxLen || !first(s[0]) {
		return false
	}
	for i := 1; i < len(s); i++ {
		if !first(s[i]) && strings.IndexByte(more, s[i]) < 0 {
			return false
		}
	}
	return true
}

func isLowerDigit(c byte) bool { return c >= 'a' && c <= 'z' || c >= '0' && c <= '9' }

func isAlnumByte(c byte) bool { return isLowerDigit(c) || c >= 'A' && c <= 'Z' }

// SanitizeName turns any folder name into a valid project name of at most
// maxLen characters: lowercase letters and digits, every other run of
// characters one dash; fallback when nothing is left.
func SanitizeName(s string, maxLen int, fallback string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			b.WriteRune(r)
		case b.Len() > 0 && !strings.HasSuffix(b.String(), "-"):
			b.WriteByte('-')
		}
	}
	out := strings.Trim(b.String(), "-")
	if len(out) > maxLen {
		out = strings.Trim(out[:maxLen], "-")
	}
	if out == "" {
		out = fallback
	}
	return out
}

// ValidEnvName reports whether s is a portable environment variable name.
func ValidEnvName(s string) bool { return envNameRe().MatchString(s) }

// ValidRelPath reports whether s is a relative slash path of plain names
// (letters, digits, @ . _ -), with no empty, "." or ".." segment: safe to
// join under a known folder and to put in a shell word.
func ValidRelPath(s string) bool {
	if s == "" || len(s) > 255 {
		return false
	}
	for seg := range strings.SplitSeq(s, "/") {
		if seg == "" || seg == "." || seg == ".." || !relSegRe().MatchString(seg) {
			return false
		}
	}
	return true
}

// ValidEnvValue reports whether s is a plain value for an image's ENV: no
// quote, backslash, $ or control character for Docker or a shell to expand.
func ValidEnvValue(s string) bool { return len(s) <= 255 && envValueRe().MatchString(s) }

var (
	relSegRe   = lazyRegexp(`^[A-Za-z0-9@._-]+$`)
	envValueRe = lazyRegexp(`^[A-Za-z0-9 ._:/,=+@-]*$`)
)

// ValidVersion reports whether s looks like a package version or dist-tag
// ("1.2.3", "latest"); it never contains shell metacharacters.
func ValidVersion(s string) bool { return shaped(s, 64, isAlnumByte, ".+-") }

// ValidImageRef reports whether s is a plausible OCI image reference
// ("debian:bookworm-slim", "ghcr.io/org/img@sha256:…").
func ValidImageRef(s string) bool { return len(s) <= 255 && imageRefRe().MatchString(s) }

// ValidHost reports whether s is a DNS name msb can allow: labels of letters,
// digits and dashes, at least two labels, optionally led by "*." for every
// subdomain. IP literals, ports, schemes and paths are refused.
func ValidHost(s string) bool {
	h := strings.TrimPrefix(s, "*.")
	if len(h) == 0 || len(h) > 253 || strings.HasSuffix(h, ".") {
		return false
	}
	labels := strings.Split(h, ".")
	if len(labels) < 2 {
		return false
	}
	for _, l := range labels {
		if !validLabel(strings.ToLower(l)) {
			return false
		}
	}
	// An all-numeric last label is an IP address, not a domain.
	if _, err := strconv.Atoi(labels[len(labels)-1]); err == nil {
		return false
	}
	return true
}

// ParseSize parses a memory size the way msb 0.7.2 reads it (see
// ParseMsbSize): a number, optionally with a fraction, and an optional unit
// M or G, MiB when there is none ("512M", "4G", "1.5G"). It returns MiB.
func ParseSize(s string) (int64, error) {
	if err := ParseMsbSize(s); err != nil {
		return 0, err
	}
	num, unit := s, "M"
	if last := s[len(s)-1]; last < '0' || last > '9' {
		num, unit = s[:len(s)-1], strings.ToUpper(string(last))
	}
	f, err := strconv.ParseFloat(num, 64)
	if err != nil {
		return 0, fmt.Errorf("size %q: %w", s, err)
	}
	if unit == "G" {
		f *= 1024
	}
	if f < 1 {
		return 0, fmt.Errorf("size %q is below 1 MiB", s)
	}
	return int64(f), nil
}

// PortSpec is a forwarded port as msb writes it: [BIND:]HOST:GUEST[/tcp|/udp].
type PortSpec struct {
	Bind     string
	Host     int
	Guest    int
	Protocol string
}

// ParsePort parses "8080:80", "9000:9000/udp" or "127.0.0.1:8080:80".
func ParsePort(s string) (PortSpec, error) {
	var p PortSpec
	spec := s
	p.Protocol = "tcp"
	if i := strings.LastIndex(spec, "/"); i >= 0 {
		p.Protocol = spec[i+1:]
		spec = spec[:i]
		if p.Protocol != "tcp" && p.Protocol != "udp" {
			return p, fmt.Errorf("port %q: protocol must be tcp or udp", s)
		}
	}
	if rest, ok := strings.CutPrefix(spec, "["); ok {
		// [IPv6]:HOST:GUEST, as msb reads it
		addr, ports, found := strings.Cut(rest, "]:")
		a, err := netip.ParseAddr(addr)
		if !found || err != nil || !a.Is6() || a.Zone() != "" {
			return p, fmt.Errorf("port %q: bind address %q is not an IPv6 address", s, addr)
		}
		p.Bind, spec = addr, "x:"+ports
	}
	parts := strings.Split(spec, ":")
	switch len(parts) {
	case 2:
	case 3:
		if p.Bind == "" {
			p.Bind = parts[0]
		}
		parts = parts[1:]
		if !validIPv4(p.Bind) && !strings.Contains(p.Bind, ":") {
			return p, fmt.Errorf("port %q: bind address %q is not an IPv4 address", s, p.Bind)
		}
	default:
		return p, fmt.Errorf("port %q is not HOST:GUEST (e.g. 8080:80)", s)
	}
	var err error
	if p.Host, err = parsePortNumber(parts[0]); err != nil {
		return p, fmt.Errorf("port %q: host port %w", s, err)
	}
	if p.Guest, err = parsePortNumber(parts[1]); err != nil {
		return p, fmt.Errorf("port %q: guest port %w", s, err)
	}
	return p, nil
}

// String renders the spec back in msb's form.
func (p PortSpec) String() string {
	s := fmt.Sprintf("%d:%d", p.Host, p.Guest)
	switch {
	case strings.Contains(p.Bind, ":"):
		s = "[" + p.Bind + "]:" + s
	case p.Bind != "":
		s = p.Bind + ":" + s
	}
	if p.Protocol != "" && p.Protocol != "tcp" {
		s += "/" + p.Protocol
	}
	return s
}

func parsePortNumber(s string) (int, error) {
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 || n > 65535 || strconv.Itoa(n) != s {
		return 0, fmt.Errorf("%q must be a number from 1 to 65535", s)
	}
	return n, nil
}

func validIPv4(s string) bool {
	parts := strings.Split(s, ".")
	if len(parts) != 4 {
		return false
	}
	for _, p := range parts {
		n, err := strconv.Atoi(p)
		if err != nil || n < 0 || n > 255 || strconv.Itoa(n) != p {
			return false
		}
	}
	return true
}

// ConfigFilePath is the rule on the path of a file in an agent's config
// folder, below that folder, where the Kubernetes export carries it: the
// path of a ConfigMap volume's item, which the API server refuses when it
// starts with ".." (the kubelet keeps its own ..data link there) or has a
// ".." segment, and the pod then never starts.
func ConfigFilePath(p string) *RuleError {
	fix := "rename or remove it in the agent's config folder (a name starting with .. cannot be carried into a pod)"
	if p == "" || strings.HasPrefix(p, "/") || strings.HasPrefix(p, "..") {
		return &RuleError{Value: p, Why: "is not a path a pod's config volume may hold (it starts with .. or /)", Fix: fix}
	}
	for seg := range strings.SplitSeq(p, "/") {
		if seg == ".." || seg == "" {
			return &RuleError{Value: p, Why: "has an empty or .. segment, which a pod's config volume may not hold", Fix: fix}
		}
	}
	return nil
}
