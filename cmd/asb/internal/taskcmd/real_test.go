package taskcmd_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agents-sandbox/asb/generator"
	"github.com/agents-sandbox/asb/internal/testkit/testenv"
	"github.com/agents-sandbox/asb/runner"
)

// Canary values: they must never appear outside the host's environment.
const (
	canaryOpenCode = "canary-oc-7c1e0a"
	canaryGitHub   = "canary-gh-93b2f4"
)

// realFolder lays down an outer folder with the real asb binary and puts a
// FROM scratch busybox image in toolchain/, as a user may edit it.
func realFolder(t *testing.T, asb string, env []string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "proj")
	testenv.Run(t, context.Background(), filepath.Dir(dir), env, asb, "init", "--agent", "opencode",
		"--secret", "GITHUB_TOKEN@api.github.com,github.com", dir)
	bb := testenv.BusyboxContext(t)
	tc := filepath.Join(dir, "toolchain")
	if err := os.RemoveAll(tc); err != nil {
		t.Fatal(err)
	}
	if err := os.CopyFS(tc, os.DirFS(bb)); err != nil {
		t.Fatal(err)
	}
	return dir
}

// virtualization reports whether this host can boot a microVM (msb needs
// KVM with vmx/svm; asb doctor reports the same).
func virtualization() bool {
	raw, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return false
	}
	for _, f := range strings.Fields(string(raw)) {
		if f == "vmx" || f == "svm" {
			return true
		}
	}
	return false
}

func msbImages(t *testing.T, msb string, env []string) []string {
	t.Helper()
	out := testenv.Run(t, context.Background(), "", env, msb, "image", "ls", "--format", "json")
	var images []map[string]any
	if err := json.Unmarshal(out, &images); err != nil {
		t.Fatalf("msb image ls --format json: %v\n%s", err, out)
	}
	var refs []string
	for _, im := range images {
		for _, k := range []string{"reference", "Reference", "ref"} {
			if r, ok := im[k].(string); ok {
				refs = append(refs, r)
			}
		}
	}
	return refs
}

// TestRealTaskImageBuildAndLoad runs `asb task image:load` (which builds
// first) with real podman and real docker into the real msb, and checks
// the image is in `msb image ls` under the reference the VM is created from.
func TestRealTaskImageBuildAndLoad(t *testing.T) {
	msb := testenv.MSB(t)
	asb := buildAsb(t)
	for _, builder := range []string{"podman", "docker"} {
		t.Run(builder, func(t *testing.T) {
			start := time.Now()
			env := testenv.MSBEnv(t)
			switch builder {
			case "podman":
				env = testenv.WithEnv(env, "ASB_BUILDER="+strings.Join(testenv.Podman(t), " "),
					"ASB_BUILD_ARGS="+strings.Join(testenv.PodmanBuildArgs(), " "))
			case "docker":
				_, denv := testenv.Docker(t)
				env = testenv.WithEnv(env, "ASB_BUILDER=docker", "DOCKER_HOST="+envValue(denv, "DOCKER_HOST"))
			}
			dir := realFolder(t, asb, env)
			testenv.Run(t, context.Background(), dir, env, asb, "task", "image:load")
			id, err := runner.ResolveIdentity(dir, "opencode", time.Now(), false)
			if err != nil {
				t.Fatal(err)
			}
			if refs := msbImages(t, msb, env); !slices.Contains(refs, id.Image) {
				t.Fatalf("after image:load, msb image ls has %q, want %q", refs, id.Image)
			}
			// Up to date now: a second run neither builds nor loads.
			_, stderr, err := testenv.RunErr(context.Background(), dir, env, nil, asb, "task", "image:load")
			if err != nil || !strings.Contains(string(stderr), `Task "image:load" is up to date`) {
				t.Fatalf("second image:load: %v\n%s", err, stderr)
			}
			t.Logf("%s: build + load + up-to-date check took %s", builder, time.Since(start).Round(time.Millisecond))
		})
	}
}

// TestRealTaskVMCreate runs `asb task vm:create` against the real msb: the
// generated files parse, the home volume and the VM record exist, and the
// boundary msb will enforce is exactly the one asb promised.
func TestRealTaskVMCreate(t *testing.T) {
	msb := testenv.MSB(t)
	asb := buildAsb(t)
	start := time.Now()
	env := testenv.WithEnv(testenv.MSBEnv(t),
		"ASB_BUILDER="+strings.Join(testenv.Podman(t), " "),
		"ASB_BUILD_ARGS="+strings.Join(testenv.PodmanBuildArgs(), " "),
		"OPENCODE_API_KEY="+canaryOpenCode, "GITHUB_TOKEN="+canaryGitHub)
	dir := realFolder(t, asb, env)
	_, stderr, err := testenv.RunErr(context.Background(), dir, env, nil, asb, "task", "vm:create")
	id, ierr := runner.ResolveIdentity(dir, "opencode", time.Now(), false)
	if ierr != nil {
		t.Fatal(ierr)
	}
	if virtualization() {
		if err != nil {
			t.Fatalf("vm:create on a host with virtualization: %v\n%s", err, stderr)
		}
		out := testenv.Run(t, context.Background(), dir, env, asb, "task", "vm:exec", "--", "busybox", "echo", "ok")
		if strings.TrimSpace(string(out)) != "ok" {
			t.Fatalf("vm:exec -- busybox echo ok printed %q", out)
		}
	} else {
		// Exactly the failure of a host without CPU virtualization: the
		// config was accepted and the boot failed.
		if err == nil {
			t.Fatalf("vm:create succeeded on a host without CPU virtualization:\n%s", stderr)
		}
		for _, want := range []string{asb + " validate .", `failed to start "` + id.VM + `"`, "task vm:create failed"} {
			if !strings.Contains(string(stderr), want) {
				t.Errorf("vm:create stderr lacks %q:\n%s", want, stderr)
			}
		}
		for _, bad := range []string{"unknown field", "invalid sandbox configuration", "invalid config", "image not cached"} {
			if strings.Contains(string(stderr), bad) {
				t.Errorf("msb rejected the generated config (%q):\n%s", bad, stderr)
			}
		}
	}
	testenv.Run(t, context.Background(), dir, env, msb, "volume", "inspect", id.HomeVolume)
	raw := testenv.Run(t, context.Background(), dir, env, msb, "inspect", id.VM, "--format", "json")
	testenv.CheckBoundary(t, raw, testenv.Boundary{
		Dir: dir, HomeVolume: id.HomeVolume,
		Allow:   []string{"api.github.com", "github.com", "opencode.ai"},
		Secrets: map[string]string{"OPENCODE_API_KEY": "opencode.ai", "GITHUB_TOKEN": "api.github.com,github.com"},
	})
	for _, root := range []string{envValue(env, "MSB_HOME"), dir} {
		testenv.NoValueOnDisk(t, root, canaryOpenCode, canaryGitHub)
	}
	t.Logf("vm:create against the real msb took %s (virtualization: %v)", time.Since(start).Round(time.Millisecond), virtualization())
}

func envValue(env []string, key string) string {
	for i := len(env) - 1; i >= 0; i-- {
		if v, ok := strings.CutPrefix(env[i], key+"="); ok {
			return v
		}
	}
	return ""
}

// TestTerminalReachesTheCommand runs asb under a pseudo-terminal (util-linux
// script) and checks that a task's command gets that terminal as its
// stdin and stdout, as msb exec -t needs.
func TestTerminalReachesTheCommand(t *testing.T) {
	script, err := exec.LookPath("script")
	if err != nil {
		t.Skip("no script(1) to make a pseudo-terminal")
	}
	asb := buildAsb(t)
	s := newSandbox(t, generator.DefaultOptions("opencode", "demo"))
	tf := filepath.Join(s.dir, "Taskfile.yml")
	raw, err := os.ReadFile(tf)
	if err != nil {
		t.Fatal(err)
	}
	extra := "\n  ttycheck:\n    interactive: true\n    cmds:\n      - 'sh -c \"test -t 0 && test -t 1 && echo child-has-the-tty || echo child-has-no-tty\"'\n"
	if err := os.WriteFile(tf, append(raw, extra...), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(script, "-qec", generator.ShellQuote(asb)+" task --silent ttycheck", "/dev/null")
	cmd.Dir = s.dir
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "child-has-the-tty") {
		t.Fatalf("under a terminal: %v\n%s", err, out)
	}
	cmd = exec.Command(asb, "task", "--silent", "ttycheck")
	cmd.Dir = s.dir
	if out, err = cmd.CombinedOutput(); err != nil || !strings.Contains(string(out), "child-has-no-tty") {
		t.Fatalf("without a terminal the check must see none (or it proves nothing): %v\n%s", err, out)
	}
}
