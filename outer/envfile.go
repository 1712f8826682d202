package outer

import (
	"bufio"
	"bytes"
	"sort"
	"strings"

	"github.com/joho/godotenv"

	"github.com/agents-sandbox/asb/schema"
)

// EnvFileNames returns the variables secrets.env gives a non-empty value
// (NAME=VALUE or export NAME=VALUE). Only the names leave this function.
func (f *Folder) EnvFileNames() map[string]bool {
	out := map[string]bool{}
	data, _ := f.Current(SecretsEnvFile)
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		line = strings.TrimSpace(strings.TrimPrefix(line, "export "))
		name, val, ok := strings.Cut(line, "=")
		name = strings.TrimSpace(name)
		val = strings.Trim(strings.TrimSpace(val), `"'`)
		if ok && schema.ValidEnvName(name) && val != "" {
			out[name] = true
		}
	}
	return out
}

// EnvFileMentions reports whether secrets.env has a line for name, set or
// commented out ("NAME=", "# NAME=", "export NAME=").
func EnvFileMentions(data []byte, name string) bool {
	for line := range strings.SplitSeq(string(data), "\n") {
		l := strings.TrimSpace(line)
		l = strings.TrimSpace(strings.TrimPrefix(l, "#"))
		l = strings.TrimSpace(strings.TrimPrefix(l, "export "))
		if n, _, ok := strings.Cut(l, "="); ok && strings.TrimSpace(n) == name {
			return true
		}
	}
	return false
}

// AppendEnvLine adds "# NAME=" to secrets.env's content; the header of a
// new file says what the file is. No value is ever written.
func AppendEnvLine(data []byte, exists bool, name string) []byte {
	out := string(data)
	if !exists || len(data) == 0 {
		out = "# secrets.env: the real values of the secrets in secrets.yaml.\n" +
			"# Host only: git-ignored, mode 0600, never mounted into the VM nor copied into\n" +
			"# an image. A variable exported in your shell wins over this file.\n" +
			"# Uncomment a line and fill in the value:\n"
	}
	if out != "" && !strings.HasSuffix(out, "\n") {
		out += "\n"
	}
	return []byte(out + "# " + name + "=\n")
}

// EnsureEnvLines gives secrets.env a commented "# NAME=" line for every
// secret of secrets.yaml that has no line (never a value), and returns the
// names it added; the caller commits.
func (f *Folder) EnsureEnvLines() []string {
	env, exists := f.Current(SecretsEnvFile)
	var added []string
	for _, ref := range f.SecretRefs() {
		if !EnvFileMentions(env, ref) {
			env, exists = AppendEnvLine(env, exists, ref), true
			added = append(added, ref)
		}
	}
	if len(added) > 0 {
		f.Set(SecretsEnvFile, env)
	}
	return added
}

// SecretRefs are the host variables the secrets of secrets.yaml read their
// values from (value: "${NAME}"; the secret's own name otherwise), in the
// file's order.
func (f *Folder) SecretRefs() []string {
	data, _ := f.Current(SecretsFile)
	secs, _, _ := schema.LoadSecrets(SecretsFile, data)
	var refs []string
	for _, name := range secretOrder(data, secs) {
		ref := name
		if r, ok := schema.EnvRef(secs[name].Value); ok {
			ref = r
		}
		refs = append(refs, ref)
	}
	return refs
}

// minSecretLen: shorter values are not secrets' (a letter would blank
// every such letter; no credential is that short).
const minSecretLen = 4

// SecretValues are the values no output of the folder's files may show,
// longest first: each value of secrets.env, as godotenv reads it (asb
// secret exec's reading) and as its line writes it (a line godotenv cannot
// read: the whole line), and the environment's value of each variable
// secrets.env names or secrets.yaml binds (a secret's name, and the
// variable its "${NAME}" reads). They never leave the process.
func (f *Folder) SecretValues() []string {
	var out []string
	add := func(v string) {
		if v = strings.TrimSpace(v); len(v) >= minSecretLen {
			out = append(out, v)
		}
	}
	getenv := func(k string) string {
		if f.Getenv == nil {
			return ""
		}
		return f.Getenv(k)
	}
	if data, ok := f.Current(SecretsEnvFile); ok {
		vals, err := godotenv.UnmarshalBytes(data)
		for _, v := range vals {
			add(v)
		}
		for line := range strings.SplitSeq(string(data), "\n") {
			l := strings.TrimSpace(line)
			if l == "" || strings.HasPrefix(l, "#") {
				continue
			}
			name, v, isVar := strings.Cut(strings.TrimSpace(strings.TrimPrefix(l, "export ")), "=")
			if err != nil || !isVar {
				add(l) // a line godotenv cannot read: all of it
			}
			if isVar {
				add(strings.Trim(strings.TrimSpace(v), `"'`)) // as written, escapes and all
				add(getenv(strings.TrimSpace(name)))
			}
		}
	}
	data, _ := f.Current(SecretsFile)
	secs, _, _ := schema.LoadSecrets(SecretsFile, data)
	for name, s := range secs {
		add(getenv(name))
		if ref, ok := schema.EnvRef(s.Value); ok {
			add(getenv(ref))
		}
	}
	sort.Slice(out, func(i, j int) bool { return len(out[i]) > len(out[j]) })
	return out
}

// MaskSecrets returns b with each of values (longest first) replaced by
// *****.
func MaskSecrets(b []byte, values []string) []byte {
	for _, v := range values {
		b = bytes.ReplaceAll(b, []byte(v), []byte("*****"))
	}
	return b
}
