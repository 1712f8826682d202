package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agents-sandbox/asb/cmd/asb/internal/cmdutil"
	"github.com/agents-sandbox/asb/cmd/asb/internal/root"
	"github.com/agents-sandbox/asb/generator"
	"github.com/agents-sandbox/asb/host"
	"github.com/agents-sandbox/asb/internal/testkit/fakes"
	"github.com/agents-sandbox/asb/schema"
	"github.com/agents-sandbox/asb/templates"
)

// The same `asb init` folder on each msb release whose behaviour differs
// (the stand-in msb speaks ASB_FAKE_MSB_VERSION): it validates; msb create,
// as vm:create runs it with asb msb-conf's flags, accepts it; no file msb
// reads holds a key that release lacks; and network check answers as that
// release decides.
func TestFolderOnEachMsbRelease(t *testing.T) {
	bin := t.TempDir()
	fake, err := fakes.Build(bin)
	if err != nil {
		t.Fatal(err)
	}
	if err := fakes.Link(fake, bin); err != nil {
		t.Fatal(err)
	}
	for _, v := range []string{"0.7.2", "0.7.3", "0.7.5", "0.7.6", "0.7.8"} {
		t.Run(v, func(t *testing.T) {
			dir := releaseEnv(t, bin, v)
			if out, code := asb(t, dir, "validate"); code != 0 {
				t.Fatalf("validate on %s: exit %d\n%s", v, code, out)
			}
			flags, code := asb(t, dir, "msb-conf")
			if code != 0 {
				t.Fatalf("msb-conf: exit %d: %s", code, flags)
			}
			caps := host.MustCaps(v)
			checkOverlay(t, dir, caps, strings.Fields(flags))
			create := append([]string{"create", "img:1", "--name", "vm", "--pull", "never", "--conf", "sandbox.yaml", "--secret-conf", "secrets.yaml"}, strings.Fields(flags)...)
			msb(t, dir, "load", "--tag", "img:1")
			if out, err := msbCmd(dir, create...).CombinedOutput(); err != nil {
				t.Fatalf("msb %s refused the folder: %v\n%s", v, err, out)
			}
			checkNetwork(t, dir, caps)
		})
	}
}

// releaseEnv is a fresh folder, the stand-in msb of release v on PATH and
// a cache of its own (the stand-in is one binary for every release).
func releaseEnv(t *testing.T, bin, v string) string {
	t.Helper()
	tmp := t.TempDir()
	opts := generator.DefaultOptions("opencode", "rel")
	plan, err := generator.Render(templates.FS, opts)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(tmp, "rel")
	if _, err := generator.Apply(context.Background(), dir, plan, generator.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "workspace"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	t.Setenv(fakes.StateEnv, filepath.Join(tmp, "state"))
	t.Setenv(fakes.VersionEnv, v)
	t.Setenv(host.MSBCacheEnv, filepath.Join(tmp, "msb-version.json"))
	t.Setenv("OPENCODE_API_KEY", "canary-key-0f3a")
	t.Setenv("HOME", filepath.Join(tmp, "home"))
	return dir
}

// checkOverlay: 0.7.5+ gets a readable 403 naming asb network allow,
// 0.7.8+ the key in authorization only; no file holds a key v lacks.
func checkOverlay(t *testing.T, dir string, caps host.MSBCaps, flags []string) {
	t.Helper()
	files := map[string]string{"sandbox.yaml": schema.SandboxFile, "secrets.yaml": schema.SecretsFile}
	for i := 0; i+1 < len(flags); i += 2 {
		files[flags[i+1]] = map[string]string{"--conf": schema.SandboxFile, "--secret-conf": schema.SecretsFile}[flags[i]]
	}
	all := ""
	for name, kind := range files {
		raw, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if lacked := schema.LackedKeys(kind, raw, caps.AtLeast); len(lacked) > 0 {
			t.Errorf("%s holds %s, which msb %s lacks", name, lacked[0].Path, caps.Version)
		}
		all += string(raw)
	}
	if got := strings.Contains(all, "deny_response: true") && strings.Contains(all, "asb network allow {host}"); got != caps.DenyResponse {
		t.Errorf("msb %s: readable denial written = %v, want %v\n%s", caps.Version, got, caps.DenyResponse, all)
	}
	if got := strings.Contains(all, "header_fields: [authorization]"); got != caps.HeaderFields {
		t.Errorf("msb %s: header_fields written = %v, want %v\n%s", caps.Version, got, caps.HeaderFields, all)
	}
	if strings.Contains(all, "canary-key-0f3a") {
		t.Error("a secret value reached a file msb reads")
	}
}

// checkNetwork: the folder as written answers the same on every release;
// without network.strict and without a secret, 0.7.3+ blocks HTTPS to the
// allowed host (strict mode) while 0.7.2 lets it through.
func checkNetwork(t *testing.T, dir string, caps host.MSBCaps) {
	t.Helper()
	if out, code := asb(t, dir, "network", "check", "opencode.ai"); code != 0 || !strings.HasPrefix(out, "Allowed: ") {
		t.Errorf("msb %s: check opencode.ai = %d %q", caps.Version, code, out)
	}
	if out, code := asb(t, dir, "network", "check", "example.com"); code != 1 || !strings.HasPrefix(out, "Denied: ") {
		t.Errorf("msb %s: check example.com = %d %q", caps.Version, code, out)
	}
	sb := filepath.Join(dir, "sandbox.yaml")
	raw, _ := os.ReadFile(sb)
	noStrict := strings.Replace(string(raw), "  strict: false\n", "", 1)
	if err := os.WriteFile(sb, []byte(noStrict), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, code := asb(t, dir, "network", "check", "opencode.ai"); code != 0 {
		t.Errorf("msb %s, no strict key, a secret (interception on): check opencode.ai = %d %q", caps.Version, code, out)
	}
	if err := os.WriteFile(filepath.Join(dir, "secrets.yaml"), []byte("# no secrets\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, code := asb(t, dir, "network", "check", "opencode.ai")
	if caps.StrictDefault {
		if code != 1 || !strings.Contains(out, "checks hostnames strictly by default") || !strings.Contains(out, "network.strict: false") {
			t.Errorf("msb %s, no strict key, no secret: check opencode.ai = %d %q, want strict mode's refusal", caps.Version, code, out)
		}
	} else if code != 0 {
		t.Errorf("msb %s, no strict key, no secret: check opencode.ai = %d %q, want allowed", caps.Version, code, out)
	}
}

func asb(t *testing.T, dir string, args ...string) (string, int) {
	t.Helper()
	var out bytes.Buffer
	f := root.NewFactory(&cmdutil.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &out})
	if args[0] != "validate" {
		args = append(args, "--dir", dir)
	} else {
		args = append(args, dir)
	}
	code := root.Run(context.Background(), args, f)
	return out.String(), code
}

func msbCmd(dir string, args ...string) *exec.Cmd {
	c := exec.Command("msb", args...)
	c.Dir = dir
	return c
}

func msb(t *testing.T, dir string, args ...string) {
	t.Helper()
	c := msbCmd(dir, args...)
	c.Stdin = strings.NewReader("FAKE-IMAGE img:1 abc\n")
	if out, err := c.CombinedOutput(); err != nil {
		t.Fatalf("msb %v: %v\n%s", args, err, out)
	}
}

// The stand-in is a real check: an overlay for 0.7.8 fails on 0.7.2 as
// the real msb 0.7.2 fails (its words).
func TestStandInRejectsNewerKeys(t *testing.T) {
	bin := t.TempDir()
	fake, err := fakes.Build(bin)
	if err != nil {
		t.Fatal(err)
	}
	if err := fakes.Link(fake, bin); err != nil {
		t.Fatal(err)
	}
	dir := releaseEnv(t, bin, "0.7.8")
	flags, _ := asb(t, dir, "msb-conf")
	msb(t, dir, "load", "--tag", "img:1")
	t.Setenv(fakes.VersionEnv, "0.7.2")
	create := append([]string{"create", "img:1", "--name", "vm", "--conf", "sandbox.yaml", "--secret-conf", "secrets.yaml"}, strings.Fields(flags)...)
	out, err := msbCmd(dir, create...).CombinedOutput()
	if err == nil || !strings.Contains(string(out), "data did not match any variant of untagged enum NetworkInput") {
		t.Errorf("msb 0.7.2 took 0.7.8's overlay: %v\n%s", err, out)
	}
}
