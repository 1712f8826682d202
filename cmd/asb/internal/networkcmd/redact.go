package networkcmd

import (
	"strings"

	"github.com/agents-sandbox/asb/outer"
)

// secretValues are the values of this folder's secrets (outer's
// SecretValues), lower case: a host name msb logged that holds one (a
// guest can put anything in a DNS query) is neither printed nor proposed.
// The values never leave the process.
func secretValues(f *outer.Folder) []string {
	out := f.SecretValues()
	for i, v := range out {
		out[i] = strings.ToLower(v)
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
