package schema

import (
	"fmt"
	"net/netip"
	"slices"
	"strings"
)

// The egress evaluator: what msb 0.7.2 lets the VM reach, decided the way
// msb decides it, without a VM. Every asb command that asks "can the VM
// reach HOST?" (asb network check and learn, the secrets check of asb
// validate) asks it here.
//
// How msb resolves network (observed with msb create + msb inspect, see
// TestRealEgressAgreesWithMsb): each allow and deny entry becomes one rule;
// the deny rules come first, then the allow rules, and the first rule that
// matches decides. A non-empty allow list makes the policy an allow list:
// the rules of policy public or open are dropped and the default is deny.
// Without allow entries the policy (public when there is none) keeps its
// own rules after the deny rules: public is "DNS to the host, then the
// public internet", default deny; open is default allow; none is nothing.
//
// Names: `example.com` (or domain=example.com) matches that name only;
// `*.example.com` (or suffix=example.com) is msb's domain_suffix, which
// matches example.com itself AND every name below it.

// Rule is one egress rule as msb resolves it.
type Rule struct {
	Allow bool
	// Entry is the allow or deny entry it comes from, as written; "" for a
	// rule of the policy (public's).
	Entry string
	// The destination: exactly one of these is set.
	Domain string       // an exact name
	Suffix string       // a name and every name below it
	CIDR   netip.Prefix // addresses
	Group  string       // public, private, loopback, link_local, metadata, multicast, host
	Any    bool         // every destination
	// Protocols (tcp, udp, icmpv4, icmpv6) and port ranges; empty: all.
	Protocols []string
	Ports     [][2]int
}

// EgressPolicy is network as msb resolves it: rules in order, then the
// default.
type EgressPolicy struct {
	Rules        []Rule
	DefaultAllow bool
	// Form names the policy for people: allow-list, public, open, none;
	// Default is set when sandbox.yaml has no network key, NoPolicy when
	// network names no policy (msb's default then: public).
	Form     string
	Default  bool
	NoPolicy bool
	// Dropped is the policy an allow list replaced ("public", "open").
	Dropped string
	// Invalid lists the entries msb would refuse (msb create fails then).
	Invalid []InvalidEntry
	// Hostnames is strict hostname checking (egress_strict.go); nil: not
	// modelled (msb 0.7.2's default, off).
	Hostnames *HostnameChecking
}

// InvalidEntry is an allow or deny entry msb 0.7.2 does not accept.
type InvalidEntry struct {
	Field, Entry, Why string
}

// Decision is the verdict on one destination.
type Decision struct {
	Allowed bool
	Why     string // one sentence for a person: what decided and why
	Rule    string // the sandbox.yaml entry that decided; "" for the policy or its default
}

// Egress resolves nw (nil: sandbox.yaml has no network key) the way msb
// 0.7.2 does.
func Egress(nw *Network) EgressPolicy {
	publicRules := []Rule{
		{Allow: true, Group: "host", Protocols: []string{"udp", "tcp"}, Ports: [][2]int{{53, 53}}},
		{Allow: true, Group: "public"},
	}
	switch {
	case nw == nil:
		return EgressPolicy{Rules: publicRules, Form: "public", Default: true}
	case nw.Short:
		switch nw.Policy {
		case "none":
			return EgressPolicy{Form: "none"}
		case "open":
			return EgressPolicy{Form: "open", DefaultAllow: true}
		}
		return EgressPolicy{Rules: publicRules, Form: "public"}
	}
	p := EgressPolicy{}
	p.Rules = p.entries("network.deny", nw.Deny, false)
	if len(nw.Allow) > 0 {
		p.Form, p.Dropped = "allow-list", nw.Policy
		if p.Dropped == "none" {
			p.Dropped = ""
		}
		p.Rules = append(p.Rules, p.entries("network.allow", nw.Allow, true)...)
		return p
	}
	switch nw.Policy {
	case "none":
		p.Form = "none"
	case "open":
		p.Form, p.DefaultAllow = "open", true
	default:
		p.Form, p.NoPolicy = "public", nw.Policy == ""
		p.Rules = append(p.Rules, publicRules...)
	}
	return p
}

func (p *EgressPolicy) entries(field string, list []string, allow bool) []Rule {
	var out []Rule
	for i, e := range list {
		r, err := ParseEgressEntry(e)
		if err != nil {
			p.Invalid = append(p.Invalid, InvalidEntry{Field: fmt.Sprintf("%s[%d]", field, i), Entry: e, Why: err.Error()})
			continue
		}
		r.Allow = allow
		out = append(out, r)
	}
	return out
}

// Decide says whether the VM may open a TCP connection to host (a domain
// name or an IP address) on port. For a name, msb decides twice: its DNS
// answers the lookup only when a rule allows the name (or DNS), then the
// connection is matched against the rules with the name and port. A name
// is taken to resolve to a public address.
func (p EgressPolicy) Decide(host string, port int) Decision {
	host = CanonicalHost(host)
	ip, err := netip.ParseAddr(strings.Trim(host, "[]"))
	if err == nil {
		return p.decideIP(ip.Unmap(), port)
	}
	if host == HostAlias {
		return p.decideHostAlias(port)
	}
	if i, allow := p.first(func(r Rule) bool { return r.matchesLookup(host) }); !allow {
		return p.denied(i, host, port, true)
	}
	i, allow := p.first(func(r Rule) bool { return r.matchesName(host, port) })
	if !allow {
		return p.denied(i, host, port, false)
	}
	return p.strictBlocks(i, host, port, p.allowed(i, host, ""))
}

func (p EgressPolicy) decideIP(ip netip.Addr, port int) Decision {
	host := ip.String()
	i, allow := p.first(func(r Rule) bool { return r.matchesIP(ip, port) })
	if allow {
		return p.noSNIBlocks(host, port, p.allowed(i, host, IPGroup(ip)))
	}
	if i >= 0 {
		return p.denied(i, host, port, false)
	}
	g := IPGroup(ip)
	switch {
	case p.Form == "public" && g != "public":
		why := fmt.Sprintf("%s is %s: network public reaches public addresses only", host, groupWords(g))
		return Decision{Why: why + p.formNote()}
	case p.Form == "allow-list":
		return Decision{Why: fmt.Sprintf("no allow entry matches the address %s (egress is denied but for network.allow; a name entry never matches an address)", host) + p.formNote()}
	}
	return p.denied(-1, host, port, false)
}

// first returns the index of the first rule that matches and its action;
// -1 and the default when none does.
func (p EgressPolicy) first(match func(Rule) bool) (int, bool) {
	for i, r := range p.Rules {
		if match(r) {
			return i, r.Allow
		}
	}
	return -1, p.DefaultAllow
}

func (p EgressPolicy) allowed(i int, host, group string) Decision {
	if i < 0 {
		return Decision{Allowed: true, Why: "network is open: the VM reaches every host, private addresses and your host included"}
	}
	r := p.Rules[i]
	if r.Entry == "" {
		what := host + " is on the public internet"
		if group != "" {
			what = host + " is a public address"
		}
		return Decision{Allowed: true, Why: what + " (" + p.publicWords() + ")"}
	}
	why := fmt.Sprintf("%s matches network.allow entry %q", host, r.Entry)
	if r.Suffix != "" && host == r.Suffix {
		why += fmt.Sprintf(" (in msb, *.%s takes in %s itself)", r.Suffix, r.Suffix)
	}
	return Decision{Allowed: true, Why: why, Rule: r.Entry}
}

func (p EgressPolicy) denied(i int, host string, port int, lookup bool) Decision {
	if i >= 0 && p.Rules[i].Entry != "" {
		why := fmt.Sprintf("%s matches network.deny entry %q (msb checks the deny entries before the allow entries)", host, p.Rules[i].Entry)
		return Decision{Why: why, Rule: p.Rules[i].Entry}
	}
	switch p.Form {
	case "none":
		return Decision{Why: "network is none: the VM reaches no host"}
	case "allow-list":
		return Decision{Why: p.noAllow(host, port, lookup) + p.formNote()}
	}
	return Decision{Why: fmt.Sprintf("no rule of network %s lets %s through on port %d", p.Form, host, port)}
}

// noAllow explains an allow-list default deny, naming the entries that
// cover the host on other ports or protocols.
func (p EgressPolicy) noAllow(host string, port int, lookup bool) string {
	if lookup {
		return fmt.Sprintf("no allow entry matches %s (egress is denied but for network.allow)", host)
	}
	var partial []string
	for _, r := range p.Rules {
		if r.Allow && r.matchesLookup(host) && r.Entry != "" {
			partial = append(partial, fmt.Sprintf("%q", r.Entry))
		}
	}
	why := fmt.Sprintf("no allow entry matches %s on TCP port %d (egress is denied but for network.allow", host, port)
	if len(partial) > 0 {
		why += "; " + strings.Join(partial, ", ") + " allows it on other ports or protocols only"
	}
	return why + ")"
}

func (p EgressPolicy) formNote() string {
	if p.Dropped != "" {
		return fmt.Sprintf("; policy %s does not apply: msb 0.7.2 keeps only the allow list when allow has entries", p.Dropped)
	}
	return ""
}

func (p EgressPolicy) publicWords() string {
	switch {
	case p.Default:
		return "no network key: msb's default is public"
	case p.NoPolicy:
		return "network names no policy: msb's default is public"
	}
	return "network: public"
}

// Reaches reports whether the VM can reach host, a name or an address, on
// HTTPS's port 443; for a pattern *.d, whether it can reach some name it
// takes in (d itself, a name below d, or one an allow entry names).
func (p EgressPolicy) Reaches(host string) bool {
	host = CanonicalHost(host)
	suffix, ok := strings.CutPrefix(host, "*.")
	if !ok {
		return p.Decide(host, 443).Allowed
	}
	names := []string{suffix, "asb-probe." + suffix}
	for _, r := range p.Rules {
		for _, n := range []string{r.Domain, r.Suffix} {
			if r.Allow && n != "" && MatchesSuffix(n, suffix) {
				names = append(names, n)
			}
		}
	}
	return slices.ContainsFunc(names, func(n string) bool { return p.Decide(n, 443).Allowed })
}

// EntryCovers reports whether an allow or deny entry (a name, or *.d)
// takes in host (a name, or a pattern *.h), as msb matches names: a name
// only itself, *.d both d and every name below it.
func EntryCovers(entry, host string) bool {
	entry, host = CanonicalHost(entry), CanonicalHost(host)
	if entry == host {
		return true
	}
	suffix, ok := strings.CutPrefix(entry, "*.")
	if !ok {
		return false
	}
	return MatchesSuffix(strings.TrimPrefix(host, "*."), suffix)
}

// MatchesSuffix is msb's domain_suffix match: name is suffix or a name
// below it (api.example.com and example.com, never badexample.com).
func MatchesSuffix(name, suffix string) bool {
	if name == suffix {
		return true
	}
	prefix, ok := strings.CutSuffix(name, suffix)
	return ok && len(prefix) > 1 && strings.HasSuffix(prefix, ".")
}

// CanonicalHost is a name as msb compares it: lower case, without the
// leading and trailing dots.
func CanonicalHost(h string) string {
	return strings.Trim(strings.ToLower(strings.TrimSpace(h)), ".")
}
