package schema

import (
	"strings"
)

// egress describes what msb 0.7.2 lets the VM reach.
type egress struct {
	all   bool     // the whole (public) internet, but for deny
	allow []string // otherwise only these
	deny  []string // never these
}

// effectiveEgress is what msb 0.7.2 resolves network to, as observed with
// msb create + inspect: no key, "public", "open" and an object without
// allow entries (allow: [] included) reach the public internet; an object
// with allow entries reaches only them, whatever its policy (public's rule
// is dropped, none's deny-all becomes the allow list); a bare "none"
// reaches nothing. deny entries are subtracted in every form.
func effectiveEgress(nw *Network) egress {
	switch {
	case nw == nil:
		return egress{all: true}
	case nw.Short && nw.Policy == "none":
		return egress{}
	case nw.Short:
		return egress{all: true}
	case len(nw.Allow) > 0:
		return egress{allow: nw.Allow, deny: nw.Deny}
	case nw.Policy == "none":
		return egress{deny: nw.Deny}
	}
	return egress{all: true, deny: nw.Deny}
}

// reaches reports whether host (a domain or *.domain) is reachable.
func (e egress) reaches(host string) bool {
	if covers(e.deny, host) {
		return false
	}
	return e.all || covers(e.allow, host)
}

// covers reports whether a list of domains and *.domains takes in host.
func covers(list []string, host string) bool {
	for _, a := range list {
		if strings.EqualFold(a, host) {
			return true
		}
		if d, ok := strings.CutPrefix(a, "*."); ok && strings.HasSuffix(strings.ToLower(strings.TrimPrefix(host, "*.")), "."+strings.ToLower(d)) {
			return true
		}
	}
	return false
}

func (c *checker) checkNetwork() {
	nw := c.sb.Network
	n := c.sbL.at["network"]
	if nw == nil {
		if c.sbL.at["network"] == nil && !c.sbL.hasKey("network") {
			c.add(Problem{File: SandboxFile, Severity: SeverityWarning, Field: "network",
				Msg: "there is no network key: msb's default lets the VM reach the whole public internet",
				Fix: "add network: {allow: [HOST, …]} to allow only the hosts the agent needs"})
		}
		return
	}
	if nw.Short {
		n = c.sbL.at["network"]
	} else if p := c.sbL.at["network.policy"]; p != nil {
		n = p
	}
	switch {
	case nw.Policy == "open":
		c.at(SandboxFile, n, SeverityWarning, "network", "use network: {allow: [HOST, …]} to allow only the hosts the agent needs",
			"network is open: the VM can reach the whole internet, private ranges and the host included")
	case nw.Policy == "public" && len(nw.Allow) > 0:
		c.at(SandboxFile, n, SeverityWarning, "network.policy", "remove policy: public to keep only the allow list, or remove allow for the whole internet",
			"policy public combined with allow: msb 0.7.2 then drops the public rule, so only the allow list is reachable")
	case nw.Policy == "public":
		c.at(SandboxFile, n, SeverityWarning, "network", "use network: {allow: [HOST, …]} to allow only the hosts the agent needs",
			"network is public: the VM can reach the whole public internet (egress is not limited to the agent's hosts)")
	}
	// (Each allow and deny entry is a schema.Host: the loader checks it.)
}

func (l *loader) hasKey(key string) bool { return l.at[key] != nil }
