package e2e

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agents-sandbox/asb/generator"
	"github.com/agents-sandbox/asb/host"
	"github.com/agents-sandbox/asb/internal/testkit/fakemodel"
	"github.com/agents-sandbox/asb/internal/testkit/testenv"
	"github.com/agents-sandbox/asb/runner"
	"github.com/agents-sandbox/asb/templates"
)

// imageFolder is an outer folder made by asb init for the real image: the
// generated toolchain/ as it is, on a Debian base built from packages.
type imageFolder struct {
	dir string
	id  runner.Identity
}

func newImageFolder(t *testing.T, ctx context.Context, asb, name string, env []string) imageFolder {
	t.Helper()
	return newImageFolderIn(t, ctx, asb, t.TempDir(), name, env)
}

// newImageFolderIn is newImageFolder in the folder parent.
func newImageFolderIn(t *testing.T, ctx context.Context, asb, parent, name string, env []string) imageFolder {
	t.Helper()
	dir := filepath.Join(parent, name)
	testenv.Run(t, ctx, filepath.Dir(dir), env, asb, "init", "--agent", "opencode", "--name", name,
		"--base-image", "localhost/debian:trixie-slim", dir)
	if err := os.WriteFile(filepath.Join(dir, "secrets.env"), []byte("OPENCODE_API_KEY="+canaryOpenCode+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	id, err := runner.ResolveIdentity(dir, "opencode", runner.IdentityOptions{Now: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	return imageFolder{dir: dir, id: id}
}

// TestRealAgentImage builds the image every OpenCode outer folder ships,
// for real: the Debian base from packages (no registry), the generated
// toolchain/ with the builder and isolation asb picks, then runs the agent
// in it against a stand-in model, loads it into the real msb twice (two
// outer folders, one image's layers) and creates a sandbox from it by the
// host-shape rules. The figures it logs are those of docs/image.md.
//
// A container is the closest this machine comes to the VM: the same image,
// the outer folder's two mounts (workspace read-write, the agent's config
// read-only), as the unprivileged user; not the VM's kernel or network.
func TestRealAgentImage(t *testing.T) {
	msb := testenv.MSB(t)
	podman := testenv.CachedPodman(t)
	asb := testenv.BuildAsb(t)
	ctx, cancel := context.WithTimeout(context.Background(), 12*time.Minute)
	defer cancel()
	msbEnv := testenv.MSBEnv(t)
	msbHome := msbEnvHome(msbEnv)
	env := testenv.WithEnv(msbEnv, "ASB_BUILDER="+strings.Join(podman, " "), "ASB_BUILD_ARGS=")
	a := newImageFolder(t, ctx, asb, "e2e-image", env)
	t.Cleanup(func() { cacheAs(podman, a.id.BuildTag, "opencode") })

	build := buildImage(t, ctx, asb, a, env, podman)
	agentRuns(t, ctx, podman, a)
	b := loadTwice(t, ctx, asb, msb, a, env, podman, msbHome)
	// No VM uses either image yet: image:prune frees msb's copy; the VM
	// created next loads it again from the builder's.
	testenv.Run(t, ctx, b.dir, env, asb, "task", "image:prune")
	if n, size := msbLayers(t, msbHome); n != 0 {
		t.Errorf("after image:prune with no VM, msb keeps %d layers (%d MB)", n, size/1e6)
	}
	createFromImage(t, ctx, asb, msb, a, env, msbHome)
	t.Logf("figure: image %s, %s MB; build %v (%s), rebuild %v", a.id.BuildTag, build.sizeMB, build.first, build.kind, build.again)
}

type buildFigures struct {
	first, again time.Duration
	kind, sizeMB string
}

// buildImage runs asb task image:build (base and all) and checks what came
// out: the isolation asb chose, the versions in the image, no secret in it.
func buildImage(t *testing.T, ctx context.Context, asb string, a imageFolder, env, podman []string) buildFigures {
	t.Helper()
	baseBefore := testenv.Run(t, ctx, "", nil, append(append([]string{}, podman...), "images", "-q", "localhost/debian:trixie-slim")...)
	start := time.Now()
	_, stderr, err := testenv.RunErr(ctx, a.dir, env, nil, asb, "task", "image:build")
	f := buildFigures{first: time.Since(start).Round(time.Second), kind: "cached base, layer cache"}
	if len(strings.TrimSpace(string(baseBefore))) == 0 {
		f.kind = "cold: base from Debian packages, no layer cache"
	}
	if err != nil {
		t.Fatalf("asb task image:build: %v\n%s", err, stderr)
	}
	mi, _ := os.ReadFile("/proc/self/mountinfo")
	if want, why := host.PodmanBuildArgs(mi); want != "" && !strings.Contains(string(stderr), "build "+want+" ") {
		t.Errorf("this host needs %s (%s), and image:build did not use it:\n%s", want, why, stderr)
	}
	start = time.Now()
	testenv.Run(t, ctx, a.dir, env, asb, "task", "--force", "image:build")
	f.again = time.Since(start).Round(100 * time.Millisecond)

	inspect := testenv.Run(t, ctx, "", nil, append(append([]string{}, podman...), "image", "inspect", a.id.BuildTag)...)
	var info []struct {
		Size int64
	}
	if err := json.Unmarshal(inspect, &info); err != nil || len(info) != 1 {
		t.Fatalf("podman image inspect: %v\n%s", err, inspect)
	}
	f.sizeMB = strconv.FormatInt(info[0].Size/1e6, 10)
	history := testenv.Run(t, ctx, "", nil, append(append([]string{}, podman...), "history", "--no-trunc", a.id.BuildTag)...)
	for _, blob := range [][]byte{inspect, history} {
		if strings.Contains(string(blob), canaryOpenCode) {
			t.Errorf("the image's metadata holds the secret's value")
		}
	}
	agent, err := generator.LoadAgent(templates.FS, "opencode")
	if err != nil {
		t.Fatal(err)
	}
	out, e, err := testenv.RunInImage(t, ctx, podman, a.id.BuildTag, []string{"--network", "none"},
		"sh", "-c", "opencode --version; node --version; npm --version; rg --version | head -1; git --version; id -un")
	if err != nil {
		t.Fatalf("versions in the image: %v\n%s", err, e)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != 6 || lines[0] != agent.Version || lines[2] != generator.NPMVersion || !strings.HasPrefix(lines[3], "ripgrep ") || lines[5] != "dev" {
		t.Errorf("in the image, opencode/node/npm/rg/git/user are %q; want opencode %s, npm %s, ripgrep, user dev", lines, agent.Version, generator.NPMVersion)
	}
	t.Logf("figure: in the image: %s", strings.Join(lines, " | "))
	return f
}

// agentRuns runs `opencode run` in the image with the outer folder's two
// mounts, against a stand-in model on loopback whose script writes a file
// and then looks around: the file must land in workspace/, the config must
// be read-only, and nothing else of the outer folder is in sight.
func agentRuns(t *testing.T, ctx context.Context, podman []string, a imageFolder) {
	t.Helper()
	ws := filepath.Join(a.dir, "workspace")
	if err := os.Chown(ws, 1000, 1000); err != nil { // the image's dev user writes there
		t.Fatal(err)
	}
	look := "ls -a /workspace /home/dev/.config/opencode; find / -xdev \\( -name 'secrets.*' -o -name sandbox.yaml -o -name Taskfile.yml \\) 2>/dev/null; touch /home/dev/.config/opencode/probe; echo end"
	m := fakemodel.StartModel(t,
		fakemodel.ModelStep{Tool: "write", Args: map[string]any{"filePath": "/workspace/hello.txt", "content": "hello from the fake model\n"}},
		fakemodel.ModelStep{Tool: "bash", Args: map[string]any{"command": look}},
	)
	config, _ := json.Marshal(map[string]any{
		"provider": map[string]any{"local": map[string]any{
			"npm": "@ai-sdk/openai-compatible", "name": "stand-in",
			"options": map[string]any{"baseURL": m.URL(), "apiKey": "{env:OPENCODE_API_KEY}"},
			"models":  map[string]any{fakemodel.FakeModelID: map[string]any{"name": "Fake", "tool_call": true, "limit": map[string]any{"context": 32000, "output": 4096}}},
		}},
		"model": "local/" + fakemodel.FakeModelID, "small_model": "local/" + fakemodel.FakeModelID,
	})
	flags := []string{"--network", "host", "--user", "1000:1000", "--workdir", "/workspace",
		"--volume", ws + ":/workspace:rw", "--volume", filepath.Join(a.dir, "opencode") + ":/home/dev/.config/opencode:ro",
		"--env", "OPENCODE_CONFIG_CONTENT=" + string(config), "--env", "OPENCODE_API_KEY=placeholder-key"}
	start := time.Now()
	// --auto: OpenCode's own permission prompts (for paths outside the
	// project) would end a non-interactive run; the sandbox is what is
	// under test here, not OpenCode's permissions.
	out, e, err := testenv.RunInImage(t, ctx, podman, a.id.BuildTag, flags, "opencode", "run", "--auto", "create hello.txt")
	t.Logf("figure: opencode run in the image took %v", time.Since(start).Round(100*time.Millisecond))
	if err != nil {
		t.Fatalf("opencode run: %v\n%s\n%s\nrequests:\n%s", err, out, e, m.Summary())
	}
	if b, err := os.ReadFile(filepath.Join(ws, "hello.txt")); err != nil || string(b) != "hello from the fake model\n" {
		t.Errorf("workspace/hello.txt: %q, %v", b, err)
	}
	results := m.ToolResults()
	if len(results) != 2 {
		t.Fatalf("the agent sent back %d tool results, want 2: %q\nrequests:\n%s\nopencode printed:\n%s\n%s", len(results), results, m.Summary(), out, e)
	}
	seen := results[1]
	for _, want := range []string{"hello.txt", "opencode.json", "Read-only file system", "end"} {
		if !strings.Contains(seen, want) {
			t.Errorf("the agent's look around lacks %q:\n%s", want, seen)
		}
	}
	for _, bad := range []string{"secrets.env", "secrets.yaml", "sandbox.yaml", "Taskfile.yml", canaryOpenCode} {
		if strings.Contains(seen, bad) {
			t.Errorf("the agent could see %q:\n%s", bad, seen)
		}
	}
	if _, err := os.Stat(filepath.Join(a.dir, "opencode", "probe")); err == nil {
		t.Error("the agent wrote into its read-only config folder")
	}
	for _, r := range m.Requests() {
		if r.Auth != "" && r.Auth != "Bearer placeholder-key" {
			t.Errorf("the model got Authorization %q", r.Auth)
		}
	}
}

// loadTwice loads the image into the real msb from two outer folders with
// the same toolchain: msb keeps one copy of the layers.
func loadTwice(t *testing.T, ctx context.Context, asb, msb string, a imageFolder, env, podman []string, msbHome string) imageFolder {
	t.Helper()
	start := time.Now()
	testenv.Run(t, ctx, a.dir, env, asb, "task", "image:load")
	first := time.Since(start).Round(100 * time.Millisecond)
	layers, size := msbLayers(t, msbHome)
	b := newImageFolder(t, ctx, asb, "e2e-image-two", env)
	t.Cleanup(func() { untag(podman, b.id.BuildTag) })
	start = time.Now()
	testenv.Run(t, ctx, b.dir, env, asb, "task", "image:load")
	second := time.Since(start).Round(100 * time.Millisecond)
	layers2, size2 := msbLayers(t, msbHome)
	images := testenv.Run(t, ctx, "", env, msb, "image", "ls", "-q")
	for _, ref := range []string{a.id.Image, b.id.Image} {
		if !strings.Contains(string(images), ref) {
			t.Errorf("msb image ls -q lacks %s:\n%s", ref, images)
		}
	}
	if layers == 0 || layers2 != layers || size2 > size+size/50 {
		t.Errorf("two outer folders with one toolchain: msb holds %d layers (%d MB), then %d (%d MB); want one image's layers",
			layers, size/1e6, layers2, size2/1e6)
	}
	t.Logf("figure: msb load %v, %d layers, %d MB under MSB_HOME/cache/layers; second outer folder: build+load %v, %d layers, %d MB",
		first, layers, size/1e6, second, layers2, size2/1e6)
	return b
}

// msbLayers counts the layer files msb keeps and their bytes.
func msbLayers(t *testing.T, msbHome string) (n int, bytes int64) {
	t.Helper()
	_ = filepath.WalkDir(filepath.Join(msbHome, "cache", "layers"), func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if fi, err := d.Info(); err == nil && fi.Size() > 0 && strings.HasPrefix(d.Name(), "sha256") {
				n++
				bytes += fi.Size()
			}
		}
		return nil
	})
	return n, bytes
}

// createFromImage creates the sandbox from the real image by the host-shape
// rules: where the host can boot, the agent answers in the VM; elsewhere
// msb's record names the image, and Ctrl-C ends the boot.
func createFromImage(t *testing.T, ctx context.Context, asb, msb string, a imageFolder, env []string, msbHome string) {
	t.Helper()
	env = testenv.WithEnv(env, host.SkipEnv+"=1")
	testenv.KillMachinesAtCleanup(t, msbHome)
	t.Cleanup(func() {
		_, _, _ = testenv.RunErr(context.Background(), a.dir, env, nil, msb, "remove", "--force", "--quiet", a.id.VM)
	})
	r := testenv.CreateVM(t, ctx, func() *testenv.Proc { return testenv.Start(t, a.dir, env, asb, "task", "vm:create") }, msb, env, a.id.VM, msbHome)
	if r.Booted {
		out := testenv.Run(t, ctx, a.dir, env, asb, "task", "vm:exec", "--", "opencode", "--version")
		t.Logf("figure: opencode --version in the VM: %s", out)
		return
	}
	r.CheckInterrupted(t, a.id.VM, a.id.Image, msbHome)
	if !strings.Contains(string(r.Record), a.id.Image) {
		t.Errorf("msb's record of %s does not name the image %s:\n%s", a.id.VM, a.id.Image, r.Record)
	}
	t.Logf("figure: msb create of the real image on %s: recorded as %s, Ctrl-C ended it", testenv.HostShape(), r.Status)
}

func msbEnvHome(env []string) string {
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "MSB_HOME="); ok {
			return v
		}
	}
	return ""
}

// untag removes a test's tag from the store (that name only: alone,
// podman untag drops every name of the image).
func untag(podman []string, tag string) {
	_, _, _ = testenv.RunErr(context.Background(), "", nil, nil, append(append([]string{}, podman...), "untag", tag, tag)...)
}

// cacheAs keeps the image tag names in the cached store under the stable
// name localhost/asb-test-cache/NAME, so that image:prune (which removes
// dangling images) leaves its layers for the next run, and drops tag.
func cacheAs(podman []string, tag, name string) {
	_, _, _ = testenv.RunErr(context.Background(), "", nil, nil, append(append([]string{}, podman...), "tag", tag, "localhost/asb-test-cache/"+name+":latest")...)
	untag(podman, tag)
}
