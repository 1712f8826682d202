package e2e

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"text/template"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/agents-sandbox/asb/generator"
	"github.com/agents-sandbox/asb/internal/testkit/testenv"
	"github.com/agents-sandbox/asb/schema"
	"github.com/agents-sandbox/asb/templates"
)

// Canary values of the two secrets: they must end up nowhere on disk.
const (
	canaryOpenCode = "asb-canary-opencode-7f3c9a1e"
	canaryGitHub   = "asb-canary-github-2b8d4e6f"
)

// outer is a generated outer folder whose toolchain/ is the busybox stand-in.
type outer struct {
	dir  string
	vars map[string]string // the Taskfile's static vars
	cmds map[string][]string
}

// newOuter renders asb's outer folder for OpenCode (plus a GITHUB_TOKEN
// secret for a second host) into a temp dir, and swaps toolchain/ for the
// busybox build context: the Taskfile, sandbox.yaml and secrets.yaml are
// exactly what `asb init` writes.
func newOuter(t *testing.T, ctx context.Context) *outer {
	return newOuterWith(t, ctx, nil)
}

// newOuterWith is newOuter with the init options changed by with.
func newOuterWith(t *testing.T, ctx context.Context, with func(*schema.InitOptions)) *outer {
	t.Helper()
	opts := generator.DefaultOptions("opencode", "e2e")
	opts.Secrets = []schema.SecretSpec{{Name: "GITHUB_TOKEN", Hosts: []string{"api.github.com"}}}
	if with != nil {
		with(&opts)
	}
	plan, err := generator.Render(templates.FS, opts)
	if err != nil {
		t.Fatalf("render: %v", err)
	}
	dir := filepath.Join(t.TempDir(), "e2e")
	if _, err := generator.Apply(ctx, dir, plan, generator.WriteOptions{}); err != nil {
		t.Fatalf("apply: %v", err)
	}
	tc := filepath.Join(dir, "toolchain")
	if err := os.RemoveAll(tc); err != nil {
		t.Fatal(err)
	}
	if err := os.CopyFS(tc, os.DirFS(testenv.BusyboxContext(t))); err != nil {
		t.Fatalf("toolchain/: %v", err)
	}
	o := &outer{dir: dir, vars: map[string]string{}, cmds: map[string][]string{}}
	o.readTaskfile(t)
	return o
}

// readTaskfile reads the static vars and the shell commands of each task
// (entries that call another task are left out: the tests call those
// tasks themselves, in the Taskfile's order).
func (o *outer) readTaskfile(t *testing.T) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(o.dir, "Taskfile.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var tf struct {
		Vars  map[string]any `yaml:"vars"`
		Tasks map[string]struct {
			Cmds []any `yaml:"cmds"`
		} `yaml:"tasks"`
	}
	if err := yaml.Unmarshal(raw, &tf); err != nil {
		t.Fatalf("Taskfile.yml: %v", err)
	}
	for k, v := range tf.Vars {
		if s, ok := v.(string); ok {
			o.vars[k] = s
		}
	}
	o.vars["TASKFILE_DIR"] = o.dir // go-task's own: the Taskfile's folder
	for name, task := range tf.Tasks {
		for _, c := range task.Cmds {
			switch c := c.(type) {
			case string:
				o.cmds[name] = append(o.cmds[name], c)
			case map[string]any:
				if s, ok := c["cmd"].(string); ok {
					o.cmds[name] = append(o.cmds[name], s)
				}
			}
		}
	}
}

// command expands one Taskfile command the way go-task does for the
// constructs the Taskfile uses ({{.VAR}} and {{q .VAR}}), with overrides
// replacing the Taskfile's vars.
func (o *outer) command(t *testing.T, tmpl string, overrides map[string]string) string {
	t.Helper()
	vars := map[string]string{}
	for k, v := range o.vars {
		vars[k] = v
	}
	for k, v := range overrides {
		vars[k] = v
	}
	tp, err := template.New("cmd").Option("missingkey=error").Funcs(template.FuncMap{"q": generator.ShellQuote}).Parse(tmpl)
	if err != nil {
		t.Fatalf("Taskfile command %q: %v", tmpl, err)
	}
	var b bytes.Buffer
	if err := tp.Execute(&b, vars); err != nil {
		t.Fatalf("Taskfile command %q: %v", tmpl, err)
	}
	return b.String()
}

// task runs the shell commands of one task with sh in the outer folder.
func (o *outer) task(t *testing.T, ctx context.Context, name string, env []string, overrides map[string]string) (stderr string, err error) {
	t.Helper()
	cmds := o.cmds[name]
	if len(cmds) == 0 {
		t.Fatalf("the Taskfile has no commands for %s", name)
	}
	for _, c := range cmds {
		line := o.command(t, c, overrides)
		start := time.Now()
		_, e, err := testenv.RunErr(ctx, o.dir, env, nil, "sh", "-c", line)
		t.Logf("%s: %s (%v)", name, line, time.Since(start).Round(time.Millisecond))
		if err != nil {
			return string(e), fmt.Errorf("%s: %s: %w\n%s", name, line, err, e)
		}
	}
	return "", nil
}

func TestRealMSBCreatePodman(t *testing.T) {
	start := time.Now()
	defer func() { t.Logf("TestRealMSBCreatePodman: %v", time.Since(start).Round(time.Millisecond)) }()
	podman := testenv.Podman(t)
	quoted := make([]string, len(podman))
	for i, a := range podman {
		quoted[i] = generator.ShellQuote(a)
	}
	createVM(t, nil, map[string]string{
		"BUILDER":    strings.Join(quoted, " "),
		"BUILD_ARGS": strings.Join(testenv.PodmanBuildArgs(), " "),
	})
}

func TestRealMSBCreateDocker(t *testing.T) {
	start := time.Now()
	defer func() { t.Logf("TestRealMSBCreateDocker: %v", time.Since(start).Round(time.Millisecond)) }()
	docker, env := testenv.Docker(t)
	var dockerEnv []string
	for _, kv := range env {
		if strings.HasPrefix(kv, "DOCKER_") {
			dockerEnv = append(dockerEnv, kv)
		}
	}
	createVM(t, dockerEnv, map[string]string{"BUILDER": generator.ShellQuote(docker)})
}

// createVM runs image:build, image:load, home:create and vm:create of the
// generated Taskfile with the real tools and checks the VM msb recorded.
func createVM(t *testing.T, extraEnv []string, overrides map[string]string) {
	msb := testenv.MSB(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	o := newOuter(t, ctx)
	env := testenv.MSBEnv(t)
	msbHome := ""
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "MSB_HOME="); ok {
			msbHome = v
		}
	}
	env = testenv.WithEnv(env, append(extraEnv,
		"OPENCODE_API_KEY="+canaryOpenCode,
		"GITHUB_TOKEN="+canaryGitHub)...)
	// vm:create first runs `{{q .ASB}} validate .`; asb's own validate is
	// tested elsewhere, here it does nothing (asbStub).
	overrides["ASB"] = asbStub(t)
	vm := o.vars["VM"]
	t.Cleanup(func() {
		// Registered after MSB_HOME: runs before it is removed.
		_, _, _ = testenv.RunErr(context.Background(), o.dir, env, nil, msb, "remove", "--force", "--quiet", vm)
	})

	for _, task := range []string{"image:build", "image:load", "home:create"} {
		if _, err := o.task(t, ctx, task, env, overrides); err != nil {
			t.Fatal(err)
		}
	}
	images := testenv.Run(t, ctx, o.dir, env, msb, "image", "ls", "-q")
	if !slices.Contains(strings.Fields(string(images)), o.vars["IMAGE"]) {
		t.Fatalf("msb image ls -q = %q, want the Taskfile's IMAGE %q", images, o.vars["IMAGE"])
	}

	inspect := bootAndInspect(t, ctx, o, env, overrides, msb, msbHome, vm)
	testenv.CheckBoundary(t, inspect, testenv.Boundary{
		Dir: o.dir, HomeVolume: o.vars["HOME_VOLUME"],
		Allow:   []string{"api.github.com", "opencode.ai"},
		Secrets: map[string]string{"OPENCODE_API_KEY": "opencode.ai", "GITHUB_TOKEN": "api.github.com"},
	})
	for _, canary := range []string{canaryOpenCode, canaryGitHub} {
		if bytes.Contains(inspect, []byte(canary)) {
			t.Errorf("msb inspect shows a secret's value")
		}
	}
	testenv.NoValueOnDisk(t, msbHome, canaryOpenCode, canaryGitHub)
	testenv.NoValueOnDisk(t, o.dir, canaryOpenCode, canaryGitHub)
}

// bootAndInspect runs vm:create's commands, the last (msb create) in a
// process group of its own, and returns msb's record of the VM without
// waiting for a boot that cannot succeed: on a host that can boot it waits
// for the create and checks the VM runs; elsewhere it polls until msb has
// the record (inspectable while Starting), then ends the create with a
// Ctrl-C and the spinning msb machine with SIGTERM, as asb reap-boot does.
// So the test takes as long on a host whose doomed boot spins for minutes
// as on one where it fails at once.
func bootAndInspect(t *testing.T, ctx context.Context, o *outer, env []string, overrides map[string]string, msb, msbHome, vm string) []byte {
	t.Helper()
	cmds := o.cmds["vm:create"]
	at := slices.IndexFunc(cmds, func(c string) bool { return strings.Contains(c, "msb create ") })
	if at < 0 {
		t.Fatalf("vm:create has no msb create: %q", cmds)
	}
	// What comes after it (asb secret stamp) needs the VM up: not here.
	for _, c := range cmds[:at] {
		line := o.command(t, c, overrides)
		if _, e, err := testenv.RunErr(ctx, o.dir, env, nil, "sh", "-c", line); err != nil {
			t.Fatalf("vm:create: %s: %v\n%s", line, err, e)
		}
	}
	create := o.command(t, cmds[at], overrides)
	testenv.KillMachinesAtCleanup(t, msbHome)
	start := time.Now()
	p := testenv.Start(t, o.dir, env, "sh", "-c", create)
	if testenv.CanBoot() {
		_, stderr, code := p.Wait(ctx)
		if code != 0 {
			t.Fatalf("this host can boot microVMs, yet msb create: exit %d\n%s", code, stderr)
		}
		out := testenv.Run(t, ctx, o.dir, env, msb, "exec", vm, "--", "/bin/busybox", "echo", "ok")
		if strings.TrimSpace(string(out)) != "ok" {
			t.Fatalf("msb exec in the booted VM printed %q", out)
		}
		return testenv.Run(t, ctx, o.dir, env, msb, "inspect", vm, "--format", "json")
	}
	record := testenv.PollRecord(t, ctx, msb, env, vm, p)
	t.Logf("msb recorded %s after %v (host shape %s)", vm, time.Since(start).Round(time.Millisecond), testenv.HostShape())
	if err := p.Interrupt(); err != nil {
		t.Fatal(err)
	}
	if _, stderr, code := p.Wait(ctx); code == 0 {
		t.Fatalf("msb create succeeded on a host that cannot boot:\n%s", stderr)
	}
	for _, pid := range testenv.Machines(vm, msbHome) {
		_ = syscall.Kill(pid, syscall.SIGTERM)
	}
	testenv.NoMachineLeft(t, vm, msbHome)
	return record
}

// asbStub stands in for asb in the Taskfile: its own steps do nothing here
// (they are tested elsewhere) but `asb image build -- BUILDER build …` and
// `asb secret exec -- msb …`, which run the command they wrap (no secret
// has a command here); asb msb-conf prints no flags, as for msb 0.7.2.
func asbStub(t *testing.T) string {
	p := filepath.Join(t.TempDir(), "asb")
	stub := "#!/bin/sh\ncase \"$1 $2 $3\" in \"image build --\"|\"secret exec --\") shift 3; exec \"$@\";; esac\nexit 0\n"
	if err := os.WriteFile(p, []byte(stub), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}
