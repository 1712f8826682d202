package schema

// egress is what the checks ask of the network: everything (the zero
// policy with all set, when there is no sandbox.yaml to read), or
// EgressPolicy's verdict (egress.go: the one evaluator).
type egress struct {
	all    bool
	policy *EgressPolicy
}

// effectiveEgress is network as msb 0.7.2 resolves it (Egress).
func effectiveEgress(nw *Network) egress {
	p := Egress(nw)
	return egress{policy: &p}
}

// reaches reports whether host (a domain or *.domain) is reachable.
func (e egress) reaches(host string) bool {
	if e.policy == nil {
		return e.all
	}
	return e.policy.Reaches(host)
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
	case nw.Policy == "open" && len(nw.Allow) > 0:
		c.at(SandboxFile, n, SeverityWarning, "network.policy", "remove policy: open to keep only the allow list, or remove allow for everything",
			"policy open combined with allow: msb 0.7.2 then drops the open policy, so only the allow list is reachable")
	case nw.Policy == "open":
		c.at(SandboxFile, n, SeverityWarning, "network", "use network: {allow: [HOST, …]} to allow only the hosts the agent needs",
			"network is open: the VM can reach the whole internet, private ranges and the host included")
	case nw.Policy == "public" && len(nw.Allow) > 0:
		c.at(SandboxFile, n, SeverityWarning, "network.policy", "remove policy: public to keep only the allow list, or remove allow for the whole internet",
			"policy public combined with allow: msb 0.7.2 then drops the public rule, so only the allow list is reachable")
	case nw.Policy == "public":
		c.at(SandboxFile, n, SeverityWarning, "network", "use network: {allow: [HOST, …]} to allow only the hosts the agent needs",
			"network is public: the VM can reach the whole public internet (egress is not limited to the agent's hosts)")
	case nw.Policy == "" && len(nw.Allow) == 0 && c.sbL.hasKey("network.allow"):
		c.at(SandboxFile, c.sbL.at["network.allow"], SeverityError, "network.allow",
			"write network: none to block every host (or network: public, if the whole public internet is meant)",
			"not supported by asb: an empty allow list, because %s", EmptyAllowList)
	}
	// (Each allow and deny entry is a schema.Host: the loader checks it.)
}

func (l *loader) hasKey(key string) bool { return l.at[key] != nil }

// EmptyAllowList is why an empty network.allow is refused, by validate and
// by the edits that would leave one.
const EmptyAllowList = "msb 0.7.2 takes an empty allow list for none at all, and lets the VM reach the whole public internet"
