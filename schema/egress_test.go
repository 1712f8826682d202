package schema

import "testing"

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
