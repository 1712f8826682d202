package networkcmd

import (
	"strings"

	"github.com/agents-sandbox/asb/outer"
	"github.com/agents-sandbox/asb/schema"
)

// minSecretLen: shorter values are not looked for (no credential is that
// short, and a letter would match every name).
const minSecretLen = 4

// secretValues are the values of this folder's secrets: what secrets.env
// sets, and the environment's values of the variables secrets.yaml binds.
// A host name msb logged that holds one (a guest can put anything in a DNS
// query) is neither printed nor proposed. The values never leave the
// process.
func secretValues(f *outer.Folder) []string {
	var out []string
	add := func(v string) {
		if v = strings.TrimSpace(v); len(v) >= minSecretLen {
			out = append(out, strings.ToLower(v))
		}
	}
	if data, ok := f.Current(outer.SecretsEnvFile); ok {
		for line := range strings.SplitSeq(string(data), "\n") {
			l := strings.TrimSpace(line)
			if l == "" || strings.HasPrefix(l, "#") {
				continue
			}
			name, val, _ := strings.Cut(strings.TrimSpace(strings.TrimPrefix(l, "export ")), "=")
			add(strings.Trim(strings.TrimSpace(val), `"'`))
			add(f.Getenv(strings.TrimSpace(name)))
		}
	}
	if data, ok := f.Current(outer.SecretsFile); ok {
		secs, _, _ := schema.LoadSecrets(outer.SecretsFile, data)
		for name, s := range secs {
			add(f.Getenv(name))
			if ref, ok := schema.EnvRef(s.Value); ok {
				add(f.Getenv(ref))
			}
		}
	}
	return out
}

// carriesSecret reports whether name holds one of values (which are lower
// case; msb's names are compared lower case too).
func carriesSecret(name string, values []string) bool {
	n := strings.ToLower(name)
	for _, v := range values {
		if strings.Contains(n, v) {
			return true
		}
	}
	return false
}
