package main

import (
	"bytes"
	"flag"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/agents-sandbox/asb/cmd/asb/internal/cmdutil"
	"github.com/agents-sandbox/asb/cmd/asb/internal/root"
	"github.com/agents-sandbox/asb/internal/testkit/testenv"
)

var update = flag.Bool("update", false, "rewrite the golden files of testdata/edit/golden, and docs/first-run.md (TestFirstRunTranscript)")

// harness runs asb commands in an outer folder made by asb init, with the
// environment env (and nothing of the real one).
type harness struct {
	t        *testing.T
	dir      string // the outer folder
	wd       string // the working directory of the commands
	env      map[string]string
	out, err bytes.Buffer
}

func newHarness(t *testing.T, env map[string]string) *harness {
	t.Helper()
	parent := t.TempDir()
	h := &harness{t: t, dir: filepath.Join(parent, "proj"), wd: parent, env: env}
	if h.env == nil {
		h.env = map[string]string{}
	}
	h.env["HOME"] = filepath.Join(parent, "home")
	if err := os.MkdirAll(h.env["HOME"], 0o755); err != nil {
		t.Fatal(err)
	}
	h.mustRun("init", "--agent", "opencode", "--no-git", "proj")
	h.wd = filepath.Join(h.dir, "workspace") // commands find the outer folder upwards
	return h
}

func (h *harness) run(args ...string) int {
	h.t.Helper()
	h.out.Reset()
	h.err.Reset()
	f := root.NewFactory(&cmdutil.IOStreams{In: strings.NewReader(""), Out: &h.out, ErrOut: &h.err})
	f.Getwd = func() (string, error) { return h.wd, nil }
	f.Getenv = func(k string) string { return h.env[k] }
	cmd := root.NewCmd(f)
	cmd.SetArgs(args)
	err := cmd.Execute()
	if err != nil {
		var se *cmdutil.SilentError
		if msg := err.Error(); msg != "" && !asSilent(err, &se) {
			h.err.WriteString("asb: " + msg + "\n")
		}
	}
	return cmdutil.ExitCode(err)
}

func asSilent(err error, se **cmdutil.SilentError) bool {
	s, ok := err.(*cmdutil.SilentError)
	*se = s
	return ok
}

func (h *harness) mustRun(args ...string) string {
	h.t.Helper()
	if code := h.run(args...); code != 0 {
		h.t.Fatalf("asb %s: exit %d\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), code, h.out.String(), h.err.String())
	}
	return h.out.String()
}

func (h *harness) read(name string) string {
	h.t.Helper()
	b, err := os.ReadFile(filepath.Join(h.dir, name))
	if err != nil {
		h.t.Fatal(err)
	}
	return string(b)
}

func (h *harness) write(name, content string) {
	h.t.Helper()
	if err := os.WriteFile(filepath.Join(h.dir, name), []byte(content), 0o644); err != nil {
		h.t.Fatal(err)
	}
}

// snapshot returns every file of the outer folder with its mode.
func (h *harness) snapshot() map[string]string {
	h.t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(h.dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(h.dir, p)
		out[rel] = fi.Mode().String() + "\n" + string(b)
		return nil
	})
	if err != nil {
		h.t.Fatal(err)
	}
	return out
}

func testdata(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "edit", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func golden(t *testing.T, name, got string) {
	t.Helper()
	p := filepath.Join("testdata", "edit", "golden", name)
	if *update {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(p)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if diff := cmp.Diff(string(want), got); diff != "" {
		t.Errorf("%s differs from the golden file (-want +got):\n%s", name, diff)
	}
}

// TestRoundTripKeepsComments edits a hand-commented sandbox.yaml and
// secrets.yaml with every edit command, compares the result with golden
// files, then undoes every edit and expects the files back byte for byte
// (but for the hosts secret rm leaves in network.allow, by design).
func TestRoundTripKeepsComments(t *testing.T) {
	h := newHarness(t, map[string]string{"OPENCODE_API_KEY": "x"})
	sandbox, secrets := testdata(t, "sandbox.yaml"), testdata(t, "secrets.yaml")
	h.write("sandbox.yaml", sandbox)
	h.write("secrets.yaml", secrets)
	if err := os.MkdirAll(filepath.Join(h.dir, "data"), 0o755); err != nil {
		t.Fatal(err)
	}

	h.mustRun("secret", "add", "GITHUB_TOKEN", "--allow", "api.github.com,github.com")
	h.mustRun("network", "allow", "registry.npmjs.org")
	h.mustRun("mount", "add", "../data", "/data", "--ro")
	h.mustRun("port", "add", "5173:5173")
	golden(t, "sandbox.yaml", h.read("sandbox.yaml"))
	golden(t, "secrets.yaml", h.read("secrets.yaml"))

	h.mustRun("port", "rm", "5173")
	h.mustRun("mount", "rm", "/data")
	h.mustRun("network", "deny", "registry.npmjs.org")
	h.mustRun("secret", "rm", "GITHUB_TOKEN")
	if diff := cmp.Diff(secrets, h.read("secrets.yaml")); diff != "" {
		t.Errorf("secrets.yaml after add and rm (-want +got):\n%s", diff)
	}
	wantSandbox := strings.Replace(sandbox, `    - "opencode.ai"   # the provider`+"\n",
		`    - "opencode.ai"   # the provider`+"\n"+`    - "api.github.com"`+"\n"+`    - "github.com"`+"\n", 1)
	if diff := cmp.Diff(wantSandbox, h.read("sandbox.yaml")); diff != "" {
		t.Errorf("sandbox.yaml after the edits and their undoing (-want +got):\n%s", diff)
	}
	h.mustRun("network", "deny", "api.github.com", "github.com")
	if diff := cmp.Diff(sandbox, h.read("sandbox.yaml")); diff != "" {
		t.Errorf("sandbox.yaml after network deny (-want +got):\n%s", diff)
	}
}

// TestRefusalsWriteNothing runs edits that must be refused and checks
// that every file of the outer folder is left byte for byte.
func TestRefusalsWriteNothing(t *testing.T) {
	h := newHarness(t, nil)
	h.write("sandbox.yaml", testdata(t, "sandbox.yaml"))
	h.write("secrets.yaml", testdata(t, "secrets.yaml"))
	if err := os.MkdirAll(filepath.Join(h.dir, "workspace", "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(h.dir, "workspace", "sub", "secrets.env"), []byte("# x\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	before := h.snapshot()
	for _, tc := range []struct {
		args []string
		want string // in stderr
	}{
		{[]string{"secret", "add", "OPENCODE_API_KEY", "--allow", "x.example.com"}, "bound already"},
		{[]string{"secret", "add", "bad-name", "--allow", "x.example.com"}, "not an environment variable name"},
		{[]string{"secret", "add", "TOKEN"}, "--allow is required"},
		{[]string{"secret", "add", "TOKEN", "--allow", "https://x.example.com/"}, "is a URL, not a host"},
		{[]string{"secret", "add", "TOKEN", "--allow", "10.0.0.1"}, "is an IP address"},
		{[]string{"secret", "rm", "NOPE"}, "no secret NOPE"},
		{[]string{"network", "allow", "x.example.com:443"}, "is not a domain name"},
		{[]string{"network", "allow", ""}, "no host was given"},
		{[]string{"network", "deny", "opencode.ai"}, "empty network.allow"},
		{[]string{"mount", "add", "..", "/outer"}, "outer folder itself"},
		{[]string{"mount", "add", "../..", "/up"}, "holds the outer folder"},
		{[]string{"mount", "add", "/", "/root-fs"}, "whole filesystem"},
		{[]string{"mount", "add", "~", "/h"}, "home folder"},
		{[]string{"mount", "add", "sub", "/sub"}, "secrets.env"},
		{[]string{"mount", "add", "../secrets.yaml", "/s.yaml"}, "secrets.yaml"},
		{[]string{"mount", "add", "nope", "/nope"}, "does not exist"},
		{[]string{"mount", "add", "sub", "relative"}, "absolute"},
		{[]string{"mount", "add", "../toolchain", "/workspace"}, "asb mounts itself"},
		{[]string{"mount", "add", "../toolchain", "/home/dev/.config/opencode/x"}, "asb mounts itself"},
		{[]string{"mount", "add", "../toolchain", "/home"}, "which the VM needs for itself"},
		{[]string{"mount", "rm", "/nothing"}, "nothing is mounted"},
		{[]string{"mount", "rm", "/workspace"}, "/workspace"},
		{[]string{"port", "add", "5173"}, "HOST:GUEST"},
		{[]string{"port", "add", "70000:80"}, "1 to 65535"},
		{[]string{"port", "rm", "5173"}, "no forwarded port"},
	} {
		code := h.run(tc.args...)
		if code == 0 {
			t.Errorf("asb %s succeeded; want a refusal\n%s", strings.Join(tc.args, " "), h.out.String())
		}
		if !strings.Contains(h.err.String(), tc.want) {
			t.Errorf("asb %s: stderr %q does not say %q", strings.Join(tc.args, " "), h.err.String(), tc.want)
		}
		if diff := cmp.Diff(before, h.snapshot()); diff != "" {
			t.Fatalf("asb %s changed the outer folder (-before +after):\n%s", strings.Join(tc.args, " "), diff)
		}
	}
	// A port that is forwarded already is refused too.
	h.mustRun("port", "add", "8080:80")
	before = h.snapshot()
	if h.run("port", "add", "8080:81") == 0 || !strings.Contains(h.err.String(), "which 8080:80 forwards already") {
		t.Errorf("second forward of 8080 was not refused: %s", h.err.String())
	}
	if diff := cmp.Diff(before, h.snapshot()); diff != "" {
		t.Errorf("refused port add changed the folder:\n%s", diff)
	}
}

// TestCanary puts canary values in the environment and in secrets.env, runs
// every command, and checks after each that no file of the outer folder but
// secrets.env, and no output, holds a canary.
func TestCanary(t *testing.T) {
	canaries := map[string]string{
		"OPENCODE_API_KEY": "canary-opencode-6f1d2a",
		"GITHUB_TOKEN":     "canary-github-93be17",
		"NPM_TOKEN":        "canary-npm-0c44d9",
	}
	env := map[string]string{}
	for k, v := range canaries {
		env[k] = v
	}
	fileCanary := "canary-in-secrets-env-5e7a"
	// asb export kubernetes runs asb-export (testenv.ScriptTools' build, as
	// released), with the canaries in its environment too, and the
	// approvals asb's edits keep.
	tools, err := testenv.ScriptTools()
	if err != nil {
		t.Fatal(err)
	}
	exporter := filepath.Join(tools, "asb-export")
	env["ASB_EXPORT"], env["XDG_STATE_HOME"] = exporter, os.Getenv("XDG_STATE_HOME")
	for k, v := range canaries {
		t.Setenv(k, v)
	}
	k8s := filepath.Join(t.TempDir(), "k8s")
	h := newHarness(t, env)
	check := func(step string) {
		t.Helper()
		all := append([]string{fileCanary}, valuesOf(canaries)...)
		for _, c := range all {
			if strings.Contains(h.out.String(), c) || strings.Contains(h.err.String(), c) {
				t.Errorf("after %s: the output holds the canary %s", step, c)
			}
		}
		exported := map[string]string{}
		entries, _ := os.ReadDir(k8s)
		for _, e := range entries {
			b, _ := os.ReadFile(filepath.Join(k8s, e.Name()))
			exported["export: "+e.Name()] = string(b)
		}
		for rel, content := range merged(h.snapshot(), exported) {
			if rel == "secrets.env" {
				continue
			}
			for _, c := range all {
				if strings.Contains(content, c) {
					t.Errorf("after %s: %s holds the canary %s", step, rel, c)
				}
			}
		}
	}
	check("init")
	env2 := h.read("secrets.env") + "NPM_TOKEN=" + fileCanary + "\n"
	if err := os.WriteFile(filepath.Join(h.dir, "secrets.env"), []byte(env2), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(h.dir, "data"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"secret", "add", "GITHUB_TOKEN", "--allow", "api.github.com,github.com", "--query"},
		{"secret", "add", "NPM_TOKEN", "--allow", "registry.npmjs.org", "--body"},
		{"secret", "add", "GITHUB_TOKEN", "--allow", "api.github.com", "--force"},
		{"secret", "ls"},
		{"network", "allow", "example.com"},
		{"network", "deny", "example.com"},
		{"network", "show"},
		{"mount", "add", "../data", "/data", "--ro"},
		{"mount", "ls"},
		{"port", "add", "5173:5173"},
		{"port", "ls"},
		{"boundary"},
		{"boundary", "--format", "json"},
		{"validate"},
		{"export", "kubernetes", "--session", "a", "--session", "b", "-o", k8s},
		{"export", "kubernetes", "--runtime-class", "kata"},
		{"boundary", "--target", "kubernetes"},
		{"boundary", "--target", "kubernetes", "--format", "json"},
		{"port", "rm", "5173:5173"},
		{"mount", "rm", "/data"},
		{"secret", "rm", "GITHUB_TOKEN"},
		{"secret", "rm", "NPM_TOKEN"},
	} {
		if code := h.run(args...); code != 0 && args[0] == "export" {
			t.Errorf("asb %s: exit %d, %s", strings.Join(args, " "), code, h.err.String())
		}
		check(strings.Join(args, " "))
	}
	if entries, _ := os.ReadDir(k8s); len(entries) < 6 {
		t.Errorf("asb export kubernetes wrote %d files: the canary check of the export checked nothing", len(entries))
	}
	// secrets.env is the user's: their line is still there, the mode is 0600.
	got := h.read("secrets.env")
	if !strings.Contains(got, "NPM_TOKEN="+fileCanary+"\n") || !strings.Contains(got, "# GITHUB_TOKEN=\n") {
		t.Errorf("secrets.env lost a line:\n%s", got)
	}
	for _, v := range canaries {
		if strings.Contains(got, v) {
			t.Errorf("asb wrote an environment value into secrets.env")
		}
	}
	if fi, err := os.Stat(filepath.Join(h.dir, "secrets.env")); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("secrets.env mode = %v, %v; want 0600", fi.Mode(), err)
	}
}

func merged(a, b map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		out[k] = v
	}
	return out
}

func valuesOf(m map[string]string) []string {
	var out []string
	for _, v := range m {
		out = append(out, v)
	}
	return out
}

// TestNetworkForms covers the policies other than the allow list: what
// msb 0.7.2 makes of them was observed with msb inspect (deny rules come
// first; an object without allow is its policy, public by default).
func TestNetworkForms(t *testing.T) {
	base := "image: x\nmounts:\n  - bind: ./workspace\n    target: /workspace\n  - bind: ./opencode\n    target: /home/dev/.config/opencode\n    readonly: true\n"
	for _, tc := range []struct {
		name, network string
		args          []string
		wantCode      int
		wantNetwork   string // the network part of sandbox.yaml afterwards
		wantOut       string
	}{
		{"public deny becomes an object", "network: public  # for now\n", []string{"network", "deny", "ads.example.com"}, 0,
			"network: # for now\n  policy: public\n  deny:\n    - \"ads.example.com\"\n", "added to network.deny: ads.example.com"},
		{"absent deny adds an explicit public policy", "", []string{"network", "deny", "ads.example.com"}, 0,
			"\nnetwork:\n  policy: public\n  deny:\n    - \"ads.example.com\"\n", "added to network.deny"},
		{"public allow changes nothing", "network: public\n", []string{"network", "allow", "a.example.com"}, 0,
			"network: public\n", "reachable without an allow entry"},
		{"allow takes a host out of deny", "network:\n  policy: public\n  deny: [a.example.com, b.example.com]\n", []string{"network", "allow", "a.example.com"}, 0,
			"network:\n  policy: public\n  deny: [b.example.com]\n", "removed from network.deny: a.example.com"},
		{"none refuses allow", "network: none\n", []string{"network", "allow", "a.example.com"}, 1,
			"network: none\n", ""},
		{"none: deny has nothing to do", "network: none\n", []string{"network", "deny", "a.example.com"}, 0,
			"network: none\n", "already denied"},
		{"wildcard: covered host is denied explicitly", "network:\n  allow:\n    - \"*.example.com\"\n    - opencode.ai\n", []string{"network", "deny", "api.example.com"}, 0,
			"network:\n  allow:\n    - \"*.example.com\"\n    - opencode.ai\n  deny:\n    - \"api.example.com\"\n", "still covered by *.example.com"},
		{"wildcard covers a new host", "network:\n  allow:\n    - \"*.example.com\"\n    - opencode.ai\n", []string{"network", "allow", "api.example.com"}, 0,
			"network:\n  allow:\n    - \"*.example.com\"\n    - opencode.ai\n", "already reachable (covered by *.example.com)"},
		{"secret under public leaves the policy", "network: public\n", []string{"secret", "add", "TOKEN", "--allow", "api.example.com"}, 0,
			"network: public\n", "reachable without an allow entry"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, map[string]string{"OPENCODE_API_KEY": "x", "TOKEN": "y"})
			h.write("sandbox.yaml", base+tc.network)
			code := h.run(tc.args...)
			if code != tc.wantCode {
				t.Fatalf("exit %d, want %d\n%s%s", code, tc.wantCode, h.out.String(), h.err.String())
			}
			if diff := cmp.Diff(base+tc.wantNetwork, h.read("sandbox.yaml")); diff != "" {
				t.Errorf("sandbox.yaml (-want +got):\n%s", diff)
			}
			if !strings.Contains(h.out.String(), tc.wantOut) {
				t.Errorf("stdout %q does not say %q", h.out.String(), tc.wantOut)
			}
		})
	}
}
