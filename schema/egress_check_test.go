package schema_test

import (
	"testing"

	"github.com/agents-sandbox/asb/schema"
)

// asb validate judges the network with the egress evaluator: msb's *.d
// takes in d itself, so a secret bound to github.com is usable under
// *.github.com; and open beside an allow list is dropped, as public is.
func TestCheckDirEgress(t *testing.T) {
	for _, c := range []struct {
		name, sandbox, secrets string
		want                   []string
	}{
		{"a secret for the apex of *.d is reachable",
			replace(goodSandbox, "    - api.github.com\n", "    - \"*.github.com\"\n"),
			goodSecrets + "GITHUB_TOKEN:\n  value: \"${GITHUB_TOKEN}\"\n  allow: [github.com]\n", nil},
		{"a secret for *.d is reachable when a name below d is allowed",
			goodSandbox, goodSecrets + "GITHUB_TOKEN:\n  value: \"${GITHUB_TOKEN}\"\n  allow: [\"*.github.com\"]\n", nil},
		{"a secret for a name below an exact entry is not",
			replace(goodSandbox, "    - api.github.com\n", "    - github.com\n"),
			goodSecrets + "GITHUB_TOKEN:\n  value: \"${GITHUB_TOKEN}\"\n  allow: [api.github.com]\n",
			[]string{"secrets.yaml:9:11: warning: GITHUB_TOKEN.allow[0]: api.github.com is not reachable"}},
		{"policy open beside allow", replace(goodSandbox, "  allow:\n", "  policy: open\n  allow:\n"), goodSecrets,
			[]string{"sandbox.yaml:13:11: warning: policy open combined with allow: msb 0.7.2 then drops the open policy, so only the allow list is reachable"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := folder(t, map[string]string{"sandbox.yaml": c.sandbox, "secrets.yaml": c.secrets})
			assertProblems(t, schema.CheckDir(dir, schema.CheckOptions{Getenv: envWith("OPENCODE_API_KEY", "GITHUB_TOKEN"), Tracked: noGit}), c.want...)
		})
	}
}
