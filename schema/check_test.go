package schema_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agents-sandbox/asb/generator"
	"github.com/agents-sandbox/asb/schema"
	"github.com/agents-sandbox/asb/templates"
)

// initFolder lays down what `asb init` writes for opts into a temp dir.
func initFolder(t *testing.T, opts schema.InitOptions) string {
	t.Helper()
	plan, err := generator.Render(templates.FS, opts)
	if err != nil {
		t.Fatalf("render: %v", err)
	}
	dir := filepath.Join(t.TempDir(), opts.Name)
	if _, err := generator.Apply(context.Background(), dir, plan, generator.WriteOptions{}); err != nil {
		t.Fatalf("apply: %v", err)
	}
	return dir
}

// envWith returns a Getenv that knows only the given names (all set).
func envWith(names ...string) func(string) string {
	return func(k string) string {
		for _, n := range names {
			if n == k {
				return "set"
			}
		}
		if k == "HOME" {
			return "/nonexistent-home-for-tests"
		}
		return ""
	}
}

func noGit(string) (bool, error) { return false, nil }

func TestGeneratedFolderValidates(t *testing.T) {
	withSecrets := generator.DefaultOptions("opencode", "withsecrets")
	withSecrets.Secrets = []schema.SecretSpec{{Name: "GITHUB_TOKEN", Hosts: []string{"api.github.com", "github.com"}}}
	withSecrets.Ports = []string{"5173:5173", "127.0.0.1:9000:9000/udp"}
	withSecrets.Allow = []string{"registry.npmjs.org", "*.example.com"}
	public := generator.DefaultOptions("opencode", "public")
	public.Network = schema.NetworkPublic
	cases := []struct {
		name string
		opts schema.InitOptions
		env  []string
		want []string // expected problems, as Problem.String() prefixes
	}{
		{"default", generator.DefaultOptions("opencode", "plain"), []string{"OPENCODE_API_KEY"}, nil},
		{"secrets and ports", withSecrets, []string{"OPENCODE_API_KEY", "GITHUB_TOKEN"}, nil},
		{"public", public, []string{"OPENCODE_API_KEY"}, []string{"sandbox.yaml:30:10: warning: network is public"}},
		// Nothing exported, nothing in secrets.env: the one warning a fresh
		// folder has, pointing at the value line of secrets.yaml.
		{"default, key unset", generator.DefaultOptions("opencode", "unset"), nil,
			[]string{"secrets.yaml:9:10: warning: OPENCODE_API_KEY is set neither in the environment nor in secrets.env"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := initFolder(t, tc.opts)
			got := schema.CheckDir(dir, schema.CheckOptions{Getenv: envWith(tc.env...), Tracked: noGit})
			if len(got) != len(tc.want) {
				t.Fatalf("got %d problems, want %d:\n%s", len(got), len(tc.want), render(got))
			}
			for i, w := range tc.want {
				if !strings.HasPrefix(got[i].String(), w) {
					t.Errorf("problem %d = %q, want prefix %q", i, got[i], w)
				}
			}
		})
	}
}

func TestGeneratedFolderInGitValidates(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	dir := initFolder(t, generator.DefaultOptions("opencode", "ingit"))
	gitRun(t, dir, "init", "-q")
	gitRun(t, dir, "add", ".")
	got := schema.CheckDir(dir, schema.CheckOptions{Getenv: envWith("OPENCODE_API_KEY")})
	if len(got) != 0 {
		t.Fatalf("want no problems, got:\n%s", render(got))
	}
	// Force-add secrets.env: now it is tracked, which git reports.
	gitRun(t, dir, "add", "-f", "secrets.env")
	got = schema.CheckDir(dir, schema.CheckOptions{Getenv: envWith("OPENCODE_API_KEY")})
	assertProblems(t, got, "secrets.env: error: secrets.env is tracked by git")
	// And a .gitignore that no longer ignores it, as git check-ignore sees it.
	gitRun(t, dir, "rm", "-q", "--cached", "secrets.env")
	if err := os.WriteFile(filepath.Join(dir, ".gitignore"), []byte("/workspace/\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	got = schema.CheckDir(dir, schema.CheckOptions{Getenv: envWith("OPENCODE_API_KEY")})
	assertProblems(t, got, ".gitignore: error: secrets.env is not git-ignored (git check-ignore says it is not ignored)")
}

func gitRun(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir, "-c", "user.name=t", "-c", "user.email=t@t"}, args...)...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
}

func render(ps []schema.Problem) string {
	var b strings.Builder
	for _, p := range ps {
		b.WriteString("  " + p.String() + "\n")
	}
	return b.String()
}

func assertProblems(t *testing.T, got []schema.Problem, want ...string) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("got %d problems, want %d (%q):\n%s", len(got), len(want), want, render(got))
	}
	for i, w := range want {
		if !strings.HasPrefix(got[i].String(), w) {
			t.Errorf("problem %d:\n got  %s\n want %s…", i, got[i], w)
		}
	}
}

// The good files every bad case starts from (what asb init writes, without
// comments, so line numbers in the table are easy to count).
const goodSandbox = `image: "p:opencode-latest"
cpus: 2
memory: "4G"
workdir: /workspace
user: dev
mounts:
  - bind: ./workspace
    target: /workspace
  - bind: ./opencode
    target: /home/dev/.config/opencode
    readonly: true
network:
  allow:
    - opencode.ai
    - api.github.com
`

const goodSecrets = `OPENCODE_API_KEY:
  value: "${OPENCODE_API_KEY}"
  allow:
    - opencode.ai
  substitution:
    headers: true
`

const goodTaskfile = "version: '3'\ntasks:\n  hello:\n    cmds:\n      - echo hi\n"

// folder writes a minimal outer folder with files (rel → content; "" drops
// a file) on top of the good ones.
func folder(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	base := map[string]string{
		"sandbox.yaml": goodSandbox, "secrets.yaml": goodSecrets, "Taskfile.yml": goodTaskfile,
		".gitignore": "/secrets.env\n/workspace/\n", "secrets.env": "# OPENCODE_API_KEY=\n",
		"workspace/README": "project\n", "opencode/opencode.json": "{}\n",
	}
	for k, v := range files {
		base[k] = v
	}
	for rel, content := range base {
		if content == "" {
			continue
		}
		p := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		mode := os.FileMode(0o644)
		if rel == "secrets.env" {
			mode = 0o600
		}
		if err := os.WriteFile(p, []byte(content), mode); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func replace(s, old, new string) string {
	if !strings.Contains(s, old) {
		panic(fmt.Sprintf("%q not in %q", old, s))
	}
	return strings.Replace(s, old, new, 1)
}

// badCase is one hand-written bad file and the one problem it must cause.
type badCase struct {
	name  string
	files map[string]string
	want  string   // Problem.String() prefix: FILE:LINE[:COL]: severity: …
	also  []string // further problems the same edit causes, after want
	setup func(t *testing.T, dir string)
}

// badCases has one case per error and warning CheckDir reports. The seed
// corpus of the fuzzers reuses them.
func badCases() []badCase {
	sb := func(s string) map[string]string { return map[string]string{"sandbox.yaml": s} }
	sec := func(s string) map[string]string { return map[string]string{"secrets.yaml": s} }
	return []badCase{
		// --- syntax and types of sandbox.yaml (what msb rejects) ---
		{name: "yaml syntax", files: sb(replace(goodSandbox, "user: dev\n", "user: dev\n  bad: [\n")), want: "sandbox.yaml:6: error: YAML syntax error"},
		{name: "tab indentation", files: sb(replace(goodSandbox, "  - bind: ./workspace", "\t- bind: ./workspace")), want: "sandbox.yaml:7:1: error: YAML syntax error"},
		{name: "unknown key", files: sb(goodSandbox + "bogus: 1\n"), want: "sandbox.yaml:16:1: error: unknown key bogus"},
		{name: "typo key", files: sb(replace(goodSandbox, "memory:", "memroy:")), want: "sandbox.yaml:3:1: error: unknown key memroy in the top level (msb rejects unknown keys) — did you mean memory?"},
		{name: "duplicate key", files: sb(goodSandbox + "cpus: 4\n"), want: "sandbox.yaml:16:1: error: key cpus is given twice"},
		{name: "anchor", files: sb(goodSandbox + "env: &e {A: b}\n"), want: "sandbox.yaml:16:6: error: YAML anchor &e"},
		{name: "anchor and alias", files: sb(goodSandbox + "env: &e {A: b}\nlabels: *e\n"), want: "sandbox.yaml:16:6: error: YAML anchor &e", also: []string{"sandbox.yaml:17:9: error: YAML alias *e"}},
		{name: "alias", files: sb(goodSandbox + "env: {A: b}\nlabels: *e\n"), want: "sandbox.yaml:17:9: error: YAML alias *e"},
		{name: "merge key", files: sb(goodSandbox + "env:\n  <<: {A: b}\n"), want: "sandbox.yaml:17:3: error: YAML merge key"},
		{name: "tag", files: sb(replace(goodSandbox, "cpus: 2", "cpus: !!int 2")), want: "sandbox.yaml:2:7: error: YAML tag !!int"},
		{name: "two documents", files: sb(goodSandbox + "---\ncpus: 3\n"), want: "sandbox.yaml:16:1: error: the file holds several YAML documents"},
		{name: "empty file", files: sb("# nothing\n"), want: "sandbox.yaml:1:1: error: the file is empty"},
		{name: "not a mapping", files: sb("- image: x\n"), want: "sandbox.yaml:1:1: error: the file must be a mapping, not a list"},
		{name: "bare yes", files: sb(replace(goodSandbox, "    readonly: true", "    readonly: yes")), want: "sandbox.yaml:11:15: error: mounts[1].readonly: bare yes is a string in YAML 1.2"},
		{name: "cpus string", files: sb(replace(goodSandbox, "cpus: 2", `cpus: "two"`)), want: "sandbox.yaml:2:7: error: cpus must be an integer, not a string"},
		{name: "cpus zero", files: sb(replace(goodSandbox, "cpus: 2", "cpus: 0")), want: "sandbox.yaml:2:7: error: cpus 0 is out of range: a VM has 1 to 255 CPUs"},
		{name: "cpus float", files: sb(replace(goodSandbox, "cpus: 2", "cpus: 2.0")), want: "sandbox.yaml:2:7: error: cpus must be an integer, not a number"},
		{name: "memory lots", files: sb(replace(goodSandbox, `memory: "4G"`, "memory: lots")), want: "sandbox.yaml:3:9: error: memory \"lots\" is not a size msb reads"},
		{name: "memory GiB", files: sb(replace(goodSandbox, `memory: "4G"`, "memory: 4GiB")), want: "sandbox.yaml:3:9: error: memory \"4GiB\" is not a size msb reads"},
		{name: "memory number", files: sb(replace(goodSandbox, `memory: "4G"`, "memory: 4096")), want: "sandbox.yaml:3:9: error: memory must be a string, not an integer"},
		{name: "user number", files: sb(replace(goodSandbox, "user: dev", "user: 1000")), want: "sandbox.yaml:5:7: error: user must be a string"},
		{name: "pull policy", files: sb(goodSandbox + "pull_policy: if-missing\n"), want: "sandbox.yaml:16:14: error: pull_policy \"if-missing\" is not a valid value — use one of: missing, always, never"},
		{name: "entrypoint string", files: sb(goodSandbox + "entrypoint: /bin/sh\n"), want: "sandbox.yaml:16:13: error: entrypoint must be a list"},
		{name: "env value number", files: sb(goodSandbox + "env:\n  PORT: 8080\n"), want: "sandbox.yaml:17:9: error: env.PORT must be a string"},
		{name: "duration", files: sb(goodSandbox + "max_duration: 1d\n"), want: "sandbox.yaml:16:15: error: max_duration \"1d\" is not a duration"},
		{name: "port spec", files: sb(goodSandbox + "ports:\n  - \"8080\"\n"), want: "sandbox.yaml:17:5: error: ports[0] \"8080\" is not HOST:GUEST"},
		{name: "port range", files: sb(goodSandbox + "ports:\n  - \"99999:80\"\n"), want: "sandbox.yaml:17:5: error: ports[0] \"99999:80\" host port"},
		{name: "port number", files: sb(goodSandbox + "ports:\n  - 8080\n"), want: "sandbox.yaml:17:5: error: ports[0] must be a string, not an integer"},
		{name: "network string", files: sb(replace(goodSandbox, "network:\n  allow:\n    - opencode.ai\n    - api.github.com\n", "network: everything\n")), want: "sandbox.yaml:12:10: error: network \"everything\" is not a valid value — use one of: none, public, open"},
		{name: "network unknown key", files: sb(replace(goodSandbox, "  allow:\n", "  allowed: []\n  allow:\n")), want: "sandbox.yaml:13:3: error: unknown key allowed in network (msb rejects unknown keys) — did you mean allow?"},
		{name: "network single label", files: sb(replace(goodSandbox, "    - api.github.com", "    - localhost")), want: "sandbox.yaml:15:7: error: network.allow[1] \"localhost\" is not a domain name"},
		{name: "network allow IP", files: sb(replace(goodSandbox, "    - api.github.com", "    - 10.0.0.1")), want: "sandbox.yaml:15:7: error: network.allow[1] \"10.0.0.1\" is an IP address"},
		{name: "mount string form", files: sb(replace(goodSandbox, "  - bind: ./workspace\n    target: /workspace\n", "  - \"./workspace\"\n")), want: "sandbox.yaml:7:5: error: mount \"./workspace\" is not SOURCE:/GUEST[:OPTIONS]"},
		{name: "mount option", files: sb(replace(goodSandbox, "  - bind: ./workspace\n    target: /workspace\n", "  - \"./workspace:/workspace:size=1G\"\n")), want: "sandbox.yaml:7:5: error: mount \"./workspace:/workspace:size=1G\": option \"size=1G\""},
		{name: "mount relative target", files: sb(replace(goodSandbox, "target: /workspace", "target: workspace")), want: "sandbox.yaml:8:13: error: mounts[0].target \"workspace\" must be an absolute guest path"},
		{name: "mount two kinds", files: sb(replace(goodSandbox, "  - bind: ./workspace\n", "  - bind: ./workspace\n    tmpfs: {size: 1M}\n")), want: "sandbox.yaml:7:5: error: mounts[0] must contain exactly one of bind, named, tmpfs or disk"},
		{name: "mount no target", files: sb(replace(goodSandbox, "  - bind: ./opencode\n    target: /home/dev/.config/opencode\n", "  - bind: ./opencode\n")), want: "sandbox.yaml:9:5: error: mounts[1] has no target"},
		{name: "mount unknown key", files: sb(replace(goodSandbox, "    readonly: true", "    readonly: true\n    mode: 0755")), want: "sandbox.yaml:12:5: error: unknown key mode in mounts[1] (msb rejects unknown keys) — did you mean nodev?"},
		{name: "mount create on bind", files: sb(replace(goodSandbox, "    readonly: true", "    readonly: true\n    create: ensure-exists")), want: "sandbox.yaml:12:13: error: mounts[1].create is only valid for a named mount"},
		{name: "tmpfs size", files: sb(replace(goodSandbox, "mounts:\n", "mounts:\n  - tmpfs: {size: lots}\n    target: /tmp\n")), want: "sandbox.yaml:7:19: error: mounts[0].tmpfs.size: size \"lots\""},

		// --- the boundary: mounts ---
		{name: "mount outer folder", files: sb(replace(goodSandbox, "bind: ./workspace", "bind: .")), want: "sandbox.yaml:7:11: error: mount \".\" is the outer folder itself"},
		{name: "mount outer via ..", files: sb(replace(goodSandbox, "bind: ./workspace", "bind: ./workspace/..")), want: "sandbox.yaml:7:11: error: mount \"./workspace/..\" is the outer folder itself"},
		{name: "mount the outer .git", files: map[string]string{"sandbox.yaml": replace(goodSandbox, "bind: ./workspace", "bind: ./.git"), ".git/config": "[core]\n"}, want: "sandbox.yaml:7:11: error: mount \"./.git\" is the outer folder's .git/ or a folder in it: not supported by asb, because the VM would write it and git on the host runs its hooks"},
		{name: "mount in .asb", files: map[string]string{"sandbox.yaml": replace(goodSandbox, "bind: ./workspace", "bind: ./.asb/git"), ".asb/git/HEAD": "x\n"}, want: "sandbox.yaml:7:11: error: mount \"./.asb/git\" is the outer folder's .asb/ or a folder in it: not supported by asb"},
		{name: "mount a session's state", files: map[string]string{"sandbox.yaml": replace(goodSandbox, "bind: ./workspace", "bind: ./.asb/sessions/one"), ".asb/sessions/one/workspace/a": "x\n"}, want: "sandbox.yaml:7:11: error: mount \"./.asb/sessions/one\" is the outer folder's .asb/"},
		{name: "mount .task", files: map[string]string{"sandbox.yaml": replace(goodSandbox, "bind: ./workspace", "bind: ./.task"), ".task/checksum/x": "x\n"}, want: "sandbox.yaml:7:11: error: mount \"./.task\" is the outer folder's .task/"},
		{name: "mount ancestor", files: sb(replace(goodSandbox, "bind: ./workspace", "bind: ..")), want: "sandbox.yaml:7:11: error: mount \"..\" holds the outer folder"},
		{name: "mount with ..", files: map[string]string{"sandbox.yaml": replace(goodSandbox, "bind: ./workspace", "bind: ./opencode/../workspace"), "workspace/a": "x\n"}, want: "sandbox.yaml:7:11: error: mount \"./opencode/../workspace\" holds .., with which msb 0.7.2 starts no VM (\"mount …: Invalid argument\") — write the same folder without ..: ./workspace"},
		{name: "mount root", files: sb(replace(goodSandbox, "bind: ./workspace", "bind: /")), want: "sandbox.yaml:7:11: error: mount \"/\" is the host's whole filesystem"},
		{name: "mount home", files: sb(replace(goodSandbox, "bind: ./workspace", "bind: ~/")), want: "sandbox.yaml:7:11: error: mount \"~/\" holds your home folder $HOME"},
		{name: "mount secrets.env", files: sb(replace(goodSandbox, "bind: ./workspace\n    target: /workspace", "bind: ./workspace\n    target: /workspace\n  - bind: ./secrets.env\n    target: /s")), want: "sandbox.yaml:9:11: error: mount \"./secrets.env\" contains ./secrets.env"},
		{name: "mount folder with secrets.yaml", files: map[string]string{"workspace/conf/secrets.yaml": "a: b\n"}, want: "sandbox.yaml:7:11: error: mount \"./workspace\" contains ./workspace/conf/secrets.yaml"},
		{name: "mount symlink to outer", files: sb(replace(goodSandbox, "bind: ./workspace", "bind: ./link")), want: "sandbox.yaml:7:11: error: mount \"./link\" (a link to",
			setup: func(t *testing.T, dir string) {
				if err := os.Symlink(".", filepath.Join(dir, "link")); err != nil {
					t.Fatal(err)
				}
			}},
		{name: "no workspace", files: sb(replace(goodSandbox, "target: /workspace", "target: /src")), want: "sandbox.yaml:7:3: error: nothing is mounted at /workspace"},
		{name: "workspace read-only", files: sb(replace(goodSandbox, "target: /workspace\n", "target: /workspace\n    readonly: true\n")), want: "sandbox.yaml:9:15: error: /workspace is mounted read-only"},
		{name: "agent config writable", files: sb(replace(goodSandbox, "    readonly: true\n", "")), want: "sandbox.yaml:9:11: error: mount \"./opencode\" makes opencode's config folder opencode/ writable"},
		{name: "agent config target writable", files: sb(replace(goodSandbox, "  - bind: ./opencode\n    target: /home/dev/.config/opencode\n    readonly: true\n", "  - tmpfs: {size: 1M}\n    target: /home/dev/.config/opencode\n")), want: "sandbox.yaml:10:13: error: /home/dev/.config/opencode is opencode's config folder in the VM and is mounted writable"},

		// --- the boundary: network ---
		{name: "network empty allow", files: sb(replace(goodSandbox, "network:\n  allow:\n    - opencode.ai\n    - api.github.com\n", "network:\n  allow: []\n")), want: "sandbox.yaml:13:10: error: not supported by asb: an empty allow list, because msb 0.7.2 takes an empty allow list for none at all"},
		{name: "network open", files: sb(replace(goodSandbox, "network:\n  allow:\n    - opencode.ai\n    - api.github.com\n", "network: open\n")), want: "sandbox.yaml:12:10: warning: network is open"},
		{name: "network public", files: sb(replace(goodSandbox, "network:\n  allow:\n    - opencode.ai\n    - api.github.com\n", "network:\n  policy: public\n")), want: "sandbox.yaml:13:11: warning: network is public"},
		{name: "network missing", files: sb(replace(goodSandbox, "network:\n  allow:\n    - opencode.ai\n    - api.github.com\n", "")), want: "sandbox.yaml: warning: there is no network key"},
		{name: "public with allow", files: sb(replace(goodSandbox, "  allow:\n", "  policy: public\n  allow:\n")), want: "sandbox.yaml:13:11: warning: policy public combined with allow: msb 0.7.2 then drops the public rule"},
		{name: "secret host unreachable", files: sb(replace(goodSandbox, "    - opencode.ai\n", "")), want: "secrets.yaml:4:7: warning: OPENCODE_API_KEY.allow[0]: opencode.ai is not reachable"},
		{name: "secret host unreachable, network none", files: sb(replace(goodSandbox, "network:\n  allow:\n    - opencode.ai\n    - api.github.com\n", "network: none\n")), want: "secrets.yaml:4:7: warning: OPENCODE_API_KEY.allow[0]: opencode.ai is not reachable"},

		// --- secrets.yaml ---
		{name: "secret literal", files: sec(replace(goodSecrets, `"${OPENCODE_API_KEY}"`, `"sk-live-hunter2"`)), want: "secrets.yaml:2:10: error: OPENCODE_API_KEY.value is a literal"},
		{name: "secret no braces", files: sec(replace(goodSecrets, `"${OPENCODE_API_KEY}"`, `"$OPENCODE_API_KEY"`)), want: "secrets.yaml:2:10: error: OPENCODE_API_KEY.value is a literal"},
		{name: "secret bad var", files: sec(replace(goodSecrets, `"${OPENCODE_API_KEY}"`, `"${1KEY}"`)), want: "secrets.yaml:2:10: error: not supported by asb: OPENCODE_API_KEY.value other than \"${OPENCODE_API_KEY}\""},
		{name: "secret no value", files: sec(replace(goodSecrets, "  value: \"${OPENCODE_API_KEY}\"\n", "")), want: "secrets.yaml:1:1: error: secret OPENCODE_API_KEY has no value"},
		{name: "secret no allow", files: sec(replace(goodSecrets, "  allow:\n    - opencode.ai\n", "")), want: "secrets.yaml:1:1: error: secret OPENCODE_API_KEY has no allow host"},
		{name: "secret bad host", files: sec(replace(goodSecrets, "    - opencode.ai", "    - https://opencode.ai/v1")), want: "secrets.yaml:4:7: error: OPENCODE_API_KEY.allow[0] \"https://opencode.ai/v1\" is a URL, not a host"},
		{name: "secret bad name", files: sec(goodSecrets + "\"MY KEY\":\n  value: \"${OPENCODE_API_KEY}\"\n  allow: [opencode.ai]\n"), want: "secrets.yaml:7:1: error: secret name \"MY KEY\" is not an environment variable name"},
		{name: "secret unknown key", files: sec(goodSecrets + "  header_fields: [x]\n"), want: "secrets.yaml:7:3: error: unknown key header_fields in OPENCODE_API_KEY"},
		{name: "secret bare yes", files: sec(replace(goodSecrets, "headers: true", "headers: yes")), want: "secrets.yaml:6:14: error: OPENCODE_API_KEY.substitution.headers: bare yes"},
		{name: "secret scalar", files: sec("OPENCODE_API_KEY: sk-live-hunter2\n"), want: "secrets.yaml:1:19: error: OPENCODE_API_KEY must be a mapping with value and allow, not a string"},
		{name: "secret anchors", files: sec(goodSecrets + "OTHER: *x\n"), want: "secrets.yaml:7:8: error: YAML alias *x: msb does not support anchors and aliases (and this one has no anchor)"},
		{name: "secret var unset", files: map[string]string{"secrets.env": "# nothing\n"}, want: "secrets.yaml:2:10: warning: OPENCODE_API_KEY is set neither in the environment nor in secrets.env"},

		// --- secrets.env ---
		{name: "secrets.env not ignored", files: map[string]string{".gitignore": "/workspace/\n"}, want: ".gitignore: error: secrets.env is not git-ignored"},
		{name: "secrets.env re-included", files: map[string]string{".gitignore": "*.env\n!secrets.env\n"}, want: ".gitignore: error: secrets.env is not git-ignored"},
		{name: "secrets.env mode", want: "secrets.env: error: secrets.env is readable by others (mode 0644)",
			setup: func(t *testing.T, dir string) {
				if err := os.Chmod(filepath.Join(dir, "secrets.env"), 0o644); err != nil {
					t.Fatal(err)
				}
			}},
		{name: "secrets.env bad line", files: map[string]string{"secrets.env": "OPENCODE_API_KEY=x\nsk-live-hunter2\n"}, want: "secrets.env:2:1: error: this line is not NAME=VALUE"},

		// --- Taskfile.yml ---
		{name: "taskfile syntax", files: map[string]string{"Taskfile.yml": "version: '3'\ntasks:\n  a:\n    cmds: [\n"}, want: "Taskfile.yml:4: error: go-task cannot read it: YAML syntax error"},
		{name: "taskfile type", files: map[string]string{"Taskfile.yml": "version: '3'\ntasks:\n  a:\n    deps: 5\n"}, want: "Taskfile.yml:4:5: error: go-task cannot read it"},
		{name: "taskfile no version", files: map[string]string{"Taskfile.yml": "tasks:\n  a:\n    cmds: [echo]\n"}, want: "Taskfile.yml:1:1: error: Taskfile.yml has no version"},
	}
}

func TestCheckDirBadCases(t *testing.T) {
	seen := map[string]bool{}
	for _, tc := range badCases() {
		if tc.want == "" {
			continue
		}
		if seen[tc.name] {
			t.Fatalf("duplicate case %q", tc.name)
		}
		seen[tc.name] = true
		t.Run(tc.name, func(t *testing.T) {
			dir := folder(t, tc.files)
			if tc.setup != nil {
				tc.setup(t, dir)
			}
			got := schema.CheckDir(dir, schema.CheckOptions{Getenv: envWith("OPENCODE_API_KEY"), Tracked: noGit})
			if tc.name == "secret var unset" {
				got = schema.CheckDir(dir, schema.CheckOptions{Getenv: envWith(), Tracked: noGit})
			}
			assertProblems(t, got, append([]string{tc.want}, tc.also...)...)
			for _, p := range got {
				if strings.Contains(p.String(), "hunter2") {
					t.Errorf("a problem echoes the secret value: %s", p)
				}
			}
		})
	}
}

// The good folder has no problem at all: every bad case above differs from
// it by one edit.
func TestCheckDirGoodFolder(t *testing.T) {
	dir := folder(t, nil)
	assertProblems(t, schema.CheckDir(dir, schema.CheckOptions{Getenv: envWith("OPENCODE_API_KEY"), Tracked: noGit}))
	// A value in secrets.env counts as set, whatever the environment says.
	dir = folder(t, map[string]string{"secrets.env": "export OPENCODE_API_KEY='sk-1'\n"})
	assertProblems(t, schema.CheckDir(dir, schema.CheckOptions{Getenv: envWith(), Tracked: noGit}))
}

func TestCheckDirOverrides(t *testing.T) {
	dir := folder(t, nil)
	// The override is checked instead of the file on disk…
	got := schema.CheckDir(dir, schema.CheckOptions{Getenv: envWith("OPENCODE_API_KEY"), Tracked: noGit,
		Overrides: map[string][]byte{"sandbox.yaml": []byte(replace(goodSandbox, "cpus: 2", "cpus: lots"))}})
	assertProblems(t, got, "sandbox.yaml:2:7: error: cpus must be an integer")
	// …and a missing file can be supplied entirely.
	if err := os.Remove(filepath.Join(dir, "secrets.yaml")); err != nil {
		t.Fatal(err)
	}
	got = schema.CheckDir(dir, schema.CheckOptions{Getenv: envWith("OPENCODE_API_KEY"), Tracked: noGit,
		Overrides: map[string][]byte{"secrets.yaml": []byte(goodSecrets + "GH:\n  value: \"${GH}\"\n  allow: [api.github.com]\n")}})
	assertProblems(t, got, "secrets.yaml:8:10: warning: GH is set neither")
}

func TestCheckDirTrackedHook(t *testing.T) {
	dir := folder(t, nil)
	var asked []string
	got := schema.CheckDir(dir, schema.CheckOptions{Getenv: envWith("OPENCODE_API_KEY"),
		Tracked: func(rel string) (bool, error) { asked = append(asked, rel); return true, nil }})
	assertProblems(t, got, "secrets.env: error: secrets.env is tracked by git")
	if strings.Join(asked, ",") != "secrets.env" {
		t.Errorf("Tracked asked about %q, want secrets.env", asked)
	}
}

func TestCheckDirMissingSandbox(t *testing.T) {
	dir := folder(t, map[string]string{"sandbox.yaml": ""})
	got := schema.CheckDir(dir, schema.CheckOptions{Getenv: envWith("OPENCODE_API_KEY"), Tracked: noGit})
	assertProblems(t, got, "sandbox.yaml: error: the outer folder has no sandbox.yaml")
	if !schema.HasErrors(got) {
		t.Error("HasErrors = false for an error")
	}
}
