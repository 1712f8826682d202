package engine

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/go-task/task/v3/taskfile/ast"
	"github.com/joho/godotenv"

	"github.com/agents-sandbox/asb/schema"
)

// No secret value in any output. The values asb knows of: what the
// Taskfile's dotenv files (secrets.env) hold, and the environment's values
// of every variable secrets.yaml binds or a dotenv file names. go-task
// would print them in three places: a command's echo line (an
// environment variable is a template var, so '{{.GITHUB_TOKEN}}' shows its
// value), the env: section of --summary (dotenv values), and errors. So
// the engine marks each of those variables secret in go-task's own var
// table, which masks it in echo lines and summaries, and passes what
// go-task prints when it runs nothing (--summary, --list, --dry), and
// every error, through a redactor.

// minSecretLen: shorter values are not redacted (a one-letter value would
// blank every such letter; no credential is that short).
const minSecretLen = 4

// secretsOf returns the names of the variables that hold secrets and the
// values they have (for the redactor).
func secretsOf(dir string, tf *ast.Taskfile) (names, values []string) {
	seen := map[string]bool{}
	add := func(name, value string) {
		if !seen[name] {
			seen[name] = true
			names = append(names, name)
		}
		if v := strings.TrimSpace(value); len(v) >= minSecretLen {
			values = append(values, v)
		}
	}
	if raw, err := schema.ReadFile(filepath.Join(dir, schema.SecretsFile)); err == nil {
		secs, _, _ := schema.LoadSecrets(schema.SecretsFile, raw)
		for name, s := range secs {
			add(name, os.Getenv(name))
			if ref, ok := schema.EnvRef(s.Value); ok {
				add(ref, os.Getenv(ref))
			}
		}
	}
	for _, f := range dotenvFiles(dir, tf) {
		raw, err := schema.ReadFile(f)
		if err != nil {
			continue
		}
		// Every line as it is too: a parse error quotes the line it failed
		// on, value and all.
		for line := range strings.SplitSeq(string(raw), "\n") {
			if l := strings.TrimSpace(line); len(l) >= minSecretLen && !strings.HasPrefix(l, "#") {
				values = append(values, l)
			}
		}
		vals, err := godotenv.UnmarshalBytes(raw)
		if err != nil {
			continue
		}
		for k, v := range vals {
			add(k, v)
			add(k, os.Getenv(k))
		}
	}
	sort.Slice(values, func(i, j int) bool { return len(values[i]) > len(values[j]) })
	return names, values
}

// dotenvFiles are the dotenv files of the Taskfile (its own and its
// tasks'), absolute, and secrets.env always: asb's Taskfile reads it
// through asb secret exec, not dotenv, and an error may still quote it.
func dotenvFiles(dir string, tf *ast.Taskfile) []string {
	out := []string{filepath.Join(dir, schema.SecretsEnvFile)}
	for _, f := range tf.Dotenv {
		out = append(out, absIn(dir, f))
	}
	if tf.Tasks != nil {
		for _, t := range tf.Tasks.All(nil) {
			base := dir
			if t.Dir != "" {
				base = absIn(dir, t.Dir)
			}
			for _, f := range t.Dotenv {
				out = append(out, absIn(base, f))
			}
		}
	}
	slices.Sort(out)
	return slices.Compact(out) // each file read once, however many tasks name it
}

// markSecret makes each named variable the environment sets a secret var
// of the Taskfile (same value, masked by go-task wherever it prints it),
// unless the Taskfile defines a var of that name itself.
func markSecret(tf *ast.Taskfile, names []string) {
	for _, n := range names {
		if _, defined := tf.Vars.Get(n); defined {
			continue
		}
		if v, ok := os.LookupEnv(n); ok {
			tf.Vars.Set(n, ast.Var{Value: v, Secret: true})
		}
	}
}

// redactor replaces every secret value in what passes through it, a line
// at a time (a value never straddles two writes of one line).
type redactor struct {
	w      io.Writer
	values []string
	buf    []byte
}

func newRedactor(w io.Writer, values []string) *redactor { return &redactor{w: w, values: values} }

func (r *redactor) Write(p []byte) (int, error) {
	r.buf = append(r.buf, p...)
	if i := bytes.LastIndexByte(r.buf, '\n'); i >= 0 {
		if _, err := io.WriteString(r.w, redact(string(r.buf[:i+1]), r.values)); err != nil {
			return 0, err
		}
		r.buf = append(r.buf[:0], r.buf[i+1:]...)
	}
	return len(p), nil
}

// Flush writes what is left (a last line without newline).
func (r *redactor) Flush() error {
	if len(r.buf) == 0 {
		return nil
	}
	_, err := io.WriteString(r.w, redact(string(r.buf), r.values))
	r.buf = r.buf[:0]
	return err
}

func redact(s string, values []string) string {
	for _, v := range values {
		s = strings.ReplaceAll(s, v, "*****")
	}
	return s
}
