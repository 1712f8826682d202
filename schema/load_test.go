package schema_test

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/agents-sandbox/asb/generator"
	"github.com/agents-sandbox/asb/schema"
	"github.com/agents-sandbox/asb/templates"
)

var updateCorpus = flag.Bool("update-corpus", false, "rewrite testdata/fuzz/ from the generated files and the bad cases")

func TestLoadSandboxDecodes(t *testing.T) {
	src := goodSandbox + `ports:
  - "8080:80"
  - "127.0.0.1:9000:9000/udp"
env:
  A: "1"
` + "pull_policy: never\n"
	src = replace(src, "mounts:\n", "mounts:\n  - \"./data:/data:ro,noexec\"\n  - \"cache:/cache\" # asb: allow-volume\n  - tmpfs: {size: 64M}\n    target: /tmp\n")
	sb, root, probs := schema.LoadSandbox("sandbox.yaml", []byte(src))
	assertProblems(t, probs)
	if root == nil || sb == nil {
		t.Fatal("nil result for a good file")
	}
	if sb.Image != "p:opencode-latest" || sb.CPUs != 2 || sb.Memory != "4G" || sb.User != "dev" || sb.PullPolicy != "never" {
		t.Errorf("scalars = %+v", sb)
	}
	want := []schema.Mount{
		{Short: "./data:/data:ro,noexec", Kind: "bind", Bind: "./data", Target: "/data", Readonly: true, Noexec: true},
		{Short: "cache:/cache", Kind: "named", Named: "cache", Target: "/cache"},
		{Kind: "tmpfs", Tmpfs: &schema.TmpfsOpts{Size: "64M"}, Target: "/tmp"},
		{Kind: "bind", Bind: "./workspace", Target: "/workspace"},
		{Kind: "bind", Bind: "./opencode", Target: "/home/dev/.config/opencode", Readonly: true},
	}
	if len(sb.Mounts) != len(want) {
		t.Fatalf("mounts = %+v", sb.Mounts)
	}
	for i, m := range sb.Mounts {
		if !reflect.DeepEqual(m, want[i]) {
			t.Errorf("mount %d = %+v, want %+v", i, m, want[i])
		}
	}
	if sb.Network == nil || sb.Network.Short || strings.Join(sb.Network.Allow, ",") != "opencode.ai,api.github.com" {
		t.Errorf("network = %+v", sb.Network)
	}
	if strings.Join(sb.Ports, ",") != "8080:80,127.0.0.1:9000:9000/udp" || sb.Env["A"] != "1" {
		t.Errorf("ports = %q env = %v", sb.Ports, sb.Env)
	}
	sb, _, probs = schema.LoadSandbox("sandbox.yaml", []byte("network: public\n"))
	assertProblems(t, probs)
	if sb.Network == nil || !sb.Network.Short || sb.Network.Policy != "public" {
		t.Errorf("network = %+v", sb.Network)
	}
}

func TestLoadSandboxFieldPaths(t *testing.T) {
	src := "network:\n  allow:\n    - a.com\n    - 5\nmounts:\n  - bind: ./w\n    target: /w\n  - bind: ./x\n    target: /x\n    readonly: on\n"
	_, _, probs := schema.LoadSandbox("sub/sandbox.yaml", []byte(src))
	assertProblems(t, probs,
		"sub/sandbox.yaml:4:7: error: network.allow[1] must be a string, not an integer",
		"sub/sandbox.yaml:10:15: error: mounts[1].readonly: bare on is a string in YAML 1.2")
	if probs[0].Field != "network.allow[1]" || probs[1].Field != "mounts[1].readonly" {
		t.Errorf("fields = %q, %q", probs[0].Field, probs[1].Field)
	}
}

func TestLoadSecretsDecodes(t *testing.T) {
	sec, _, probs := schema.LoadSecrets("secrets.yaml", []byte(goodSecrets+"  violation_action: block-and-log\n  require_tls_identity: true\n"))
	assertProblems(t, probs)
	s, ok := sec["OPENCODE_API_KEY"]
	if !ok || s.Value != "${OPENCODE_API_KEY}" || strings.Join(s.Allow, ",") != "opencode.ai" ||
		s.Substitution == nil || s.Substitution.Headers == nil || !*s.Substitution.Headers || s.Substitution.Query != nil ||
		s.ViolationAction != "block-and-log" || s.RequireTLSIdentity == nil || !*s.RequireTLSIdentity {
		t.Errorf("secret = %+v", s)
	}
}

// A literal value is never echoed, whatever else is wrong with the binding.
func TestLoadSecretsNeverEchoes(t *testing.T) {
	for _, src := range []string{
		"K: sk-live-hunter2-aaaa\n",
		"K: [sk-live-hunter2-aaaa]\n",
		"K:\n  value: [sk-live-hunter2-aaaa]\n",
		"K:\n  value: {x: sk-live-hunter2-aaaa}\n",
		"K:\n  value: \"${sk-live-hunter2-aaaa}\"\n",
	} {
		_, _, probs := schema.LoadSecrets("secrets.yaml", []byte(src))
		if len(probs) == 0 {
			t.Errorf("%q: no problem", src)
		}
		for _, p := range probs {
			if strings.Contains(p.String(), "hunter2") {
				t.Errorf("%q: echoes the value: %s", src, p)
			}
		}
	}
}

func TestProblemString(t *testing.T) {
	p := schema.Problem{File: "sandbox.yaml", Line: 12, Col: 5, Severity: schema.SeverityError, Msg: "what is wrong", Fix: "how to fix it"}
	if got := p.String(); got != "sandbox.yaml:12:5: error: what is wrong — how to fix it" {
		t.Errorf("String() = %q", got)
	}
	p = schema.Problem{File: "secrets.env", Severity: schema.SeverityWarning, Msg: "m"}
	if got := p.String(); got != "secrets.env: warning: m" {
		t.Errorf("String() = %q", got)
	}
}

// seeds are the fuzzers' starting points: what asb init writes, and every
// bad case of the table test.
func seeds(t testing.TB, file string) [][]byte {
	var out [][]byte
	for _, o := range seedOptions() {
		plan, err := generator.Render(templates.FS, o)
		if err != nil {
			t.Fatal(err)
		}
		if f, ok := plan.Lookup(file); ok {
			out = append(out, f.Content)
		}
	}
	for _, c := range badCases() {
		if s, ok := c.files[file]; ok {
			out = append(out, []byte(s))
		}
	}
	return out
}

func seedOptions() []schema.InitOptions {
	d := generator.DefaultOptions("opencode", "seed")
	s := d
	s.Secrets = []schema.SecretSpec{{Name: "GITHUB_TOKEN", Hosts: []string{"api.github.com"}}}
	s.Ports = []string{"5173:5173"}
	p := d
	p.Network = schema.NetworkPublic
	n := d
	n.Network = schema.NetworkNone
	return []schema.InitOptions{d, s, p, n}
}

// checkPositions fails when a problem does not point into data.
func checkPositions(t *testing.T, file string, data []byte, probs []schema.Problem) {
	t.Helper()
	lines := yamlLines(data)
	for _, p := range probs {
		if p.File == "" || p.Msg == "" || (p.Severity != schema.SeverityError && p.Severity != schema.SeverityWarning) {
			t.Fatalf("malformed problem %#v", p)
		}
		if p.File != file {
			continue
		}
		if p.Line < 0 || p.Line > lines || p.Col < 0 || (p.Line == 0 && p.Col != 0) {
			t.Fatalf("problem outside the file (%d lines): %s", lines, p)
		}
	}
}

// yamlLines counts lines as YAML does: \r\n, \r, \n, NEL, LS and PS each
// end one.
func yamlLines(data []byte) int {
	s := strings.ReplaceAll(string(data), "\r\n", "\n")
	n := 1
	for _, r := range s {
		switch r {
		case '\n', '\r', '\u0085', '\u2028', '\u2029':
			n++
		}
	}
	return n
}

func FuzzLoadSandbox(f *testing.F) {
	for _, s := range seeds(f, "sandbox.yaml") {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		sb, _, probs := schema.LoadSandbox("sandbox.yaml", data)
		checkPositions(t, "sandbox.yaml", data, probs)
		if sb == nil && len(probs) == 0 {
			t.Fatal("no config and no problem")
		}
		for _, p := range probs {
			if p.Severity != schema.SeverityError {
				t.Fatalf("the loader only reports errors: %s", p)
			}
		}
	})
}

func FuzzLoadSecrets(f *testing.F) {
	for _, s := range seeds(f, "secrets.yaml") {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		sec, _, probs := schema.LoadSecrets("secrets.yaml", data)
		checkPositions(t, "secrets.yaml", data, probs)
		if sec == nil && len(probs) == 0 {
			t.Fatal("no secrets and no problem")
		}
	})
}

// FuzzCheckDir feeds both YAML files of a real outer folder through
// Overrides: CheckDir must not panic and must point into the files.
func FuzzCheckDir(f *testing.F) {
	sbs, secs := seeds(f, "sandbox.yaml"), seeds(f, "secrets.yaml")
	for i := range max(len(sbs), len(secs)) {
		f.Add(sbs[i%len(sbs)], secs[i%len(secs)])
	}
	dir := f.TempDir()
	for rel, content := range map[string]string{"Taskfile.yml": goodTaskfile, ".gitignore": "/secrets.env\n",
		"secrets.env": "A=1\n", "workspace/x": "x", "opencode/x": "x"} {
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			f.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			f.Fatal(err)
		}
	}
	f.Fuzz(func(t *testing.T, sb, sec []byte) {
		probs := schema.CheckDir(dir, schema.CheckOptions{Getenv: envWith("A"), Tracked: noGit,
			Overrides: map[string][]byte{"sandbox.yaml": sb, "secrets.yaml": sec}})
		checkPositions(t, "sandbox.yaml", sb, probs)
		checkPositions(t, "secrets.yaml", sec, probs)
	})
}

// TestWriteSeedCorpus writes the seeds as go test -fuzz corpus files when
// run with -update-corpus; without it, it checks the committed corpus holds
// every seed.
func TestWriteSeedCorpus(t *testing.T) {
	type entry struct {
		fuzzer string
		args   [][]byte
	}
	var entries []entry
	for _, s := range seeds(t, "sandbox.yaml") {
		entries = append(entries, entry{"FuzzLoadSandbox", [][]byte{s}})
	}
	for _, s := range seeds(t, "secrets.yaml") {
		entries = append(entries, entry{"FuzzLoadSecrets", [][]byte{s}})
	}
	sbs, secs := seeds(t, "sandbox.yaml"), seeds(t, "secrets.yaml")
	for i := range max(len(sbs), len(secs)) {
		entries = append(entries, entry{"FuzzCheckDir", [][]byte{sbs[i%len(sbs)], secs[i%len(secs)]}})
	}
	count := map[string]int{}
	for _, e := range entries {
		count[e.fuzzer]++
		var b strings.Builder
		b.WriteString("go test fuzz v1\n")
		for _, a := range e.args {
			fmt.Fprintf(&b, "[]byte(%q)\n", a)
		}
		p := filepath.Join("testdata", "fuzz", e.fuzzer, fmt.Sprintf("seed-%03d", count[e.fuzzer]))
		if *updateCorpus {
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		got, err := os.ReadFile(p)
		if err != nil || string(got) != b.String() {
			t.Fatalf("%s is missing or stale; run go test ./schema -run TestWriteSeedCorpus -update-corpus", p)
		}
	}
}
