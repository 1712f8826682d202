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
	"github.com/agents-sandbox/asb/host"
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
	// An edited toolchain is no longer asb's render: its user approves it.
	testenv.Run(t, context.Background(), dir, env, asb, "trust")
	return dir
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
			id, err := runner.ResolveIdentity(dir, "opencode", runner.IdentityOptions{Now: time.Now()})
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

// TestRealTaskVMCreate runs `asb task vm:create` against the real msb on
// whatever host shape this is, without waiting for a boot that cannot
// succeed: the generated files parse, the home volume and the VM record
// exist, and the boundary msb will enforce is exactly the one asb promised.
// Where the boot cannot succeed, it then presses Ctrl-C (SIGINT to asb's
// process group, as a terminal does) while msb is still booting: asb's
// reap-boot must end the boot, so no msb process is left, whether the boot
// would have failed in a second or spun for minutes. Where it can boot, it
// checks the VM runs a command.
func TestRealTaskVMCreate(t *testing.T) {
	msb := testenv.MSB(t)
	asb := buildAsb(t)
	start := time.Now()
	msbEnv := testenv.MSBEnv(t)
	msbHome := envValue(msbEnv, "MSB_HOME")
	env := testenv.WithEnv(msbEnv,
		"ASB_BUILDER="+strings.Join(testenv.Podman(t), " "),
		"ASB_BUILD_ARGS="+strings.Join(testenv.PodmanBuildArgs(), " "),
		host.SkipEnv+"=1", // past the pre-boot check, to msb's own boot
		"OPENCODE_API_KEY="+canaryOpenCode, "GITHUB_TOKEN="+canaryGitHub)
	dir := realFolder(t, asb, env)
	testenv.KillMachinesAtCleanup(t, msbHome)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	// The image first, so that what follows is only the create. The names
	// are read after it, from what asb recorded (the home volume's carries
	// the second asb named it in, not the test's).
	testenv.Run(t, ctx, dir, env, asb, "task", "image:load")
	id, err := runner.ResolveIdentity(dir, "opencode", runner.IdentityOptions{Now: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_, _, _ = testenv.RunErr(context.Background(), dir, env, nil, msb, "remove", "--force", "--quiet", id.VM)
	})
	r := testenv.CreateVM(t, ctx, func() *testenv.Proc { return testenv.Start(t, dir, env, asb, "task", "vm:create") }, msb, env, id.VM, msbHome)
	if r.Booted {
		out := testenv.Run(t, ctx, dir, env, asb, "task", "vm:exec", "--", "busybox", "echo", "ok")
		if strings.TrimSpace(string(out)) != "ok" {
			t.Fatalf("vm:exec -- busybox echo ok printed %q", out)
		}
		checkRealBoundary(t, testenv.Run(t, ctx, dir, env, msb, "inspect", id.VM, "--format", "json"), dir, id, msbHome)
		return
	}
	t.Logf("msb recorded %s as %s (machine spinning: %v); Ctrl-C, and asb ended after %v in all (host shape %s)",
		id.VM, r.Status, r.Spinning, time.Since(start).Round(time.Millisecond), testenv.HostShape())
	r.CheckInterrupted(t, id.VM, id.Image, msbHome)
	testenv.Run(t, ctx, dir, env, msb, "volume", "inspect", id.HomeVolume)
	checkRealBoundary(t, r.Record, dir, id, msbHome)
}

// checkRealBoundary checks msb's record against the boundary asb promised,
// and that no canary value reached msb's state or the outer folder.
func checkRealBoundary(t *testing.T, raw []byte, dir string, id runner.Identity, msbHome string) {
	t.Helper()
	testenv.CheckBoundary(t, raw, testenv.Boundary{
		Dir: dir, HomeVolume: id.HomeVolume,
		Allow:   []string{"api.github.com", "github.com", "opencode.ai"},
		Secrets: map[string]string{"OPENCODE_API_KEY": "opencode.ai", "GITHUB_TOKEN": "api.github.com,github.com"},
	})
	for _, root := range []string{msbHome, dir} {
		testenv.NoValueOnDisk(t, root, canaryOpenCode, canaryGitHub)
	}
}

// TestRealHostCheck runs `asb task agent` as a user does, pre-boot check
// on: where this host cannot boot a microVM it refuses before any image is
// built or loaded; where it can, it is silent.
func TestRealHostCheck(t *testing.T) {
	msb := testenv.MSB(t)
	asb := buildAsb(t)
	env := testenv.WithEnv(testenv.MSBEnv(t), host.SkipEnv+"=",
		"ASB_BUILDER="+strings.Join(testenv.Podman(t), " "),
		"ASB_BUILD_ARGS="+strings.Join(testenv.PodmanBuildArgs(), " "),
		"OPENCODE_API_KEY="+canaryOpenCode, "GITHUB_TOKEN="+canaryGitHub)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if testenv.CanBoot() {
		_, stderr, err := testenv.RunErr(ctx, "", env, nil, asb, "doctor", "--boot")
		if err != nil || len(stderr) > 0 {
			t.Fatalf("asb doctor --boot on a host that can boot: %v\n%s", err, stderr)
		}
		return
	}
	dir := realFolder(t, asb, env)
	_, stderr, err := testenv.RunErr(ctx, dir, env, nil, asb, "task", "agent")
	if err == nil || !strings.Contains(string(stderr), "This host cannot boot the agent's microVM") {
		t.Fatalf("asb task agent on a %s host: %v\n%s", testenv.HostShape(), err, stderr)
	}
	if refs := msbImages(t, msb, env); len(refs) != 0 {
		t.Errorf("an image was loaded before the refusal: %q", refs)
	}
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
	s.approve() // as asb trust does after an edit by hand
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

// realVolumes lists the volumes the real msb has whose name starts with
// prefix.
func realVolumes(t *testing.T, msb string, env []string, prefix string) []string {
	t.Helper()
	out := testenv.Run(t, context.Background(), "", env, msb, "volume", "ls", "--format", "json")
	var vols []struct {
		Name string `json:"name"`
	}
	if err := json.Unmarshal(out, &vols); err != nil {
		t.Fatalf("msb volume ls --format json: %v\n%s", err, out)
	}
	var names []string
	for _, v := range vols {
		if strings.HasPrefix(v.Name, prefix) {
			names = append(names, v.Name)
		}
	}
	return names
}

// TestRealConcurrentRunsShareOneHome starts two `asb task image:load
// home:create` at once in one fresh outer folder against the real msb:
// they take turns, the second says it waits, and there is one image and
// one home volume, not two (without the lock both would build, and the
// second volume create would fail: msb refuses an existing name).
func TestRealConcurrentRunsShareOneHome(t *testing.T) {
	msb := testenv.MSB(t)
	asb := buildAsb(t)
	env := testenv.WithEnv(testenv.MSBEnv(t),
		"ASB_BUILDER="+strings.Join(testenv.Podman(t), " "),
		"ASB_BUILD_ARGS="+strings.Join(testenv.PodmanBuildArgs(), " "))
	dir := realFolder(t, asb, env)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	a := testenv.Start(t, dir, env, asb, "task", "image:load", "home:create")
	b := testenv.Start(t, dir, env, asb, "task", "image:load", "home:create")
	_, errA, codeA := a.Wait(ctx)
	_, errB, codeB := b.Wait(ctx)
	if codeA != 0 || codeB != 0 {
		t.Fatalf("exit %d and %d\n%s\n---\n%s", codeA, codeB, errA, errB)
	}
	if !strings.Contains(errA+errB, "waiting for another asb task in this folder") {
		t.Errorf("neither run waited for the other:\n%s\n---\n%s", errA, errB)
	}
	id, err := runner.ResolveIdentity(dir, "opencode", runner.IdentityOptions{Now: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	if vols := realVolumes(t, msb, env, id.VM); len(vols) != 1 || vols[0] != id.HomeVolume {
		t.Errorf("home volumes %q, want just the recorded %q", vols, id.HomeVolume)
	}
}

// TestRealLostStateKeepsTheHome deletes .asb/state.yaml after the home
// volume exists in the real msb: the next run finds it in `msb volume ls`
// (the real JSON) and records it again, instead of making an empty one.
func TestRealLostStateKeepsTheHome(t *testing.T) {
	msb := testenv.MSB(t)
	asb := buildAsb(t)
	env := testenv.MSBEnv(t)
	dir := realFolder(t, asb, env)
	testenv.Run(t, context.Background(), dir, env, asb, "task", "home:create")
	before, err := runner.ReadState(dir)
	if err != nil || before.HomeVolume == "" {
		t.Fatalf("state after home:create: %+v %v", before, err)
	}
	for _, damage := range []string{"delete", "garbage"} {
		p := filepath.Join(dir, runner.StatePath)
		if damage == "delete" {
			os.Remove(p)
		} else if err := os.WriteFile(p, []byte("home_volume: [oops\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		_, stderr, err := testenv.RunErr(context.Background(), dir, env, nil, asb, "task", "home:create")
		if err != nil || !strings.Contains(string(stderr), "found this clone's home volume "+before.HomeVolume) {
			t.Fatalf("%s: %v\n%s", damage, err, stderr)
		}
		if after, _ := runner.ReadState(dir); after.HomeVolume != before.HomeVolume {
			t.Errorf("%s: recorded %q, want %q", damage, after.HomeVolume, before.HomeVolume)
		}
	}
	id, _ := runner.ResolveIdentity(dir, "opencode", runner.IdentityOptions{Now: time.Now()})
	if vols := realVolumes(t, msb, env, id.VM); len(vols) != 1 {
		t.Errorf("home volumes %q, want one", vols)
	}
}
