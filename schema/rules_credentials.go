package schema

import (
	"bufio"
	"bytes"
	"regexp"
	"strings"
)

// credentialKeyRe finds a key that names a credential, with a literal
// string value, in JSON, YAML or TOML: "apiKey": "sk-…", token = '…',
// password: "…".
var credentialKeyRe = regexp.MustCompile(`(?i)["']?\b([a-z0-9_-]*(?:api[_-]?key|apikey|token|secret|password|passwd|credential|authorization)[a-z0-9_-]*)\b["']?\s*[:=]\s*["']([^"']*)["']`)

// LiteralCredential reports the first line of data where a credential's
// value is written out, rather than referenced ({env:NAME}, ${NAME}, an
// env var name, a command): such a file is never copied into an outer
// folder, which is committed. It returns the line and the key, never the
// value.
func LiteralCredential(data []byte) (line int, key string, found bool) {
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
	for n := 1; sc.Scan(); n++ {
		for _, m := range credentialKeyRe.FindAllStringSubmatch(sc.Text(), -1) {
			if literalValue(m[2]) {
				return n, m[1], true
			}
		}
	}
	return 0, "", false
}

// literalValue reports whether a credential key's value looks like the
// credential itself: long enough, and not a reference.
func literalValue(v string) bool {
	v = strings.TrimSpace(v)
	switch {
	case len(v) < 8,
		strings.HasPrefix(v, "{env:"), strings.HasPrefix(v, "{file:"),
		strings.HasPrefix(v, "${"), strings.HasPrefix(v, "$"),
		strings.HasPrefix(v, "!"),                  // a command that prints it (pi)
		ValidEnvName(v) && strings.ToUpper(v) == v: // the name of a variable
		return false
	}
	return true
}
