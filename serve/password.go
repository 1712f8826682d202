package serve

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"strings"

	"github.com/agents-sandbox/asb/generator"
	"github.com/agents-sandbox/asb/outer"
)

// PasswordVar is the variable of secrets.env holding the server's password.
// It is read there (or from the environment) and handed to the server and
// to attach's client in their environments, never on a command line.
const PasswordVar = "ASB_SERVE_PASSWORD"

// EnvValue is name's value in secrets.env's content ("" when unset).
func EnvValue(data []byte, name string) string {
	val := ""
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		line = strings.TrimSpace(strings.TrimPrefix(line, "export "))
		n, v, ok := strings.Cut(line, "=")
		if ok && strings.TrimSpace(n) == name {
			val = strings.Trim(strings.TrimSpace(v), `"'`)
		}
	}
	return val
}

// Password returns the server's password: the environment's, else
// secrets.env's, else a new one (32 random bytes) that it appends to
// secrets.env (0600). created says a new one was written.
func Password(f *outer.Folder, getenv func(string) string) (pw string, created bool, err error) {
	if v := getenv(PasswordVar); v != "" {
		return v, false, nil
	}
	data, exists := f.Current(outer.SecretsEnvFile)
	if v := EnvValue(data, PasswordVar); v != "" {
		return v, false, nil
	}
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", false, err
	}
	pw = base64.RawURLEncoding.EncodeToString(b[:])
	out := string(data)
	if !exists || len(data) == 0 {
		out = string(outer.AppendEnvLine(nil, false, PasswordVar))
		out = strings.TrimSuffix(out, "# "+PasswordVar+"=\n")
	}
	if out != "" && !strings.HasSuffix(out, "\n") {
		out += "\n"
	}
	out += "# asb serve: the password of the agent's server (asb attach passes it on).\n" + PasswordVar + "=" + pw + "\n"
	if err := generator.WriteFileAtomic(f.Dir, outer.SecretsEnvFile, []byte(out), 0o600); err != nil {
		return "", false, err
	}
	return pw, true, nil
}
