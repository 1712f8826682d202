package schema

import (
	"strings"
	"testing"
)

// Under interception (a secret), HTTPS to an address carries no SNI and
// msb drops it; plain HTTP to it, and the same address without
// interception, go through. As msb 0.7.2 did in the real-boot network test.
func TestEgressNoSNI(t *testing.T) {
	public := Egress(&Network{Short: true, Policy: "public"})
	cases := []struct {
		name      string
		intercept bool
		port      int
		ok        bool
		why       string
	}{
		{"intercepted 443", true, 443, false, "a connection to an address sends none"},
		{"intercepted, plain HTTP", true, 80, true, "is a public address"},
		{"not intercepted", false, 443, true, "is a public address"},
	}
	for _, tc := range cases {
		d := public.WithHostnames(HostnameChecking{Intercept: tc.intercept}).Decide("93.184.215.14", tc.port)
		if d.Allowed != tc.ok || !strings.Contains(d.Why, tc.why) {
			t.Errorf("%s: %+v, want allowed=%v and %q", tc.name, d, tc.ok, tc.why)
		}
	}
	// A name is not affected: its client sends the name.
	if d := public.WithHostnames(HostnameChecking{Intercept: true}).Decide("example.com", 443); !d.Allowed {
		t.Errorf("a name under interception: %+v", d)
	}
}
