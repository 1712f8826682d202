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
	"github.com/agents-sandbox/asb/internal/testkit/testenv"
	"github.com/agents-sandbox/asb/runner"
	"github.com/agents-sandbox/asb/schema"
	"github.com/agents-sandbox/asb/templates"
)

// canaryPreset is the value of each preset's key in the tests below: it
// must end up nowhere on disk.
const canaryPreset = "asb-canary-preset-5d1e8c3a"

// presets is every agent preset of the embedded templates, manifest loaded.
func presets(t *testing.T) []schema.Agent {
	t.Helper()
	names, err := generator.Agents(templates.FS)
	if err != nil {
		t.Fatal(err)
	}
	var out []schema.Agent
	for _, n := range names {
		a, err := generator.LoadAgent(templates.FS, n)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, a)
	}
	return out
}

// TestRealPresetImages builds, for real, the image of each preset but
// OpenCode (TestRealAgentImage builds that one and runs it): asb init on a
// Debian base built from packages, `asb task image:build` with the cached
// podman store, then the agent's program in the image prints the preset's
// version (and Node.js is the preset's, when it names one). The figures it
// logs are those of docs/agents.md.
func TestRealPresetImages(t *testing.T) {
	podman := testenv.CachedPodman(t)
	asb := testenv.BuildAsb(t)
	env := testenv.WithEnv(os.Environ(), "ASB_BUILDER="+strings.Join(podman, " "), "ASB_BUILD_ARGS=")
	for _, agent := range presets(t) {
		if agent.Name == "opencode" {
			continue
		}
		t.Run(agent.Name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
			defer cancel()
			name := "e2e-img-" + agent.Name
			dir := filepath.Join(t.TempDir(), name)
			testenv.Run(t, ctx, filepath.Dir(dir), env, asb, "init", "--agent", agent.Name, "--name", name,
				"--base-image", "localhost/debian:trixie-slim", dir)
			id, err := runner.ResolveIdentity(dir, agent.Name, runner.IdentityOptions{Now: time.Now()})
			if err != nil {
				t.Fatal(err)
			}
			// The image stays in the cached store under a tag of its own, so
			// that image:prune (TestRealAgentImage's) keeps its layers for the
			// next run; this run's tag goes.
			t.Cleanup(func() { cacheAs(podman, id.BuildTag, agent.Name) })

			start := time.Now()
			if _, stderr, err := testenv.RunErr(ctx, dir, env, nil, asb, "task", "image:build"); err != nil {
				t.Fatalf("asb task image:build: %v\n%s", err, stderr)
			}
			build := time.Since(start).Round(100 * time.Millisecond)
			start = time.Now()
			testenv.Run(t, ctx, dir, env, asb, "task", "--force", "image:build")
			again := time.Since(start).Round(100 * time.Millisecond)

			// pi prints its version on standard error.
			script := generator.ShellQuote(agent.Program()) + " --version 2>&1; node --version"
			out, stderr, err := testenv.RunInImage(t, ctx, podman, id.BuildTag, []string{"--network", "none"}, "sh", "-c", script)
			if err != nil {
				t.Fatalf("%s --version in the image: %v\n%s%s", agent.Program(), err, out, stderr)
			}
			lines := strings.Split(strings.TrimSpace(string(out)), "\n")
			if len(lines) < 2 || !strings.Contains(lines[0], agent.Version) {
				t.Errorf("%s --version printed %q, want the preset's version %s", agent.Program(), out, agent.Version)
			}
			if node := lines[len(lines)-1]; agent.Node != "" && node != "v"+agent.Node {
				t.Errorf("node --version in the image is %q, want v%s", node, agent.Node)
			}
			t.Logf("figure: %s: %s --version: %s; node %s; image %s MB; image:build %v, again with nothing changed %v",
				agent.Name, agent.Program(), lines[0], lines[len(lines)-1], imageSizeMB(t, ctx, podman, id.BuildTag), build, again)
		})
	}
}

func imageSizeMB(t *testing.T, ctx context.Context, podman []string, tag string) string {
	t.Helper()
	raw := testenv.Run(t, ctx, "", nil, append(append([]string{}, podman...), "image", "inspect", tag)...)
	var info []struct{ Size int64 }
	if err := json.Unmarshal(raw, &info); err != nil || len(info) != 1 {
		t.Fatalf("podman image inspect %s: %v\n%s", tag, err, raw)
	}
	return strconv.FormatInt(info[0].Size/1e6, 10)
}

// TestRealPresetSandboxes creates the sandbox of each preset with the real
// msb by the host-shape rules (TestRealTaskVMCreate's way), on the busybox
// stand-in toolchain: what is under test is msb's resolved record of the
// generated sandbox.yaml and secrets.yaml, not the image. The agent's config
// folder must be bound read-only at its target, its hosts allowed and
// nothing else, its key an env reference bound to those hosts, and the
// key's value nowhere on disk.
func TestRealPresetSandboxes(t *testing.T) {
	msb := testenv.MSB(t)
	podman := testenv.CachedPodman(t)
	asb := testenv.BuildAsb(t)
	for _, agent := range presets(t) {
		t.Run(agent.Name, func(t *testing.T) {
			start := time.Now()
			msbEnv := testenv.MSBEnv(t)
			msbHome := msbEnvHome(msbEnv)
			env := testenv.WithEnv(msbEnv, "ASB_BUILDER="+strings.Join(podman, " "), "ASB_BUILD_ARGS=",
				host.SkipEnv+"=1", // past the pre-boot check, to msb's own boot
				agent.KeyVar+"="+canaryPreset)
			dir := filepath.Join(t.TempDir(), "sb-"+agent.Name)
			testenv.Run(t, context.Background(), filepath.Dir(dir), env, asb, "init", "--agent", agent.Name, dir)
			tc := filepath.Join(dir, "toolchain")
			if err := os.RemoveAll(tc); err != nil {
				t.Fatal(err)
			}
			if err := os.CopyFS(tc, os.DirFS(testenv.BusyboxContext(t))); err != nil {
				t.Fatal(err)
			}
			// An edited toolchain is no longer asb's render: its user approves it.
			testenv.Run(t, context.Background(), dir, env, asb, "trust")
			id, err := runner.ResolveIdentity(dir, agent.Name, runner.IdentityOptions{Now: time.Now()})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { untag(podman, id.BuildTag) })
			testenv.KillMachinesAtCleanup(t, msbHome)
			t.Cleanup(func() {
				_, _, _ = testenv.RunErr(context.Background(), dir, env, nil, msb, "remove", "--force", "--quiet", id.VM)
			})
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			testenv.Run(t, ctx, dir, env, asb, "task", "image:load")
			r := testenv.CreateVM(t, ctx, func() *testenv.Proc { return testenv.Start(t, dir, env, asb, "task", "vm:create") }, msb, env, id.VM, msbHome)
			raw := r.Record
			if r.Booted {
				raw = testenv.Run(t, ctx, dir, env, msb, "inspect", id.VM, "--format", "json")
			} else {
				r.CheckInterrupted(t, id.VM, id.Image, msbHome)
			}
			// The volume's name holds the second asb task made it in:
			// what asb recorded, not what id said a moment before.
			st, err := runner.ReadState(dir)
			if err != nil || st.HomeVolume == "" {
				t.Fatalf("%s after vm:create: %+v, %v", runner.StatePath, st, err)
			}
			testenv.CheckBoundary(t, configBindAsOpenCode(t, raw, dir, agent), testenv.Boundary{
				Dir: dir, HomeVolume: st.HomeVolume,
				Allow:   agent.Hosts,
				Secrets: map[string]string{agent.KeyVar: strings.Join(agent.Hosts, ",")},
			})
			for _, root := range []string{msbHome, dir} {
				testenv.NoValueOnDisk(t, root, canaryPreset)
			}
			t.Logf("figure: %s: msb recorded %s as %q (booted: %v, host shape %s) in %v", agent.Name, id.VM, r.Status, r.Booted,
				testenv.HostShape(), time.Since(start).Round(100*time.Millisecond))
		})
	}
}

// configBindAsOpenCode checks msb's record (msb inspect's JSON) binds the
// agent's config folder read-only at the agent's target, exactly once, and
// returns the record with that bind renamed to OpenCode's folder and target,
// which testenv.CheckBoundary expects, so that it checks all the rest.
func configBindAsOpenCode(t *testing.T, raw []byte, dir string, agent schema.Agent) []byte {
	t.Helper()
	var rec map[string]any
	if err := json.Unmarshal(raw, &rec); err != nil {
		t.Fatalf("msb inspect: %v\n%s", err, raw)
	}
	cfg, _ := rec["config"].(map[string]any)
	mounts, _ := cfg["mounts"].([]any)
	var seen []string
	found := 0
	for _, m := range mounts {
		m, _ := m.(map[string]any)
		host, _ := m["host"].(string)
		guest, _ := m["guest"].(string)
		seen = append(seen, host+" -> "+guest)
		if m["type"] != "Bind" || guest != agent.MountTarget {
			continue
		}
		found++
		opts, _ := m["options"].(map[string]any)
		if want := filepath.Join(dir, agent.ConfigDir); filepath.Clean(host) != want || opts["readonly"] != true {
			t.Errorf("%s is bound from %s (options %v), want %s read-only", guest, host, opts, want)
		}
		m["host"], m["guest"] = filepath.Join(dir, "opencode"), "/home/dev/.config/opencode"
	}
	if found != 1 {
		t.Fatalf("msb's record binds %s %d times, want once: %s", agent.MountTarget, found, strings.Join(seen, ", "))
	}
	out, err := json.Marshal(rec)
	if err != nil {
		t.Fatal(err)
	}
	return out
}
