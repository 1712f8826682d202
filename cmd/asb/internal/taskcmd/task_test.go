package taskcmd_test

import (
	"bytes"
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agents-sandbox/asb/cmd/asb/internal/cmdutil"
	"github.com/agents-sandbox/asb/cmd/asb/internal/root"
	"github.com/agents-sandbox/asb/generator"
	"github.com/agents-sandbox/asb/host"
	"github.com/agents-sandbox/asb/internal/testkit/fakehost"
	"github.com/agents-sandbox/asb/internal/testkit/fakes"
	"github.com/agents-sandbox/asb/internal/testkit/testenv"
	"github.com/agents-sandbox/asb/runner"
	"github.com/agents-sandbox/asb/runner/engine"
	"github.com/agents-sandbox/asb/schema"
	"github.com/agents-sandbox/asb/templates"
)

// fakeBin is the stand-in for msb, docker and podman (package fakes), and
// binDir the folder it is built in, once, by TestMain (asb too, on first
// use: see buildAsb).
var fakeBin, binDir string

// TestMain builds the stand-ins once.
func TestMain(m *testing.M) {
	cleanState := testenv.PrivateState()
	dir, err := os.MkdirTemp("", "asb-fakes-")
	if err != nil {
		panic(err)
	}
	binDir = dir
	fakeBin, err = fakes.Build(dir)
	if err != nil {
		os.RemoveAll(dir)
		panic(err)
	}
	code := m.Run()
	testenv.StopDocker()
	testenv.RemoveBuilds()
	os.RemoveAll(dir)
	cleanState()
	os.Exit(code)
}

// sandbox is an outer folder with stand-ins on PATH.
type sandbox struct {
	t     testing.TB
	dir   string
	state string
	bin   string
}

func newSandbox(t testing.TB, opts schema.InitOptions) *sandbox {
	t.Helper()
	return newSandboxFrom(t, templates.FS, opts)
}

// newSandboxFrom is newSandbox with the outer folder rendered from tree.
func newSandboxFrom(t testing.TB, tree fs.FS, opts schema.InitOptions) *sandbox {
	t.Helper()
	base := t.TempDir()
	s := &sandbox{t: t, dir: filepath.Join(base, "demo"), state: filepath.Join(base, "state"), bin: filepath.Join(base, "bin")}
	plan, err := generator.Render(tree, opts)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := generator.Apply(context.Background(), s.dir, plan, generator.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := fakes.Link(fakeBin, s.bin); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", s.bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	t.Setenv(fakes.StateEnv, s.state)
	t.Setenv(fakes.NoBootEnv, "")
	t.Setenv(fakes.BootEnv, "")
	// The pre-boot check sees a host that can boot, whatever this one is.
	t.Setenv(fakehost.ShapeEnv, "can-boot")
	t.Setenv(host.SkipEnv, "")
	t.Setenv("ASB_BUILDER", "docker")
	t.Setenv("ASB_BUILD_ARGS", "")
	t.Setenv("OPENCODE_API_KEY", "canary-opencode-key-5f1d")
	t.Setenv("HOME", filepath.Join(base, "home"))
	approveDir(t, s.dir) // as asb init approves what it wrote
	return s
}

// approve records the user's approval of the folder as it is now (asb
// trust): a test that edits the Taskfile or a config by hand approves it, as
// its user would, before asb task runs it.
func (s *sandbox) approve() {
	s.t.Helper()
	approveDir(s.t, s.dir)
}

func approveDir(t testing.TB, dir string) {
	t.Helper()
	testenv.Approve(t, dir)
}

// run runs `asb ARGS` in the outer folder (or sub, relative to it) and
// returns stdout, stderr and the exit code.
func (s *sandbox) run(sub string, args ...string) (string, string, int) {
	s.t.Helper()
	var out, errOut bytes.Buffer
	io := &cmdutil.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut}
	s.t.Chdir(filepath.Join(s.dir, sub))
	code := root.Run(context.Background(), args, inProcess(io))
	return out.String(), errOut.String(), code
}

// calls returns the recorded tool invocations since the last reset, as
// "tool subcommand" strings, and resets the log.
func (s *sandbox) calls() []fakes.Call {
	s.t.Helper()
	calls, err := fakes.Calls(s.state)
	if err != nil {
		s.t.Fatal(err)
	}
	if err := fakes.ResetCalls(s.state); err != nil {
		s.t.Fatal(err)
	}
	return calls
}

// summary turns calls into "msb create", "docker build", ….
func summary(calls []fakes.Call) []string {
	var out []string
	for _, c := range calls {
		word := c[1]
		for _, a := range c[1:] {
			if !strings.HasPrefix(a, "-") {
				word = a
				break
			}
		}
		if (word == "image" || word == "volume") && len(c) > 2 {
			for _, a := range c[2:] {
				if !strings.HasPrefix(a, "-") {
					word += " " + a
					break
				}
			}
		}
		out = append(out, c[0]+" "+word)
	}
	// The two ends of `docker save | msb load` start together, in either order.
	for i := 0; i+1 < len(out); i++ {
		if out[i] == "msb load" && strings.HasSuffix(out[i+1], " save") {
			out[i], out[i+1] = out[i+1], out[i]
		}
	}
	return out
}

func (s *sandbox) identity() runner.Identity {
	s.t.Helper()
	id, err := runner.ResolveIdentity(s.dir, "opencode", runner.IdentityOptions{Now: time.Now()})
	if err != nil {
		s.t.Fatal(err)
	}
	return id
}

func mustRun(t *testing.T, s *sandbox, args ...string) string {
	t.Helper()
	out, errOut, code := s.run("", args...)
	if code != 0 {
		t.Fatalf("asb %s: exit %d\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), code, out, errOut)
	}
	return out
}

func find(calls []fakes.Call, tool, sub string) []fakes.Call {
	var out []fakes.Call
	for _, c := range calls {
		if c[0] == tool && len(c) > 1 && c[1] == sub {
			out = append(out, c)
		}
	}
	return out
}

func TestAgentColdThenWarm(t *testing.T) {
	s := newSandbox(t, generator.DefaultOptions("opencode", "demo"))
	out := mustRun(t, s, "task", "agent", "--", "--model", "x y")
	id := s.identity()

	cold := s.calls()
	want := []string{
		"msb volume ls",        // no home volume recorded yet: is there one of this clone?
		"msb inspect",          // vm:create status: no VM yet
		"msb image inspect",    // image:load status: not loaded
		"docker image inspect", // image:build status: not built
		"docker build",         // image:build
		"docker save",          // image:load, piped into
		"msb load",             //   msb load
		"msb volume inspect",   // home:create status
		"msb volume create",    // home:create
		"msb status",           // vm:create's reap-boot: no boot left half done
		"msb --version",        // vm:create's asb msb-conf (once per msb binary: cached)
		"msb create",           // vm:create
		"msb exec",             // vm:create: dev gets its home's folders back from msb
		"msb status",           // vm:create's deferred reap-boot: booted, nothing to end
		"msb status",           // vm:start status: running already
		"msb exec",             // agent
	}
	if got := summary(cold); !slices.Equal(got, want) {
		t.Fatalf("cold run invoked\n  %s\nwant\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
	exec := find(cold, "msb", "exec")[1]
	wantExec := []string{"msb", "exec", "-t", "-u", "dev", "-w", "/workspace", id.VM, "--", "opencode", "--model", "x y"}
	if !slices.Equal(exec, wantExec) {
		t.Errorf("exec argv = %q, want %q", exec, wantExec)
	}
	if !strings.Contains(out, "fake-exec["+id.VM+"]: opencode --model x y") {
		t.Errorf("the agent's output did not reach asb's stdout: %q", out)
	}
	create := find(cold, "msb", "create")[0].String()
	for _, part := range []string{
		"create " + id.Image + " --name " + id.VM + " --replace",
		"--conf sandbox.yaml --secret-conf secrets.yaml",
		"--mount-named " + id.HomeVolume + ":/home/dev",
		"--mount-owned /var/lib/containers:kind=disk,size=8G",
	} {
		if !strings.Contains(create, part) {
			t.Errorf("msb create lacks %q:\n%s", part, create)
		}
	}
	build := find(cold, "docker", "build")[0]
	if build[len(build)-1] != "toolchain" {
		t.Errorf("the build context is %q, want toolchain (only)", build[len(build)-1])
	}

	// Then nothing to build, load or create: a run without arguments (the
	// engine's status checks and the exec; it records the run), and the
	// next one is warm: the msb exec alone, the one tool call the stand-ins
	// record.
	mustRun(t, s, "task", "agent")
	s.calls()
	if warm := s.warm(t, "task", "agent"); !slices.Equal(warm, []string{"msb exec"}) {
		t.Fatalf("warm run invoked %q, want the msb exec alone", warm)
	}
}

func TestEditsRedoWhatDependsOnThem(t *testing.T) {
	s := newSandbox(t, generator.DefaultOptions("opencode", "demo"))
	mustRun(t, s, "task", "agent")
	s.calls()

	// A changed Dockerfile: rebuild, reload, recreate.
	df := filepath.Join(s.dir, "toolchain", "Dockerfile")
	raw, err := os.ReadFile(df)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(df, append(raw, []byte("RUN echo changed\n")...), 0o644); err != nil {
		t.Fatal(err)
	}
	s.approve() // as asb trust does after an edit by hand
	mustRun(t, s, "task", "agent")
	got := summary(s.calls())
	for _, w := range []string{"docker build", "docker save", "msb load", "msb create", "msb exec"} {
		if !slices.Contains(got, w) {
			t.Errorf("after a Dockerfile edit, %q did not run; ran %q", w, got)
		}
	}
	if slices.Contains(got, "msb volume create") {
		t.Errorf("a Dockerfile edit recreated the home volume: %q", got)
	}

	// A changed sandbox.yaml: recreate the VM, nothing else.
	sb := filepath.Join(s.dir, "sandbox.yaml")
	raw, err = os.ReadFile(sb)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(sb, bytes.Replace(raw, []byte("cpus: 2"), []byte("cpus: 3"), 1), 0o644); err != nil {
		t.Fatal(err)
	}
	s.approve() // as asb trust does after an edit by hand
	mustRun(t, s, "task", "agent")
	got = summary(s.calls())
	if !slices.Contains(got, "msb create") {
		t.Errorf("editing sandbox.yaml did not recreate the VM: %q", got)
	}
	for _, w := range []string{"docker build", "msb load"} {
		if slices.Contains(got, w) {
			t.Errorf("editing sandbox.yaml ran %q: %q", w, got)
		}
	}
}

func TestStoppedVMIsStartedNotRecreated(t *testing.T) {
	s := newSandbox(t, generator.DefaultOptions("opencode", "demo"))
	mustRun(t, s, "task", "agent")
	mustRun(t, s, "task", "vm:stop")
	s.calls()
	mustRun(t, s, "task", "agent")
	got := summary(s.calls())
	// The warm path's checks first: they run at once, and the first to fail
	// (the VM is not running) ends the others, so one or both of them ran,
	// in either order. Then the engine's.
	engine := []string{"msb inspect", "msb status", "msb status", "msb start", "msb status", "msb exec"}
	if len(got) < len(engine)+1 || len(got) > len(engine)+2 || !slices.Equal(got[len(got)-len(engine):], engine) {
		t.Fatalf("with a stopped VM, agent ran %q, want one or two warm checks, then %q", got, engine)
	}
	warm := slices.Clone(got[:len(got)-len(engine)])
	slices.Sort(warm)
	if !slices.Equal(warm, []string{"msb status"}) && !slices.Equal(warm, []string{"msb inspect", "msb status"}) {
		t.Fatalf("the warm checks of a stopped VM were %q, want msb status (and msb inspect)", warm)
	}
}

func TestDryRunsNothing(t *testing.T) {
	s := newSandbox(t, generator.DefaultOptions("opencode", "demo"))
	_, errOut, code := s.run("", "task", "--dry", "agent", "--", "--model", "x")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if calls := s.calls(); len(calls) != 0 {
		t.Fatalf("--dry invoked tools: %v", calls)
	}
	id := s.identity()
	for _, w := range []string{"docker build", "msb load", "msb create " + id.Image, "msb exec -t -u dev -w /workspace " + id.VM + " -- opencode --model x"} {
		if !strings.Contains(errOut, w) {
			t.Errorf("--dry did not print %q:\n%s", w, errOut)
		}
	}
	if _, err := os.Stat(filepath.Join(s.dir, runner.StatePath)); err == nil {
		t.Errorf("--dry recorded %s", runner.StatePath)
	}
}

func TestSecretsEnvFeedsCreateAndEnvironmentWins(t *testing.T) {
	s := newSandbox(t, generator.DefaultOptions("opencode", "demo"))
	t.Setenv("OPENCODE_API_KEY", "")
	os.Unsetenv("OPENCODE_API_KEY")
	// Without a value anywhere, msb create refuses, as the real one does.
	_, errOut, code := s.run("", "task", "vm:create")
	if code == 0 || !strings.Contains(errOut, "OPENCODE_API_KEY") {
		t.Fatalf("create without the key: exit %d, stderr %q", code, errOut)
	}
	if err := os.WriteFile(filepath.Join(s.dir, "secrets.env"), []byte("OPENCODE_API_KEY=from-the-file\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s.calls()
	mustRun(t, s, "task", "vm:create")
	if got := summary(s.calls()); !slices.Contains(got, "msb create") {
		t.Fatalf("vm:create with the key in secrets.env did not create: %q", got)
	}
	// An exported value wins over the file: go-task does not override the
	// environment with a dotenv file, and the stand-in sees the variable.
	vm, err := fakes.VM(s.state, s.identity().VM)
	if err != nil {
		t.Fatal(err)
	}
	if got := vm.SecretSHA256["OPENCODE_API_KEY"]; got != fakes.Digest("from-the-file") {
		t.Fatalf("create saw the key %s, want secrets.env's", got)
	}
	t.Setenv("OPENCODE_API_KEY", "from-the-environment")
	mustRun(t, s, "task", "--force", "vm:create")
	if vm, err = fakes.VM(s.state, s.identity().VM); err != nil {
		t.Fatal(err)
	}
	if got := vm.SecretSHA256["OPENCODE_API_KEY"]; got != fakes.Digest("from-the-environment") {
		t.Fatalf("create saw the key %s, want the exported one (it wins over secrets.env)", got)
	}
}

func TestFromASubfolderAndUnknownTask(t *testing.T) {
	s := newSandbox(t, generator.DefaultOptions("opencode", "demo"))
	if err := os.MkdirAll(filepath.Join(s.dir, "workspace", "src", "pkg"), 0o755); err != nil {
		t.Fatal(err)
	}
	out, _, code := s.run("workspace/src/pkg", "task", "--list")
	if code != 0 || !strings.Contains(out, "vm:create") || !strings.Contains(out, "Start opencode in the VM") {
		t.Fatalf("--list from a subfolder: exit %d\n%s", code, out)
	}
	_, errOut, code := s.run("", "task", "agnet")
	if code == 0 || !strings.Contains(errOut, `no task "agnet"`) || !strings.Contains(errOut, "agent, ") {
		t.Fatalf("unknown task: exit %d, stderr %q", code, errOut)
	}
	if n := strings.Count(strings.TrimSpace(errOut), "\n"); n != 0 {
		t.Errorf("unknown task printed %d lines, want one:\n%s", n+1, errOut)
	}
	if calls := s.calls(); len(calls) != 0 {
		t.Errorf("an unknown task invoked tools: %v", calls)
	}
}

func TestBrokenTaskfileNamesFileAndLine(t *testing.T) {
	s := newSandbox(t, generator.DefaultOptions("opencode", "demo"))
	tf := filepath.Join(s.dir, "Taskfile.yml")
	raw, err := os.ReadFile(tf)
	if err != nil {
		t.Fatal(err)
	}
	broken := strings.Replace(string(raw), "  image:build:\n", "  image:build:\n   bad: [\n", 1)
	if err := os.WriteFile(tf, []byte(broken), 0o644); err != nil {
		t.Fatal(err)
	}
	s.approve() // as asb trust does after an edit by hand
	_, errOut, code := s.run("", "task", "agent")
	if code == 0 || !strings.Contains(errOut, "Taskfile.yml") || !strings.Contains(errOut, ":") {
		t.Fatalf("broken Taskfile: exit %d, stderr %q", code, errOut)
	}
	t.Logf("broken Taskfile error: %s", errOut)
}

func TestExecNeedsACommandAndFailingCommandExitCode(t *testing.T) {
	s := newSandbox(t, generator.DefaultOptions("opencode", "demo"))
	mustRun(t, s, "task", "vm:create")
	s.calls()
	_, errOut, code := s.run("", "task", "vm:exec")
	if code == 0 || !strings.Contains(errOut, "say what to run") {
		t.Fatalf("vm:exec without a command: exit %d, stderr %q", code, errOut)
	}
	out := mustRun(t, s, "task", "vm:exec", "--", "busybox", "echo", "ok")
	if !strings.Contains(out, "busybox echo ok") {
		t.Errorf("vm:exec output: %q", out)
	}
}

func TestHomeResetAsksUnlessYes(t *testing.T) {
	s := newSandbox(t, generator.DefaultOptions("opencode", "demo"))
	mustRun(t, s, "task", "vm:create")
	s.calls()
	_, errOut, code := s.run("", "task", "home:reset")
	if code == 0 || !strings.Contains(errOut, "--yes") {
		t.Fatalf("home:reset without a terminal or --yes: exit %d, stderr %q", code, errOut)
	}
	if calls := summary(s.calls()); slices.Contains(calls, "msb volume rm") {
		t.Fatalf("home:reset removed the volume without asking: %q", calls)
	}
	mustRun(t, s, "task", "--yes", "home:reset")
	got := summary(s.calls())
	for _, w := range []string{"msb remove", "msb volume rm", "msb volume create"} {
		if !slices.Contains(got, w) {
			t.Errorf("home:reset --yes did not run %q: %q", w, got)
		}
	}
}

func TestTwoClonesGetTheirOwnNames(t *testing.T) {
	a := newSandbox(t, generator.DefaultOptions("opencode", "demo"))
	b := newSandbox(t, generator.DefaultOptions("opencode", "demo"))
	ida, idb := a.identity(), b.identity()
	if ida.VM == idb.VM || ida.Image == idb.Image || ida.BuildTag == idb.BuildTag {
		t.Fatalf("two clones share names: %+v / %+v", ida, idb)
	}
	if !strings.HasPrefix(ida.VM, "demo-") || !strings.HasSuffix(ida.VM, "-opencode") {
		t.Errorf("VM name %q is not <slug>-opencode", ida.VM)
	}
}

func TestInterruptStopsTheRunningCommand(t *testing.T) {
	s := newSandbox(t, generator.DefaultOptions("opencode", "demo"))
	tf := filepath.Join(s.dir, "Taskfile.yml")
	raw, err := os.ReadFile(tf)
	if err != nil {
		t.Fatal(err)
	}
	pidFile := filepath.Join(t.TempDir(), "pid")
	extra := "\n  wait:\n    desc: sleeps\n    cmds:\n      - 'sh -c \"echo \\$\\$ > " + pidFile + "; exec sleep 30\"'\n"
	if err := os.WriteFile(tf, append(raw, extra...), 0o644); err != nil {
		t.Fatal(err)
	}
	s.approve() // as asb trust does after an edit by hand
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		for range 100 {
			// The shell creates the file before it writes the pid: wait
			// for the pid itself.
			if b, err := os.ReadFile(pidFile); err == nil && strings.TrimSpace(string(b)) != "" {
				break
			}
			time.Sleep(50 * time.Millisecond)
		}
		cancel() // what Ctrl-C does: main's signal.NotifyContext
	}()
	var out, errOut bytes.Buffer
	t.Chdir(s.dir)
	start := time.Now()
	code := root.Run(ctx, []string{"task", "wait"}, inProcess(&cmdutil.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut}))
	if took := time.Since(start); took > 10*time.Second {
		t.Fatalf("interrupt took %s to stop the task", took)
	}
	if code == 0 || !strings.Contains(errOut.String(), "interrupted") {
		t.Fatalf("interrupted task: exit %d, stderr %q", code, errOut.String())
	}
	pid, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	if strings.TrimSpace(string(pid)) == "" {
		t.Fatal("the command wrote no pid before the interrupt")
	}
	if _, err := os.Stat("/proc/" + strings.TrimSpace(string(pid))); err == nil {
		t.Fatalf("the interrupted command (pid %s) still runs", strings.TrimSpace(string(pid)))
	}
}

func TestValidationRefusesBeforeCreate(t *testing.T) {
	s := newSandbox(t, generator.DefaultOptions("opencode", "demo"))
	sec := filepath.Join(s.dir, "secrets.yaml")
	raw, err := os.ReadFile(sec)
	if err != nil {
		t.Fatal(err)
	}
	leaked := strings.Replace(string(raw), `value: "${OPENCODE_API_KEY}"`, `value: "sk-pasted-by-mistake-1234"`, 1)
	if leaked == string(raw) {
		t.Fatal("the generated secrets.yaml has no value line to replace")
	}
	if err := os.WriteFile(sec, []byte(leaked), 0o644); err != nil {
		t.Fatal(err)
	}
	s.approve() // as asb trust does after an edit by hand
	out, errOut, code := s.run("", "task", "agent")
	if code == 0 {
		t.Fatalf("asb task agent with a literal secret succeeded:\n%s\n%s", out, errOut)
	}
	if !strings.Contains(out, "secrets.yaml:") || !strings.Contains(out, "literal") {
		t.Errorf("the refusal does not name the file and line:\nstdout:\n%s\nstderr:\n%s", out, errOut)
	}
	if strings.Contains(out+errOut, "sk-pasted-by-mistake-1234") {
		t.Errorf("the refusal echoed the secret value")
	}
	t.Logf("stdout:\n%s\nstderr:\n%s", out, errOut)
	for _, c := range summary(s.calls()) {
		if c == "msb create" || c == "docker build" {
			t.Fatalf("ran %q although validation failed", c)
		}
	}
}

func TestSummaryDescribesWithoutRunning(t *testing.T) {
	s := newSandbox(t, generator.DefaultOptions("opencode", "demo"))
	out, errOut, code := s.run("", "task", "--summary", "vm:create")
	if code != 0 {
		t.Fatalf("--summary: exit %d: %s", code, errOut)
	}
	for _, want := range []string{"vm:create", "Create the VM from sandbox.yaml", "msb create", "--secret-conf secrets.yaml"} {
		if !strings.Contains(out, want) {
			t.Errorf("--summary vm:create lacks %q:\n%s", want, out)
		}
	}
	if calls := s.calls(); len(calls) != 0 {
		t.Errorf("--summary ran tools: %v", calls)
	}
	if _, err := os.Stat(filepath.Join(s.dir, runner.StatePath)); err == nil {
		t.Errorf("--summary recorded %s", runner.StatePath)
	}
	if _, _, code := s.run("", "task", "--summary", "nope"); code == 0 {
		t.Error("--summary of an unknown task succeeded")
	}
}

// inProcess is asb's factory with the engine run in this process (asb
// itself execs asb-task: the tests of procSandbox take that path), and the
// warm path's last command run as a child: exec would replace the test
// binary itself.
func inProcess(io *cmdutil.IOStreams) *cmdutil.Factory {
	f := root.NewFactory(io)
	f.Exec = nil
	// The Taskfile calls asb back (doctor, validate, secret exec…): the
	// small asb of testenv.ScriptTools, with the scripts' hooks (this test
	// binary under that name started 3.5 times slower).
	f.Executable = func() (string, error) {
		d, err := testenv.ScriptTools()
		return filepath.Join(d, "asb"), err
	}
	f.Engine = func(ctx context.Context, spec runner.EngineSpec, io *cmdutil.IOStreams) error {
		return engine.Run(ctx, spec, engine.Stdio{In: io.In, Out: io.Out, Err: io.ErrOut})
	}
	return f
}
