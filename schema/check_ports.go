package schema

import (
	"fmt"
	"slices"
)

// checkPorts applies the rules between forwarded ports (sandbox.yaml's
// ports and network.ports together): a host port is forwarded once, and a
// port bound beyond loopback is reachable from other machines.
func (c *checker) checkPorts() {
	var specs []PortSpec
	var where []string
	add := func(list []string, field string) {
		for i, s := range list {
			if p, re := Port(s); re == nil {
				specs = append(specs, p)
				where = append(where, fmt.Sprintf("%s[%d]", field, i))
			}
		}
	}
	add(c.sb.Ports, "ports")
	if c.sb.Network != nil {
		add(c.sb.Network.Ports, "network.ports")
	}
	for k := range specs {
		if j, re := PortConflict(specs[:k+1]); j == k {
			c.at(SandboxFile, c.sbL.at[where[k]], SeverityError, where[k], re.Fix, "%s %q %s", where[k], re.Value, re.Why)
		}
	}
	for k, p := range specs {
		if w := PortExposure(p); w != "" && !slices.Contains(where[:k], where[k]) {
			c.at(SandboxFile, c.sbL.at[where[k]], SeverityWarning, where[k],
				"bind it to 127.0.0.1 (the default: write HOST:GUEST) unless other machines must reach it", "%s: %s", where[k], w)
		}
	}
}
