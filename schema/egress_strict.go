package schema

import (
	"fmt"
	"slices"
)

// Strict hostname checking (msb 0.7.3's default; network.strict turns it
// on or off on every release that has the key, 0.7.2 included): an HTTPS
// connection allowed only by a name rule needs TLS interception, so that
// msb can see the name the request really asks for; without it the
// connection is blocked. Plain HTTP, and rules on addresses, ranges or
// groups, are not affected.

// HostnameChecking is what decides strict mode for one folder on one msb
// release.
type HostnameChecking struct {
	Strict bool // in effect: network.strict, else the release's default
	// Explicit is set when network.strict says so (not the default).
	Explicit bool
	// Release names the msb whose default applies ("" when explicit).
	Release string
	// Intercept: TLS interception is on (network.tls.enabled, or a secret,
	// which turns it on); Bypass are tls.bypass's patterns, not intercepted.
	Intercept bool
	Bypass    []string
}

// HostnameCheckingOf reads network (nil: none) and whether the folder has
// secrets, for a release whose default is strictDefault (release names it).
func HostnameCheckingOf(nw *Network, hasSecrets, strictDefault bool, release string) HostnameChecking {
	h := HostnameChecking{Strict: strictDefault, Release: release, Intercept: hasSecrets}
	if nw == nil {
		return h
	}
	if nw.Strict != nil {
		h.Strict, h.Explicit, h.Release = *nw.Strict, true, ""
	}
	if nw.TLS != nil {
		if nw.TLS.Enabled != nil {
			h.Intercept = *nw.TLS.Enabled
		}
		h.Bypass = nw.TLS.Bypass
	}
	return h
}

// WithHostnames returns p judged with strict mode h (Decide then applies
// it to HTTPS on port 443).
func (p EgressPolicy) WithHostnames(h HostnameChecking) EgressPolicy {
	p.Hostnames = &h
	return p
}

// intercepted reports whether msb intercepts TLS to host.
func (h HostnameChecking) intercepted(host string) bool {
	return h.Intercept && !slices.ContainsFunc(h.Bypass, func(b string) bool { return EntryCovers(b, host) })
}

// strictBlocks turns an allow by name rule i into strict mode's refusal,
// when it applies.
func (p EgressPolicy) strictBlocks(i int, host string, port int, d Decision) Decision {
	h := p.Hostnames
	if h == nil || !h.Strict || port != DefaultCheckPort || i < 0 {
		return d
	}
	if r := p.Rules[i]; r.Domain == "" && r.Suffix == "" {
		return d
	}
	if h.intercepted(host) {
		d.Why += " (HTTPS to it is intercepted, so strict hostname checking lets it through)"
		return d
	}
	source := "network.strict is true"
	if !h.Explicit {
		source = fmt.Sprintf("msb %s checks hostnames strictly by default (0.7.3+)", h.Release)
	}
	why := fmt.Sprintf("%s, but %s and HTTPS to %s is not intercepted (no secret, no network.tls.enabled", d.Why, source, host)
	if len(h.Bypass) > 0 && h.Intercept {
		why = fmt.Sprintf("%s, but %s and %s is in network.tls.bypass (not intercepted", d.Why, source, host)
	}
	return Decision{Why: why + "): msb blocks HTTPS allowed only by a name it cannot inspect; network.strict: false lets it through by the name it asks for", Rule: d.Rule}
}
