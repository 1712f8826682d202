package schema

import "fmt"

// HostAlias is the name msb gives the VM for the machine it runs on. The
// VM's /etc/hosts maps it to msb's gateway address, so no DNS query and no
// name rule ever sees it: a connection to it is one to the host group,
// which only `host` (or `any`) allows, whatever the policy says of public
// names. Observed with msb 0.7.2 in the real-boot network test
// (e2e/net_real_test.go).
const HostAlias = "host.microsandbox.internal"

// decideHostAlias decides a TCP connection to HostAlias on port.
func (p EgressPolicy) decideHostAlias(port int) Decision {
	i, allow := p.first(func(r Rule) bool { return (r.Any || r.Group == "host") && r.protoPort("tcp", port) })
	switch {
	case allow && i < 0:
		return p.allowed(i, HostAlias, "")
	case allow:
		r := p.Rules[i]
		return Decision{Allowed: true, Rule: r.Entry,
			Why: fmt.Sprintf("%s is msb's name for your host, and network entry %q allows the host", HostAlias, r.Entry)}
	case i >= 0 && p.Rules[i].Entry != "":
		return p.denied(i, HostAlias, port, false)
	case p.Form == "none":
		return p.denied(-1, HostAlias, port, false)
	}
	return Decision{Why: fmt.Sprintf("%s is msb's name for your host (its gateway address, from the VM's /etc/hosts): only a `host` entry lets the VM reach it", HostAlias) + p.formNote()}
}

// noSNIBlocks turns an allowed connection to an address into msb's
// refusal when msb intercepts TLS on its port: msb finds an intercepted
// connection's host by the name the client sends in the TLS handshake
// (SNI), and a client connecting to an address sends none. msb 0.7.2
// waits, then drops it ("TLS proxy task ended … error=SNI extraction timed
// out", seen in the real-boot network test). Plain HTTP to the address,
// and any port msb does not intercept, are not affected.
func (p EgressPolicy) noSNIBlocks(host string, port int, d Decision) Decision {
	h := p.Hostnames
	if !d.Allowed || h == nil || !h.Intercept || port != DefaultCheckPort {
		return d
	}
	return Decision{Rule: d.Rule, Why: fmt.Sprintf("%s, but msb intercepts TLS on port %d here (a secret, or network.tls.enabled) "+
		"and reads the host from the name the client sends (SNI); a connection to an address sends none, and msb drops it: use the host's name", d.Why, port)}
}
