package schema

import (
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// The entries of network.allow and network.deny as msb 0.7.2 reads them:
// `TARGET[:PROTO[:PORTS]]` (msb's rule token after its "allow@"/"deny@").
// TARGET is a name (example.com), *.name or suffix=name, domain=name, an
// IPv4 address or CIDR, an [IPv6] address or CIDR, a group (public, private,
// loopback, link-local, meta, multicast, host), dns (the host's DNS, port
// 53) or any; PROTO any, tcp, udp, icmpv4 or icmpv6; PORTS any, N or LO-HI.
// asb itself writes names and *.names only (the Host rule); the others are
// read so that a hand-written entry is judged as msb judges it.

// egressGroups maps msb's group keywords to the names inspect shows.
var egressGroups = map[string]string{
	"public": "public", "private": "private", "loopback": "loopback", "link-local": "link_local",
	"meta": "metadata", "multicast": "multicast", "host": "host",
}

// ParseEgressEntry reads one allow or deny entry into its rule (Allow unset).
func ParseEgressEntry(entry string) (Rule, error) {
	r := Rule{Entry: entry}
	s := strings.TrimSpace(entry)
	if strings.Contains(s, "@") {
		return r, errors.New("has an @: write the target alone (msb adds allow@ or deny@ itself)")
	}
	target, rest, err := splitTarget(s)
	if err != nil {
		return r, err
	}
	if err := r.setTarget(target); err != nil {
		return r, err
	}
	var proto, ports string
	if rest != "" {
		proto, ports, _ = strings.Cut(rest, ":")
		if strings.Contains(ports, ":") {
			return r, errors.New("has more than TARGET:PROTO:PORTS")
		}
	}
	if err := r.setProto(proto); err != nil {
		return r, err
	}
	return r, r.setPorts(ports)
}

// splitTarget cuts TARGET from ":PROTO[:PORTS]"; an IPv6 target is in
// brackets.
func splitTarget(s string) (target, rest string, err error) {
	if strings.HasPrefix(s, "[") {
		end := strings.Index(s, "]")
		if end < 0 {
			return "", "", errors.New("opens [ without ]")
		}
		target, rest = s[1:end], s[end+1:]
		if rest != "" && !strings.HasPrefix(rest, ":") {
			return "", "", errors.New("has text after ]")
		}
		if _, err := netip.ParsePrefix(target); err != nil {
			if _, err := netip.ParseAddr(target); err != nil {
				return "", "", fmt.Errorf("[%s] is not an IPv6 address or CIDR", target)
			}
		}
		return target, strings.TrimPrefix(rest, ":"), nil
	}
	_, errP := netip.ParsePrefix(s)
	_, errA := netip.ParseAddr(s)
	if strings.Count(s, ":") > 2 || (errP == nil || errA == nil) && strings.Contains(s, ":") {
		return "", "", errors.New("looks like an IPv6 address: write it in brackets, e.g. [fd00::/8]")
	}
	target, rest, _ = strings.Cut(s, ":")
	return target, rest, nil
}

func (r *Rule) setTarget(t string) error {
	if t == "" {
		return errors.New("is empty")
	}
	if p, err := netip.ParsePrefix(t); err == nil {
		r.CIDR = p.Masked()
		return nil
	}
	if a, err := netip.ParseAddr(t); err == nil {
		r.CIDR = netip.PrefixFrom(a, a.BitLen())
		return nil
	}
	switch {
	case t == "any":
		r.Any = true
	case t == "dns":
		r.Group, r.Protocols, r.Ports = "host", []string{"udp", "tcp"}, [][2]int{{53, 53}}
	case egressGroups[t] != "":
		r.Group = egressGroups[t]
	case strings.HasPrefix(t, "domain="):
		return r.setName(&r.Domain, strings.TrimPrefix(t, "domain="), false)
	case strings.HasPrefix(t, "suffix="):
		return r.setName(&r.Suffix, strings.TrimPrefix(t, "suffix="), true)
	case strings.HasPrefix(t, "*."):
		return r.setName(&r.Suffix, strings.TrimPrefix(t, "*."), true)
	default:
		return r.setName(&r.Domain, t, false)
	}
	return nil
}

func (r *Rule) setName(dst *string, name string, suffix bool) error {
	n := CanonicalHost(name)
	single := n != "" && !strings.Contains(n, ".")
	switch {
	case single && suffix:
		return fmt.Errorf("would take in the whole top-level domain %s (msb refuses it)", n)
	case single && !strings.Contains(r.Entry, "="):
		return fmt.Errorf("%q is a single label, which msb finds ambiguous (write domain=%s)", name, n)
	case !ValidHost(n) && !(single && validLabel(n)):
		return fmt.Errorf("%q is not a domain name", name)
	}
	*dst = n
	return nil
}

func (r *Rule) setProto(p string) error {
	switch p {
	case "":
	case "any":
		r.Protocols = nil
	case "tcp", "udp", "icmpv4", "icmpv6":
		r.Protocols = []string{p}
	default:
		if _, err := strconv.Atoi(p); err == nil {
			return fmt.Errorf("%s is a port, not a protocol: write TARGET:tcp:%s", p, p)
		}
		return fmt.Errorf("protocol %q is not any, tcp, udp, icmpv4 or icmpv6", p)
	}
	return nil
}

func (r *Rule) setPorts(s string) error {
	if s == "" {
		return nil
	}
	if s == "any" {
		r.Ports = nil
		return nil
	}
	lo, hi, isRange := strings.Cut(s, "-")
	a, errA := strconv.Atoi(lo)
	b := a
	var errB error
	if isRange {
		b, errB = strconv.Atoi(hi)
	}
	if errA != nil || errB != nil || a < 1 || b > 65535 || a > b {
		return fmt.Errorf("ports %q are not N or LO-HI between 1 and 65535", s)
	}
	r.Ports = [][2]int{{a, b}}
	return nil
}

// protoPort reports whether the rule applies to proto on port.
func (r Rule) protoPort(proto string, port int) bool {
	if len(r.Protocols) > 0 && !slices.Contains(r.Protocols, proto) {
		return false
	}
	if len(r.Ports) == 0 {
		return true
	}
	return slices.ContainsFunc(r.Ports, func(p [2]int) bool { return p[0] <= port && port <= p[1] })
}

// matchesLookup: does the rule decide msb's DNS answer for name? Name
// rules match whatever their protocols and ports; DNS to the host and any
// match when they take in DNS (UDP port 53).
func (r Rule) matchesLookup(name string) bool {
	switch {
	case r.Domain != "":
		return r.Domain == name
	case r.Suffix != "":
		return MatchesSuffix(name, r.Suffix)
	case r.Any || r.Group == "host":
		return r.protoPort("udp", 53)
	}
	return false
}

// matchesName: does the rule decide a TCP connection to name (taken to
// resolve to a public address) on port?
func (r Rule) matchesName(name string, port int) bool {
	switch {
	case r.Domain != "":
		return r.Domain == name && r.protoPort("tcp", port)
	case r.Suffix != "":
		return MatchesSuffix(name, r.Suffix) && r.protoPort("tcp", port)
	case r.Any || r.Group == "public":
		return r.protoPort("tcp", port)
	}
	return false
}

// matchesIP: does the rule decide a TCP connection to the address ip on
// port? Name rules never match an address.
func (r Rule) matchesIP(ip netip.Addr, port int) bool {
	switch {
	case r.Any:
	case r.CIDR.IsValid():
		if !r.CIDR.Contains(ip) {
			return false
		}
	case r.Group != "":
		if r.Group != IPGroup(ip) {
			return false
		}
	default:
		return false
	}
	return r.protoPort("tcp", port)
}

var (
	loopbackNets  = prefixes("127.0.0.0/8", "::1/128")
	privateNets   = prefixes("10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "100.64.0.0/10", "fc00::/7")
	linkLocalNets = prefixes("169.254.0.0/16", "fe80::/10")
	multicastNets = prefixes("224.0.0.0/4", "ff00::/8")
	metadataAddr  = netip.MustParseAddr("169.254.169.254")
)

func prefixes(ss ...string) []netip.Prefix {
	out := make([]netip.Prefix, len(ss))
	for i, s := range ss {
		out[i] = netip.MustParsePrefix(s)
	}
	return out
}

// IPGroup is msb's group of an address: metadata, loopback, private,
// link_local, multicast or public; "" for the unspecified address. (msb's
// host group, the VM's gateway addresses, is not known here.)
func IPGroup(ip netip.Addr) string {
	ip = ip.Unmap()
	in := func(nets []netip.Prefix) bool {
		return slices.ContainsFunc(nets, func(p netip.Prefix) bool { return p.Contains(ip) })
	}
	switch {
	case ip.IsUnspecified():
		return ""
	case ip == metadataAddr:
		return "metadata"
	case in(loopbackNets):
		return "loopback"
	case in(privateNets):
		return "private"
	case in(linkLocalNets):
		return "link_local"
	case in(multicastNets):
		return "multicast"
	}
	return "public"
}

func groupWords(g string) string {
	switch g {
	case "metadata":
		return "the cloud metadata address"
	case "loopback":
		return "a loopback address"
	case "private":
		return "a private address"
	case "link_local":
		return "a link-local address"
	case "multicast":
		return "a multicast address"
	case "":
		return "the unspecified address"
	}
	return "a " + g + " address"
}

// RawNetwork reads the network value of sandbox.yaml (nil: no network key)
// as msb does, keeping every allow and deny entry as written: LoadSandbox
// drops the entries asb refuses, which msb may still take.
func RawNetwork(n *yaml.Node) (*Network, error) {
	if n == nil || n.Tag == "!!null" {
		return nil, nil
	}
	policy := func(v *yaml.Node) (string, error) {
		if v == nil || v.Tag == "!!null" {
			return "", nil
		}
		if v.Kind != yaml.ScalarNode || !slices.Contains(NetworkPolicies, v.Value) {
			return "", fmt.Errorf("line %d: network policy %q is not none, public or open", v.Line, v.Value)
		}
		return v.Value, nil
	}
	if n.Kind == yaml.ScalarNode {
		p, err := policy(n)
		return &Network{Short: true, Policy: p}, err
	}
	if n.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("line %d: network is neither a policy nor a mapping", n.Line)
	}
	nw := &Network{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i].Value, n.Content[i+1]
		var err error
		switch k {
		case "policy":
			nw.Policy, err = policy(v)
		case "allow", "deny":
			var list []string
			if v.Tag != "!!null" {
				err = v.Decode(&list)
			}
			if k == "allow" {
				nw.Allow = list
			} else {
				nw.Deny = list
			}
		case "strict": // strict hostname checking (egress_strict.go)
			var b bool
			if err = v.Decode(&b); err == nil {
				nw.Strict = &b
			}
		case "tls": // interception, which strict mode needs
			nw.TLS = &TLS{}
			err = v.Decode(nw.TLS)
		}
		if err != nil {
			return nil, fmt.Errorf("network.%s: %w", k, err)
		}
	}
	return nw, nil
}
