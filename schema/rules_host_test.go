package schema_test

import (
	"os"
	"strings"
	"testing"

	"github.com/agents-sandbox/asb/schema"
)

// TestHostNormalisedAsMsb: msb compares names without case and without the
// trailing dot, so asb accepts them; a wildcard over a public suffix is
// refused (asb is stricter than msb there on purpose).
func TestHostNormalisedAsMsb(t *testing.T) {
	for _, ok := range []string{"Example.COM.", "api.github.com.", "*.Example.com", "*.example.co.uk", "*.myapp.workers.dev"} {
		if re := schema.Host(ok); re != nil {
			t.Errorf("Host(%q) = %v, want ok", ok, re)
		}
	}
	for s, why := range map[string]string{
		"*.co.uk":       "not supported by asb: because every site",
		"*.workers.dev": "public suffix workers.dev",
		"*.github.io":   "public suffix github.io",
		"*.com":         "whole top-level domain",
		".example.com":  "starts with a dot",
		"a..com":        "not a domain name",
	} {
		re := schema.Host(s)
		if re == nil {
			t.Errorf("Host(%q) accepted", s)
			continue
		}
		for _, w := range strings.Split(why, ": ") {
			if !strings.Contains(re.Why, strings.TrimSuffix(w, ":")) && !strings.Contains(re.Why, w) {
				t.Errorf("Host(%q) = %q, want it to say %q", s, re.Why, w)
			}
		}
	}
}

// TestMemoryBounds: msb's size forms (.5G, 1.5G) are read; asb refuses
// below 256M and above 1024G.
func TestMemoryBounds(t *testing.T) {
	for _, ok := range []string{".5G", "1.5G", "4096", "1024G", "512m"} {
		if re := schema.Memory(ok); re != nil {
			t.Errorf("Memory(%q) = %v", ok, re)
		}
	}
	for _, bad := range []string{"99999999999G", "1025G", "1.5M", "5.", "0", "128M", "4194304G"} {
		if re := schema.Memory(bad); re == nil {
			t.Errorf("Memory(%q) accepted", bad)
		}
	}
}

// TestPortIPv6Bind: msb reads [ADDR]:HOST:GUEST; asb reads and writes it
// back the same way.
func TestPortIPv6Bind(t *testing.T) {
	for in, want := range map[string]string{"[::1]:8080:80": "[::1]:8080:80", "[::]:9000:9000/udp": "[::]:9000:9000/udp", "127.0.0.1:8080:80": "127.0.0.1:8080:80"} {
		p, re := schema.Port(in)
		if re != nil {
			t.Errorf("Port(%q) = %v", in, re)
			continue
		}
		if p.String() != want {
			t.Errorf("Port(%q).String() = %q, want %q", in, p.String(), want)
		}
	}
	for _, bad := range []string{"::1:8080:80", "[1.2.3.4]:80:80", "[::1]80:80", "[fe80::1%eth0]:80:80"} {
		if _, re := schema.Port(bad); re == nil {
			t.Errorf("Port(%q) accepted", bad)
		}
	}
}

// TestNonUTF8HostPath: a host folder whose name is not UTF-8 (it cannot be
// written in sandbox.yaml) gets a clear message, not a YAML error.
func TestNonUTF8HostPath(t *testing.T) {
	r := schema.MountRules{Dir: "/srv/outer", Home: "/home/u"}
	re := r.HostFolder("/srv/outer/data-\xff", true)
	if re == nil || !strings.Contains(re.Why, "is not valid UTF-8") || !strings.Contains(re.Fix, "rename the folder") {
		t.Fatalf("HostFolder(non-UTF-8) = %v", re)
	}
	if strings.ContainsRune(re.Value, '\xff') || !strings.Contains(re.Value, "\uFFFD") {
		t.Errorf("the value %q is not shown as valid UTF-8", re.Value)
	}
}

// TestKeyTableInSecurityDoc: docs/security.md lists every key of the table
// with its verdict, and every consent comment.
func TestKeyTableInSecurityDoc(t *testing.T) {
	b, err := os.ReadFile("../docs/security.md")
	if err != nil {
		t.Fatal(err)
	}
	readme := string(b)
	for _, r := range schema.KeyTable {
		row := "| `" + r.Key + "` | " + formOf(r) + r.Verdict.String()
		if !strings.Contains(readme, row) {
			t.Errorf("docs/security.md has no row %q", row)
		}
	}
	for _, c := range []string{schema.HomeConsent, schema.HostConsent, schema.VolumeConsent, schema.TLSConsent} {
		if !strings.Contains(readme, "`# "+c+"`") {
			t.Errorf("docs/security.md does not name the consent comment # %s", c)
		}
	}
}

func formOf(r schema.KeyRule) string {
	if r.Form == "" {
		return " | "
	}
	return "`" + r.Form + "` | "
}
