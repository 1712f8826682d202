package schema

import (
	"fmt"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
)

// schemePorts are the default ports of the URL schemes a destination may
// be given as.
var schemePorts = map[string]int{"https": 443, "wss": 443, "http": 80, "ws": 80}

// DefaultCheckPort is the port a destination is checked on when neither it
// nor --port names one: HTTPS's, what agents mostly speak.
const DefaultCheckPort = 443

// Destination is the rule on what `asb network check` takes: a host name,
// an IP address, HOST:PORT, [IPv6]:PORT, or a URL (reduced to its host and
// its port, the scheme's when it names none). port is --port (0: not
// given); the port returned is 0 when nothing named one.
func Destination(arg string, port int) (string, int, *RuleError) {
	fix := "give a host such as api.example.com, an IP address, HOST:PORT or a URL such as https://api.example.com/v1"
	s := strings.TrimSpace(arg)
	host, named, re := splitDestination(s)
	if re != nil {
		return "", 0, re
	}
	switch {
	case port != 0 && named != 0 && port != named:
		return "", 0, &RuleError{Value: arg, Why: fmt.Sprintf("names port %d, and --port says %d", named, port), Fix: "give the port once"}
	case port < 0 || port > 65535:
		return "", 0, &RuleError{Value: strconv.Itoa(port), Why: "is not a port", Fix: "give --port a number from 1 to 65535"}
	case port == 0:
		port = named
	}
	if ip, err := netip.ParseAddr(strings.Trim(host, "[]")); err == nil {
		return ip.Unmap().String(), port, nil
	}
	h := CanonicalHost(host)
	switch {
	case h == "":
		return "", 0, &RuleError{Value: arg, Why: "has no host", Fix: fix}
	case strings.Contains(h, "*"):
		return "", 0, &RuleError{Value: arg, Why: "is a pattern, not one host", Fix: "check a name it takes in, e.g. " + strings.ReplaceAll(h, "*", "api")}
	case !strings.Contains(h, "."):
		return "", 0, &RuleError{Value: arg, Why: "is a single label, not a domain name (msb's rules name full domains)", Fix: fix}
	case !ValidHost(h):
		return "", 0, &RuleError{Value: arg, Why: "is not a host name", Fix: fix}
	}
	return h, port, nil
}

// splitDestination cuts a URL, HOST:PORT or [IPv6]:PORT into its host and
// port (0 when none is named).
func splitDestination(s string) (string, int, *RuleError) {
	if strings.Contains(s, "://") {
		u, err := url.Parse(s)
		if err != nil || u.Hostname() == "" {
			return "", 0, &RuleError{Value: s, Why: "is not a URL with a host", Fix: "give it as https://api.example.com/…, or the host alone"}
		}
		p, re := parsePort(s, u.Port())
		if re != nil {
			return "", 0, re
		}
		if p == 0 {
			p = schemePorts[strings.ToLower(u.Scheme)]
		}
		if p == 0 {
			return "", 0, &RuleError{Value: s, Why: fmt.Sprintf("is a %s URL without a port", u.Scheme), Fix: "add --port N"}
		}
		return u.Hostname(), p, nil
	}
	if _, err := netip.ParseAddr(s); err == nil {
		return s, 0, nil // a bare IPv6 address: its colons are not a port
	}
	host, port := s, ""
	if i := strings.LastIndex(s, ":"); i >= 0 && !strings.HasSuffix(s, "]") {
		host, port = s[:i], s[i+1:]
	}
	if strings.ContainsAny(host, "/?#@ ") {
		return "", 0, &RuleError{Value: s, Why: "is not a host name", Fix: "give a host alone, e.g. api.example.com, or a whole URL"}
	}
	p, re := parsePort(s, port)
	return host, p, re
}

func parsePort(arg, s string) (int, *RuleError) {
	if s == "" {
		return 0, nil
	}
	p, err := strconv.Atoi(s)
	if err != nil || p < 1 || p > 65535 {
		return 0, &RuleError{Value: arg, Why: fmt.Sprintf("has port %q, not a number from 1 to 65535", s), Fix: "give a port such as 443"}
	}
	return p, nil
}
