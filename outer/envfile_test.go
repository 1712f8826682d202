package outer

import (
	"strings"
	"testing"
)

// TestSecretValuesMasked: every value of secrets.env, however it is
// written, and the environment's value of each bound variable are masked;
// a commented line and an empty value are not values.
func TestSecretValuesMasked(t *testing.T) {
	env := "# OPENCODE_API_KEY=\nA_KEY=plain-value-1\nexport B_KEY=\"quoted value 2\"\nC_KEY='single-3'\nD_KEY=\nE_KEY=\"esc\\nline-4\"\n"
	f := &Folder{orig: map[string][]byte{
		SecretsEnvFile: []byte(env),
		SecretsFile:    []byte("GH_TOKEN:\n  value: \"${GH_TOKEN}\"\n  allow: [api.github.com]\n"),
	}, edited: map[string][]byte{}, Getenv: func(k string) string {
		if k == "GH_TOKEN" {
			return "env-token-5"
		}
		return ""
	}}
	got := string(MaskSecrets([]byte(env+"x env-token-5 D_KEY= OPENCODE_API_KEY=\n"), f.SecretValues()))
	for _, v := range []string{"plain-value-1", "quoted value 2", "single-3", `esc\nline-4`, "env-token-5"} {
		if strings.Contains(got, v) {
			t.Errorf("%q is not masked:\n%s", v, got)
		}
	}
	for _, kept := range []string{"# OPENCODE_API_KEY=\n", "D_KEY= OPENCODE_API_KEY="} {
		if !strings.Contains(got, kept) {
			t.Errorf("%q is masked:\n%s", kept, got)
		}
	}
}
