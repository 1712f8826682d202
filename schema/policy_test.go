package schema_test

import (
	"os"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/agents-sandbox/asb/schema"
)

// The policy's JSON Schema has exactly the keys the loader reads, and
// accepts the example docs/trust.md shows, which the loader reads whole.
func TestPolicySchemaMatchesKeys(t *testing.T) {
	s := loadJSONSchema(t, "policy.schema.json")
	if s["additionalProperties"] != false {
		t.Error("additionalProperties is not false")
	}
	for _, c := range []struct {
		obj  map[string]any
		want []string
	}{{s, schema.PolicyKeys}, {lookup(t, s, "properties/max"), schema.PolicyMaxKeys}} {
		props, _ := c.obj["properties"].(map[string]any)
		var got []string
		for k := range props {
			got = append(got, k)
		}
		sort.Strings(got)
		if want := slices.Sorted(slices.Values(c.want)); !slices.Equal(got, want) {
			t.Errorf("schema keys %v, loader keys %v", got, want)
		}
	}
	doc, err := os.ReadFile("../docs/trust.md")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile("(?s)```yaml\n(# yaml-language-server: \\$schema=(\\S+)\n.*?)```").FindSubmatch(doc)
	if m == nil {
		t.Fatal("docs/trust.md shows no policy file")
	}
	if string(m[2]) != schema.PolicySchemaURL {
		t.Errorf("the example's $schema is %s, want %s", m[2], schema.PolicySchemaURL)
	}
	if _, probs := schema.ParsePolicy("policy.yaml", m[1]); len(probs) > 0 {
		t.Errorf("the example does not load: %v", probs)
	}
	var v any
	if err := yaml.Unmarshal(m[1], &v); err != nil {
		t.Fatal(err)
	}
	if err := validate(s, s, v, ""); err != nil {
		t.Errorf("the schema refuses the example: %v", err)
	}
}

// A policy file with a mistake is refused with its line: asb then runs
// nothing (LoadPolicy's error), rather than a lower floor.
func TestParsePolicyRefusesMistakes(t *testing.T) {
	for _, c := range []struct{ doc, want string }{
		{"network_mode: [allow]\n", "1:1: error: unknown key network_mode"},
		{"network_modes: [allow, everything]\n", `1:24: error: network_modes[1] "everything" is not allowed here`},
		{"secret_hosts: [https://x.example]\n", `secret_hosts[0] "https://x.example" is not allowed here`},
		{"never_allow: pastebin.com\n", "never_allow is not a list"},
		{"ports: no-thanks\n", "ports is not true or false"},
		{"max: {cpus: 4, disk: lots}\n", `max.disk "lots" is not a size`},
		{"max: {gpus: 1}\n", "unknown key max.gpus"},
		{"- a list\n", "a policy is a mapping of keys"},
	} {
		_, probs := schema.ParsePolicy("policy.yaml", []byte(c.doc))
		if len(probs) == 0 || !strings.Contains(probs[0].String(), c.want) {
			t.Errorf("%q: %v, want %q", c.doc, probs, c.want)
		}
	}
	dir := t.TempDir()
	if err := os.WriteFile(dir+"/policy.yaml", []byte("ports: maybe\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := schema.LoadPolicy(dir+"/policy.yaml", ""); err == nil || !strings.Contains(err.Error(), "cannot be used") {
		t.Errorf("a broken machine policy: %v", err)
	}
	if p, err := schema.LoadPolicy(dir+"/none.yaml", ""); err != nil || !p.Empty() {
		t.Errorf("no policy file: %v %v", p, err)
	}
}

// The rules of images_from and network_modes, as a folder's values meet them.
func TestPolicyRulesValues(t *testing.T) {
	for _, c := range []struct {
		prefix, ref string
		ok          bool
	}{
		{"docker.io/library/debian", "debian:trixie-slim", true},
		{"debian", "docker.io/library/debian:trixie", true},
		{"docker.io/library/debian", "debianx:1", false},
		{"registry.example.com/", "registry.example.com/team/img:1", true},
		{"registry.example.com", "registry.example.com.evil.net/img:1", false},
		{"localhost/debian", "localhost/debian:trixie-slim", true},
		{"docker.io/library/debian", "${BASE}", false},
		// What a $ left in expands to is unknown: here another registry.
		{"docker.io/library/", "debian${X}", false},
		{"docker.io/", "$X/evil:1", false},
	} {
		if got := schema.ImageFrom(c.prefix, c.ref); got != c.ok {
			t.Errorf("ImageFrom(%q, %q) = %v", c.prefix, c.ref, got)
		}
	}
	for nw, want := range map[*schema.Network]string{nil: "public", {Short: true, Policy: "none"}: "none",
		{Allow: []string{"a.example"}, Policy: "public"}: "allow", {Policy: "open"}: "open", {}: "public"} {
		if got := schema.PolicyModeOf(nw); got != want {
			t.Errorf("PolicyModeOf(%+v) = %s, want %s", nw, got, want)
		}
	}
}
