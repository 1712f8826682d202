package schema

import (
	"fmt"

	"go.yaml.in/yaml/v3"
)

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
	l.mapping(n, field, NetworkKeys, func(key string, _, v *yaml.Node) {
		if !isNull(v) {
			l.networkKey(nw, key, v, field+"."+key)
		}
	})
	if nw.MaxConnections != nil && (nw.MaxTCPConnections != nil || nw.MaxUDPConnections != nil) {
		l.errf(l.at[field+".max_connections"], field+".max_connections", "give either max_connections or max_tcp_connections/max_udp_connections",
			"%s.max_connections cannot be combined with max_tcp_connections or max_udp_connections (msb rejects it)", field)
	}
	return nw
}

// networkKey reads one key of the network mapping into nw.
func (l *loader) networkKey(nw *Network, key string, v *yaml.Node, f string) {
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
		nw.DNS = l.dns(v, f)
	case "tls":
		nw.TLS = l.tls(v, f)
	case "strict":
		nw.Strict = l.optBool(v, f)
	case "trust_host_cas":
		nw.TrustHostCAs = l.optBool(v, f)
	case "max_connections":
		nw.MaxConnections = l.optInt(v, f)
	case "max_tcp_connections":
		nw.MaxTCPConnections = l.optInt(v, f)
	case "max_udp_connections":
		nw.MaxUDPConnections = l.optInt(v, f)
	}
}

func (l *loader) dns(v *yaml.Node, f string) *DNS {
	d := &DNS{}
	l.mapping(v, f, []string{"rebind_protection", "nameservers", "query_timeout"}, func(k string, _, dv *yaml.Node) {
		if isNull(dv) {
			return
		}
		switch k {
		case "rebind_protection":
			d.RebindProtection = l.optBool(dv, f+"."+k)
		case "nameservers":
			d.Nameservers = l.strList(dv, f+"."+k)
		case "query_timeout":
			d.QueryTimeout, _ = l.duration(dv, f+"."+k)
		}
	})
	return d
}

func (l *loader) tls(v *yaml.Node, f string) *TLS {
	t := &TLS{}
	l.mapping(v, f, []string{"enabled", "bypass", "verify_upstream", "block_quic"}, func(k string, _, tv *yaml.Node) {
		if isNull(tv) {
			return
		}
		switch k {
		case "enabled":
			t.Enabled = l.optBool(tv, f+"."+k)
		case "bypass":
			t.Bypass = l.strList(tv, f+"."+k)
		case "verify_upstream":
			t.VerifyUpstream = l.optBool(tv, f+"."+k)
		case "block_quic":
			t.BlockQUIC = l.optBool(tv, f+"."+k)
		}
	})
	return t
}

// optBool reads an optional boolean: nil when absent or wrong (the error
// is recorded).
func (l *loader) optBool(v *yaml.Node, f string) *bool {
	b, ok := l.boolean(v, f)
	if !ok {
		return nil
	}
	return &b
}

// optInt reads an optional count of 0 … 2³²-1.
func (l *loader) optInt(v *yaml.Node, f string) *int {
	i, ok := l.integer(v, f, 0, 1<<32-1)
	if !ok {
		return nil
	}
	n := int(i)
	return &n
}

// rules reads network.allow / network.deny: each entry a domain. msb takes a
// single label as an ambiguous keyword and rejects it.
func (l *loader) rules(v *yaml.Node, field string) []string {
	return l.checkedList(v, field, Host, "")
}

// checkedList reads a list of strings, each judged by check: a refused one
// is an error at its place (its fix with fixMore added) and left out.
func (l *loader) checkedList(v *yaml.Node, field string, check func(string) *RuleError, fixMore string) []string {
	items, _ := l.seq(v, field)
	var out []string
	for i, it := range items {
		f := fmt.Sprintf("%s[%d]", field, i)
		s, ok := l.str(it, f)
		if !ok {
			continue
		}
		if re := check(s); re != nil {
			l.errf(it, f, re.Fix+fixMore, "%s %q %s", f, s, re.Why)
			continue
		}
		out = append(out, s)
	}
	return out
}
