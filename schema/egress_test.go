package schema

import (
	"net/netip"
	"reflect"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// The forms below were resolved by the real msb 0.7.2 (msb create, then
// msb inspect's network.policy); effectiveEgress must agree.
func TestEffectiveEgressMatchesMsb(t *testing.T) {
	none := &Network{Short: true, Policy: "none"}
	cases := []struct {
		name  string
		nw    *Network
		host  string
		reach bool
	}{
		{"no network key: public", nil, "example.com", true},
		{"bare none: nothing", none, "opencode.ai", false},
		{"bare public", &Network{Short: true, Policy: "public"}, "example.com", true},
		{"allow list: listed host", &Network{Allow: []string{"opencode.ai"}}, "opencode.ai", true},
		{"allow list: other host", &Network{Allow: []string{"opencode.ai"}}, "example.com", false},
		{"allow list: wildcard", &Network{Allow: []string{"*.github.com"}}, "api.github.com", true},
		{"public plus allow: public rule dropped", &Network{Policy: "public", Allow: []string{"opencode.ai"}}, "example.com", false},
		{"none plus allow: the allow list", &Network{Policy: "none", Allow: []string{"opencode.ai"}}, "opencode.ai", true},
		{"object with only deny: public minus deny", &Network{Deny: []string{"evil.example"}}, "example.com", true},
		{"object with only deny: denied host", &Network{Deny: []string{"evil.example"}}, "evil.example", false},
		{"allow: [] is public", &Network{Allow: []string{}}, "example.com", true},
		{"deny wins over allow", &Network{Allow: []string{"*.example.com"}, Deny: []string{"bad.example.com"}}, "bad.example.com", false},
	}
	for _, c := range cases {
		if got := effectiveEgress(c.nw).reaches(c.host); got != c.reach {
			t.Errorf("%s: reaches(%s) = %v, want %v", c.name, c.host, got, c.reach)
		}
	}
}

// TestEgressDecide is the table of asb network check's verdicts: the
// decision, the entry that made it and the sentence a person reads.
func TestEgressDecide(t *testing.T) {
	allowList := func(allow ...string) *Network { return &Network{Allow: allow} }
	cases := []struct {
		name string
		nw   *Network
		host string
		port int
		ok   bool
		rule string
		why  string // a part of Why
	}{
		{"allowed", allowList("opencode.ai"), "opencode.ai", 443, true, "opencode.ai", `opencode.ai matches network.allow entry "opencode.ai"`},
		{"denied", allowList("example.com"), "api.example.com", 443, false, "",
			"no allow entry matches api.example.com (egress is denied but for network.allow)"},
		{"subdomain of *.d", allowList("*.github.com"), "api.github.com", 443, true, "*.github.com", `matches network.allow entry "*.github.com"`},
		{"deep subdomain of *.d", allowList("*.github.com"), "a.b.github.com", 443, true, "*.github.com", ""},
		{"apex of *.d: msb's domain_suffix takes it in", allowList("*.github.com"), "github.com", 443, true, "*.github.com", "takes in github.com itself"},
		{"a bare name is exact", allowList("github.com"), "api.github.com", 443, false, "", "no allow entry matches api.github.com"},
		{"*.d is not a string suffix", allowList("*.github.com"), "badgithub.com", 443, false, "", ""},
		{"case and trailing dot", allowList("api.github.com"), "API.GitHub.com.", 443, true, "api.github.com", ""},
		{"public", &Network{Short: true, Policy: "public"}, "example.com", 443, true, "", "example.com is on the public internet (network: public)"},
		{"no network key", nil, "example.com", 80, true, "", "no network key: msb's default is public"},
		{"public: not a private address", &Network{Short: true, Policy: "public"}, "10.0.0.5", 5432, false, "", "10.0.0.5 is a private address: network public reaches public addresses only"},
		{"public: not the metadata address", nil, "169.254.169.254", 80, false, "", "the cloud metadata address"},
		{"public: a public address", nil, "93.184.215.14", 443, true, "", "93.184.215.14 is a public address"},
		{"none", &Network{Short: true, Policy: "none"}, "opencode.ai", 443, false, "", "network is none: the VM reaches no host"},
		{"none with deny", &Network{Policy: "none", Deny: []string{"evil.com"}}, "opencode.ai", 443, false, "", "network is none"},
		{"open", &Network{Short: true, Policy: "open"}, "10.0.0.5", 22, true, "", "network is open"},
		// msb's name for the host is the host group, never a public name
		// (the real-boot network test saw msb refuse it under public).
		{"host alias: public", &Network{Short: true, Policy: "public"}, HostAlias, 8080, false, "", "only a `host` entry lets the VM reach it"},
		{"host alias: allow list naming it", allowList(HostAlias), HostAlias, 8080, false, "", "msb's name for your host"},
		{"host alias: the host group", allowList("host"), HostAlias, 8080, true, "host", "allows the host"},
		{"host alias: open", &Network{Short: true, Policy: "open"}, HostAlias, 8080, true, "", "network is open"},
		{"host alias: none", &Network{Short: true, Policy: "none"}, HostAlias, 8080, false, "", "network is none"},
		{"open plus allow is an allow list", &Network{Policy: "open", Allow: []string{"opencode.ai"}}, "example.com", 443, false, "",
			"policy open does not apply"},
		{"deny over allow", &Network{Allow: []string{"*.example.com"}, Deny: []string{"bad.example.com"}}, "bad.example.com", 443, false, "bad.example.com",
			"msb checks the deny entries before the allow entries"},
		{"deny *.d under public", &Network{Policy: "public", Deny: []string{"*.ads.example.com"}}, "ads.example.com", 443, false, "*.ads.example.com", ""},
		{"deny list leaves the rest public", &Network{Deny: []string{"evil.com"}}, "example.com", 443, true, "", "network names no policy: msb's default is public"},
		{"policy public and a deny list", &Network{Policy: "public", Deny: []string{"evil.com"}}, "example.com", 443, true, "", "(network: public)"},
		{"a port entry: its port", allowList("example.com:tcp:443"), "example.com", 443, true, "example.com:tcp:443", ""},
		{"a port entry: another port", allowList("example.com:tcp:443"), "example.com", 80, false, "",
			`no allow entry matches example.com on TCP port 80 (egress is denied but for network.allow; "example.com:tcp:443" allows it on other ports or protocols only)`},
		{"a port range", allowList("domain=example.com:tcp:8000-8999"), "example.com", 8443, true, "domain=example.com:tcp:8000-8999", ""},
		{"udp only", allowList("suffix=example.net:udp"), "example.net", 443, false, "", "other ports or protocols only"},
		{"an address entry", allowList("opencode.ai", "1.2.3.0/24"), "1.2.3.4", 443, true, "1.2.3.0/24", ""},
		{"a name entry never matches an address", allowList("opencode.ai"), "1.2.3.4", 443, false, "", "no allow entry matches the address 1.2.3.4"},
		{"any port but no DNS: the lookup fails", allowList("any:tcp:443"), "example.com", 443, false, "", "no allow entry matches example.com (egress"},
		{"dns plus public entries", allowList("dns", "public"), "example.com", 443, true, "public", ""},
		{"IPv6 public", nil, "[2001:db8::1]", 443, true, "", "is a public address"},
	}
	for _, c := range cases {
		port := c.port
		d := Egress(c.nw).Decide(c.host, port)
		if d.Allowed != c.ok || d.Rule != c.rule || !strings.Contains(d.Why, c.why) {
			t.Errorf("%s: Decide(%s, %d) = %+v; want allowed=%v rule=%q why ∋ %q", c.name, c.host, port, d, c.ok, c.rule, c.why)
		}
	}
}

func TestParseEgressEntry(t *testing.T) {
	good := map[string]Rule{
		"example.com":                 {Domain: "example.com"},
		"*.Example.com":               {Suffix: "example.com"},
		"suffix=example.com":          {Suffix: "example.com"},
		"domain=localhost":            {Domain: "localhost"},
		"10.0.0.5":                    {CIDR: netip.MustParsePrefix("10.0.0.5/32")},
		"10.1.2.3/8":                  {CIDR: netip.MustParsePrefix("10.0.0.0/8")},
		"[fd00::/8]":                  {CIDR: netip.MustParsePrefix("fd00::/8")},
		"[::1]:tcp:22":                {CIDR: netip.MustParsePrefix("::1/128"), Protocols: []string{"tcp"}, Ports: [][2]int{{22, 22}}},
		"dns":                         {Group: "host", Protocols: []string{"udp", "tcp"}, Ports: [][2]int{{53, 53}}},
		"dns:tcp:53":                  {Group: "host", Protocols: []string{"tcp"}, Ports: [][2]int{{53, 53}}},
		"meta":                        {Group: "metadata"},
		"link-local":                  {Group: "link_local"},
		"any:tcp:22":                  {Any: true, Protocols: []string{"tcp"}, Ports: [][2]int{{22, 22}}},
		"x.com:any:any":               {Domain: "x.com"},
		"*.example.net:udp:1000-2000": {Suffix: "example.net", Protocols: []string{"udp"}, Ports: [][2]int{{1000, 2000}}},
	}
	for in, want := range good {
		got, err := ParseEgressEntry(in)
		want.Entry = in
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("ParseEgressEntry(%q) = %+v, %v; want %+v", in, got, err, want)
		}
	}
	for in, why := range map[string]string{
		"example.com:443":   "is a port, not a protocol",
		"*.com":             "whole top-level domain",
		"localhost":         "single label",
		"fd00::/8":          "in brackets",
		"allow@example.com": "msb adds allow@",
		"example.com:tcp:0": "between 1 and 65535",
		"exa mple.com":      "not a domain name",
		"x.com:https":       "not any, tcp",
	} {
		if _, err := ParseEgressEntry(in); err == nil || !strings.Contains(err.Error(), why) {
			t.Errorf("ParseEgressEntry(%q) = %v; want an error with %q", in, err, why)
		}
	}
}

func TestEgressInvalidEntries(t *testing.T) {
	p := Egress(&Network{Allow: []string{"opencode.ai", "example.com:443"}})
	if len(p.Invalid) != 1 || p.Invalid[0].Field != "network.allow[1]" || p.Invalid[0].Entry != "example.com:443" {
		t.Errorf("Invalid = %+v", p.Invalid)
	}
}

func TestEntryCovers(t *testing.T) {
	for _, c := range []struct {
		entry, host string
		want        bool
	}{
		{"*.example.com", "example.com", true},
		{"*.example.com", "api.example.com", true},
		{"*.example.com", "*.api.example.com", true},
		{"*.example.com", "*.example.com", true},
		{"*.example.com", "badexample.com", false},
		{"example.com", "api.example.com", false},
		{"example.com", "*.example.com", false},
		{"Example.COM", "example.com", true},
	} {
		if got := EntryCovers(c.entry, c.host); got != c.want {
			t.Errorf("EntryCovers(%q, %q) = %v, want %v", c.entry, c.host, got, c.want)
		}
	}
}

func TestReachesPattern(t *testing.T) {
	for _, c := range []struct {
		nw   *Network
		host string
		want bool
	}{
		{&Network{Allow: []string{"api.github.com"}}, "*.github.com", true}, // some name of it is allowed
		{&Network{Allow: []string{"github.com"}}, "*.github.com", true},     // its apex
		{&Network{Allow: []string{"opencode.ai"}}, "*.github.com", false},
		{&Network{Allow: []string{"*.github.com"}, Deny: []string{"*.github.com"}}, "*.github.com", false},
		{nil, "*.github.com", true},
	} {
		if got := Egress(c.nw).Reaches(c.host); got != c.want {
			t.Errorf("Egress(%+v).Reaches(%q) = %v, want %v", c.nw, c.host, got, c.want)
		}
	}
}

func TestRawNetworkKeepsEveryEntry(t *testing.T) {
	var doc yaml.Node
	src := "network:\n  policy: public\n  allow: [opencode.ai, \"example.com:tcp:443\"]\n  deny: [\"10.0.0.0/8\"]\n"
	if err := yaml.Unmarshal([]byte(src), &doc); err != nil {
		t.Fatal(err)
	}
	nw, err := RawNetwork(doc.Content[0].Content[1])
	if err != nil || nw.Policy != "public" || len(nw.Allow) != 2 || nw.Deny[0] != "10.0.0.0/8" {
		t.Fatalf("RawNetwork = %+v, %v", nw, err)
	}
	if err := yaml.Unmarshal([]byte("network: private\n"), &doc); err != nil {
		t.Fatal(err)
	}
	if _, err := RawNetwork(doc.Content[0].Content[1]); err == nil || !strings.Contains(err.Error(), "not none, public or open") {
		t.Errorf("RawNetwork(private) = %v", err)
	}
}

func TestDestination(t *testing.T) {
	for _, c := range []struct {
		arg  string
		flag int
		host string
		port int
		why  string // "" when it is accepted
	}{
		{"api.example.com", 0, "api.example.com", 0, ""},
		{"API.Example.com.", 8443, "api.example.com", 8443, ""},
		{"https://api.example.com/v1/chat?x=1", 0, "api.example.com", 443, ""},
		{"http://example.com", 0, "example.com", 80, ""},
		{"https://example.com:8443/", 0, "example.com", 8443, ""},
		{"https://example.com:8443/", 8443, "example.com", 8443, ""},
		{"example.com:22", 0, "example.com", 22, ""},
		{"10.0.0.5", 5432, "10.0.0.5", 5432, ""},
		{"2001:db8::1", 0, "2001:db8::1", 0, ""},
		{"[2001:db8::1]:443", 0, "2001:db8::1", 443, ""},
		{"https://example.com:8443/", 443, "", 0, "names port 8443, and --port says 443"},
		{"git://example.com/x", 0, "", 0, "without a port"},
		{"*.example.com", 0, "", 0, "is a pattern"},
		{"localhost", 0, "", 0, "single label"},
		{"exa_mple.com", 0, "", 0, "is not a host name"},
		{"example.com/path", 0, "", 0, "is not a host name"},
		{"example.com:http", 0, "", 0, "not a number from 1 to 65535"},
		{"example.com", 70000, "", 0, "is not a port"},
		{"", 0, "", 0, "has no host"},
	} {
		h, p, re := Destination(c.arg, c.flag)
		switch {
		case c.why == "" && (re != nil || h != c.host || p != c.port):
			t.Errorf("Destination(%q, %d) = %q, %d, %v; want %q, %d", c.arg, c.flag, h, p, re, c.host, c.port)
		case c.why != "" && (re == nil || !strings.Contains(re.Error(), c.why)):
			t.Errorf("Destination(%q, %d) = %v; want an error with %q", c.arg, c.flag, re, c.why)
		}
	}
}
