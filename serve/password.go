package serve

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"io"
	"io/fs"
	"strings"

	"github.com/agents-sandbox/asb/generator"
	"github.com/agents-sandbox/asb/internal/folderfs"
	"github.com/agents-sandbox/asb/outer"
	"github.com/agents-sandbox/asb/runner"
	"github.com/agents-sandbox/asb/schema"
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
// secrets.env (0600). created says a new one was written. It writes
// secrets.env as every writer of the folder does: under the folder's lock
// (saying on w when it waits), appending to the file as it is then, not as
// it was when the folder was opened, so that an `asb secret add` or `asb
// sync` meanwhile keeps its lines.
func Password(ctx context.Context, f *outer.Folder, getenv func(string) string, w io.Writer) (pw string, created bool, err error) {
	if v := getenv(PasswordVar); v != "" {
		return v, false, nil
	}
	cur, _ := f.Current(outer.SecretsEnvFile)
	if v := EnvValue(cur, PasswordVar); v != "" {
		return v, false, nil // nothing to write: no lock
	}
	lock, err := runner.LockFolder(ctx, f.Dir, "asb serve", w)
	if err != nil {
		return "", false, err
	}
	defer lock.Release()
	data, exists, err := readEnvFile(f.Dir)
	if err != nil {
		return "", false, err
	}
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

// readEnvFile reads secrets.env as it is now, through the folder's confined
// root; exists is false when there is none.
func readEnvFile(dir string) (data []byte, exists bool, err error) {
	r, err := folderfs.Open(dir)
	if err != nil {
		return nil, false, err
	}
	defer r.Close()
	data, err = r.ReadFile(outer.SecretsEnvFile, schema.MaxFileSize)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, folderfs.Explain(outer.SecretsEnvFile, err)
	}
	return data, true, nil
}
