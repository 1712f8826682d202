package taskcmd_test

import (
	"bytes"
	"context"
	"encoding/hex"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agents-sandbox/asb/cmd/asb/internal/cmdutil"
	"github.com/agents-sandbox/asb/cmd/asb/internal/root"
	"github.com/agents-sandbox/asb/generator"
	"github.com/agents-sandbox/asb/host"
	"github.com/agents-sandbox/asb/internal/testkit/fakes"
	"github.com/agents-sandbox/asb/internal/testkit/testenv"
	"github.com/agents-sandbox/asb/runner"
)

// countingRun runs `asb ARGS` like sandbox.run and also says whether the
// engine ran (false: the warm path did all of it).
func (s *sandbox) countingRun(args ...string) (stderr string, code int, engineRan bool) {
	s.t.Helper()
	var out, errOut bytes.Buffer
	io := &cmdutil.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut}
	f := inProcess(io)
	inner := f.Engine
	f.Engine = func(ctx context.Context, spec runner.EngineSpec, io *cmdutil.IOStreams) error {
		engineRan = true
		return inner(ctx, spec, io)
	}
	s.t.Chdir(s.dir)
	code = root.Run(context.Background(), args, f)
	return errOut.String(), code, engineRan
}

func (s *sandbox) warm(t *testing.T, args ...string) []string {
	t.Helper()
	s.calls()
	stderr, code, ran := s.countingRun(args...)
	if code != 0 || ran {
		t.Fatalf("asb %s: exit %d, engine ran %v (want the warm path)\n%s", strings.Join(args, " "), code, ran, stderr)
	}
	// The checks run at once, in any order; the exec comes last.
	got := summary(s.calls())
	if len(got) > 1 {
		slices.Sort(got[:len(got)-1])
	}
	return got
}

func (s *sandbox) viaEngine(t *testing.T, why string, args ...string) []string {
	t.Helper()
	s.calls()
	stderr, code, ran := s.countingRun(args...)
	if code != 0 || !ran {
		t.Fatalf("%s: asb %s: exit %d, engine ran %v (want the engine)\n%s", why, strings.Join(args, " "), code, ran, stderr)
	}
	return summary(s.calls())
}

// TestWarmPathNoticesEveryChange: the second `asb task agent` runs without
// the engine and starts one process, the msb exec (msb's lifecycle lock
// shows the VM running, so no check runs: no msb inspect, msb status, grep
// or sh, each of which the stand-ins would record), and prints what go-task
// prints; every change the engine would act on sends it back to the
// engine: an edit of sandbox.yaml, secrets.yaml, toolchain/ or the
// Taskfile, by hand or by asb's own edit commands (limit set, network
// allow, secret add), a VM stopped or removed behind asb's back, a rotated secret,
// another asb build.
func TestWarmPathNoticesEveryChange(t *testing.T) {
	testenv.Slow(t)
	s := newSandbox(t, generator.DefaultOptions("opencode", "demo"))
	if err := fakes.LinkRecorders(fakeBin, s.bin, "grep", "sh"); err != nil {
		t.Fatal(err)
	}
	s.viaEngine(t, "cold", "task", "agent")
	if got := s.warm(t, "task", "agent"); !slices.Equal(got, []string{"msb exec"}) {
		t.Fatalf("warm run invoked %q, want the msb exec alone", got)
	}
	stderr, _, _ := s.countingRun("task", "agent")
	for _, w := range []string{`task: Task "vm:create" is up to date`, `task: Task "vm:start" is up to date`, "task: [agent] msb exec -t -u dev -w /workspace "} {
		if !strings.Contains(stderr, w) {
			t.Errorf("warm stderr lacks %q (go-task prints it):\n%s", w, stderr)
		}
	}
	id := s.identity()
	edits := []struct {
		name string
		do   func()
		want string // a tool run the engine must then make
	}{
		{"sandbox.yaml edited", func() { appendTo(t, s.dir, "sandbox.yaml", "\n# edited\n") }, "msb create"},
		{"secrets.yaml edited", func() { appendTo(t, s.dir, "secrets.yaml", "\n# edited\n") }, "msb create"},
		{"toolchain edited", func() { appendTo(t, s.dir, "toolchain/Dockerfile", "\n# edited\n") }, "docker build"},
		{"file added to toolchain", func() { appendTo(t, s.dir, "toolchain/.extra", "x") }, "docker build"},
		{"VM stopped by hand", func() { fake(t, s, "msb", "stop", id.VM) }, "msb start"},
		{"VM removed by hand", func() { fake(t, s, "msb", "remove", "--force", id.VM) }, "msb create"},
		{"secret rotated", func() { t.Setenv("OPENCODE_API_KEY", "canary-rotated-"+time.Now().String()) }, "msb start"},
		{"Taskfile edited", func() { appendTo(t, s.dir, "Taskfile.yml", "\n# edited\n") }, "msb create"},
		// asb's own edit commands approve what they write: no approval by
		// hand, and the config they changed still recreates the VM.
		{"limit set by asb", func() { s.mustAsb("limit", "set", "idle-timeout", "2h") }, "msb create"},
		{"network allow by asb", func() { s.mustAsb("network", "allow", "example.org") }, "msb create"},
		{"secret added by asb", func() {
			t.Setenv("EXTRA_TOKEN", "canary-extra-7d21")
			s.mustAsb("secret", "add", "EXTRA_TOKEN", "--allow", "api.example.org")
		}, "msb create"},
	}
	for _, e := range edits {
		e.do()
		got := s.viaEngine(t, e.name, "task", "agent")
		if !slices.Contains(got, e.want) {
			t.Errorf("%s: the engine ran %q, want %s", e.name, got, e.want)
		}
		if got := s.warm(t, "task", "agent"); !slices.Equal(got, []string{"msb exec"}) {
			t.Errorf("%s: then warm again, it invoked %q", e.name, got)
		}
	}
}

// TestWarmPathAfterATrustChange: a warm folder edited by hand (not
// approved) runs nothing at all, no msb exec either; once its user
// approves the edit, the next run is the engine's, then warm again.
func TestWarmPathAfterATrustChange(t *testing.T) {
	s := newSandbox(t, generator.DefaultOptions("opencode", "demo"))
	s.viaEngine(t, "cold", "task", "agent")
	s.warm(t, "task", "agent")
	f, err := os.OpenFile(filepath.Join(s.dir, "Taskfile.yml"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString("\n# a commit from someone else\n"); err != nil {
		t.Fatal(err)
	}
	f.Close()
	stderr, code, ran := s.countingRun("task", "agent")
	if calls := s.calls(); code == 0 || ran || len(calls) != 0 || !strings.Contains(stderr, "not approved") {
		t.Fatalf("an edit nobody approved: exit %d, engine %v, calls %q\n%s", code, ran, summary(calls), stderr)
	}
	s.approve()
	s.viaEngine(t, "approved", "task", "agent")
	if got := s.warm(t, "task", "agent"); !slices.Equal(got, []string{"msb exec"}) {
		t.Fatalf("warm after the approval: %q", got)
	}
}

// TestWarmAttachFindsNoVM: when the VM goes between msb's lock saying it
// runs and the msb exec (here: the lock held by the test itself, for a VM
// msb no longer has), msb exec answers that it is not there (msb 0.7.2:
// "error: sandbox not found: NAME", exit 1, as e2e TestRealMSBExecAnswers
// sees); asb shows none of that answer, says what it does, and makes the
// VM and attaches, in the same run.
func TestWarmAttachFindsNoVM(t *testing.T) {
	s := newSandbox(t, generator.DefaultOptions("opencode", "demo"))
	s.viaEngine(t, "cold", "task", "agent")
	id := s.identity()
	if err := os.Remove(filepath.Join(s.state, "msb-vms", hex.EncodeToString([]byte(id.VM)))); err != nil {
		t.Fatal(err)
	}
	// The stand-in's VM process sees its record gone and ends; then the
	// lock is the test's, until the msb exec has been made.
	lock := holdLock(t, host.MSBLifecycleLock(runner.MSB{}.Home(), id.VM))
	go func() {
		defer lock.Close()
		for range 2000 {
			if calls, _ := fakes.Calls(s.state); len(find(calls, "msb", "exec")) > 0 {
				return
			}
			time.Sleep(5 * time.Millisecond)
		}
	}()
	stderr, code, ran := s.countingRun("task", "agent")
	got := summary(s.calls())
	if code != 0 || !ran || len(got) < 2 || got[0] != "msb exec" || !slices.Contains(got, "msb create") || got[len(got)-1] != "msb exec" {
		t.Fatalf("exit %d, engine %v, calls %q\n%s", code, ran, got, stderr)
	}
	if strings.Contains(stderr, "sandbox not found") || !strings.Contains(stderr, id.VM+" is not running") {
		t.Errorf("msb's answer was shown, or asb did not say what it does:\n%s", stderr)
	}
}

// mustAsb runs `asb ARGS` in the folder and fails the test unless it exits 0.
func (s *sandbox) mustAsb(args ...string) {
	s.t.Helper()
	if _, stderr, code := s.run("", args...); code != 0 {
		s.t.Fatalf("asb %s: exit %d\n%s", strings.Join(args, " "), code, stderr)
	}
}

// holdLock takes the flock of p once no one else holds it (within 10 s).
func holdLock(t *testing.T, p string) *os.File {
	t.Helper()
	f, err := os.OpenFile(p, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	for range 1000 {
		if syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) == nil {
			return f
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("%s stays held", p)
	return nil
}

// TestWarmRecordsOnlyWhatCannotDrift: no record where the compiled
// commands could differ for the same key (arguments, an environment
// variable in a template, an sh: var), and none holding a secret.
func TestWarmRecordsOnlyWhatCannotDrift(t *testing.T) {
	s := newSandbox(t, generator.DefaultOptions("opencode", "demo"))
	t.Setenv("OPENCODE_API_KEY", "")
	os.Unsetenv("OPENCODE_API_KEY") // the value comes from secrets.env alone
	appendTo(t, s.dir, "secrets.env", "OPENCODE_API_KEY=canary-warm-secret-81c2\n")
	s.viaEngine(t, "cold", "task", "agent")
	s.warm(t, "task", "agent")
	recs, _ := filepath.Glob(filepath.Join(s.dir, runner.WarmDir, "*"))
	if len(recs) == 0 {
		t.Fatal("no warm record was made")
	}
	for _, r := range recs {
		raw, _ := os.ReadFile(r)
		if bytes.Contains(raw, []byte("canary-warm-secret")) {
			t.Errorf("%s holds a value of secrets.env", r)
		}
		if fi, _ := os.Stat(r); fi.Mode().Perm() != 0o600 {
			t.Errorf("%s has mode %v", r, fi.Mode().Perm())
		}
	}
	// Arguments after -- are never recorded: marks stand in their place,
	// and the next run, with others, is warm and passes those.
	s.viaEngine(t, "args", "task", "agent", "--", "--model", "canary-arg-x")
	if got := s.warm(t, "task", "agent", "--", "--model", "it's $HOME"); !slices.Equal(got, []string{"msb exec"}) {
		t.Fatalf("warm with other arguments: %q", got)
	}
	recs, _ = filepath.Glob(filepath.Join(s.dir, runner.WarmDir, "*"))
	for _, r := range recs {
		if raw, _ := os.ReadFile(r); bytes.Contains(raw, []byte("canary-arg")) {
			t.Errorf("%s holds an argument", r)
		}
	}
	// A template reading the environment: no record, every run the engine's.
	appendTo(t, s.dir, "Taskfile.yml", "\n  home:\n    deps: [vm:start]\n    cmds:\n      - 'echo {{.HOME}}'\n")
	s.viaEngine(t, "env template", "task", "home")
	s.viaEngine(t, "env template again", "task", "home")
	if _, code, _ := s.countingRun("task", "--verbose", "home"); code != 0 {
		t.Fatal("verbose run failed")
	}
}

// TestWarmExitCode: a named task's failing command fails the warm run
// with its own exit code, as through the engine.
func TestWarmExitCode(t *testing.T) {
	s := newSandbox(t, generator.DefaultOptions("opencode", "demo"))
	appendTo(t, s.dir, "Taskfile.yml", "\n  fails:\n    deps: [vm:start]\n    cmds:\n      - 'exit 3'\n")
	for i, path := range []string{"engine", "warm"} {
		stderr, code, ran := s.countingRun("task", "fails")
		if code != 3 || ran != (i == 0) || !strings.Contains(stderr, "task fails failed") {
			t.Errorf("%s: exit %d, engine %v\n%s", path, code, ran, stderr)
		}
	}
}

// appendTo adds text to the file name of the outer folder dir by hand, and
// approves the folder's new content as its user would (asb trust).
func appendTo(t *testing.T, dir, name, text string) {
	t.Helper()
	f, err := os.OpenFile(filepath.Join(dir, name), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(text); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	approveDir(t, dir)
}

// fake runs the stand-in tool as a user would by hand.
func fake(t *testing.T, s *sandbox, argv ...string) {
	t.Helper()
	testenv.Run(t, context.Background(), s.dir, os.Environ(), argv...)
}

// TestWarmBinariesNeedNoEngine runs asb as a user does: after the first
// run, `asb task agent` needs no engine at all (pointed at one that fails,
// it still works), its last command replaces asb (msb exec gets the
// terminal and the exit code is msb's own), and a shell builtin as last
// command still runs in the shell.
func TestWarmBinariesNeedNoEngine(t *testing.T) {
	p := newProcSandbox(t)
	appendTo(t, p.dir, "Taskfile.yml", "\n  fails:\n    deps: [vm:start]\n    cmds:\n      - 'exit 3'\n  fails5:\n    deps: [vm:start]\n    cmds:\n      - sh -c 'exit 5'\n")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, task := range []string{"agent", "fails", "fails5"} {
		_, _, _ = p.start(t, "task", task).Wait(ctx) // cold: the engine records it
	}
	t.Setenv(runner.EngineEnv, "/bin/false")
	p.env = os.Environ()
	out, errOut, code := p.start(t, "task", "agent").Wait(ctx)
	if code != 0 || !strings.Contains(out, "fake-exec[") {
		t.Fatalf("warm agent without an engine: exit %d\n%s%s", code, out, errOut)
	}
	if _, errOut, code = p.start(t, "task", "fails").Wait(ctx); code != 3 || !strings.Contains(errOut, "task fails failed") {
		t.Errorf("warm builtin exit 3: exit %d\n%s", code, errOut)
	}
	if _, errOut, code = p.start(t, "task", "fails5").Wait(ctx); code != 5 {
		t.Errorf("warm exec'd sh -c 'exit 5': exit %d\n%s", code, errOut)
	}
}

// TestIncludedTaskfiles: a Taskfile that includes another runs its tasks
// through asb task (go-task's includes, with namespaces), and such a run is
// never recorded for the warm path (the record would not see the other
// file change).
func TestIncludedTaskfiles(t *testing.T) {
	s := newSandbox(t, generator.DefaultOptions("opencode", "demo"))
	raw, err := os.ReadFile(filepath.Join(s.dir, "Taskfile.yml"))
	if err != nil {
		t.Fatal(err)
	}
	tf := strings.Replace(string(raw), "\ntasks:\n", "\nincludes:\n  extra: ./extra.yml\n\ntasks:\n", 1)
	if err := os.WriteFile(filepath.Join(s.dir, "Taskfile.yml"), []byte(tf), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(s.dir, "extra.yml"), []byte("version: '3'\ntasks:\n  hello:\n    cmds:\n      - echo hello-from-include\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s.approve() // as asb trust does after an edit by hand
	for i := range 2 {
		out, errOut, code := s.run("", "task", "extra:hello")
		if code != 0 || !strings.Contains(out, "hello-from-include") {
			t.Fatalf("run %d: exit %d\n%s%s", i, code, out, errOut)
		}
	}
	if recs, _ := filepath.Glob(filepath.Join(s.dir, runner.WarmDir, "*")); len(recs) != 0 {
		t.Errorf("a run with includes was recorded: %v", recs)
	}
	if _, errOut, code := s.run("", "task", "extra:nope"); code == 0 || !strings.Contains(errOut, "extra:nope") {
		t.Errorf("an unknown included task: exit %d\n%s", code, errOut)
	}
}

// TestWarmChangedTaskfileIsRead: the warm path takes the Taskfile's AGENT
// var and task names from their record (runner.ReadTaskfileFacts) only
// while the Taskfile is byte for byte the one they were read from. A
// Taskfile edited after a warm run (and approved) is read again: a task it
// no longer has and an AGENT it now sets wrong are refused by asb itself,
// before the engine runs, as on a cold run.
func TestWarmChangedTaskfileIsRead(t *testing.T) {
	s := newSandbox(t, generator.DefaultOptions("opencode", "demo"))
	s.viaEngine(t, "cold", "task", "agent")
	s.warm(t, "task", "agent")
	if _, err := os.Stat(filepath.Join(s.dir, runner.TaskfileFactsPath)); err != nil {
		t.Fatalf("no record of the Taskfile's facts: %v", err)
	}
	p := filepath.Join(s.dir, "Taskfile.yml")
	orig, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ name, old, new, want string }{
		{"task renamed", "\n  agent:\n", "\n  agent-renamed:\n", `no task "agent" in Taskfile.yml`},
		{"AGENT changed", "\n  AGENT: \"opencode\"\n", "\n  AGENT: \"Not_A_Name\"\n", `"Not_A_Name", is not a valid agent name`},
	} {
		edited := strings.Replace(string(orig), c.old, c.new, 1)
		if edited == string(orig) {
			t.Fatalf("%s: the Taskfile has no %q", c.name, c.old)
		}
		if err := os.WriteFile(p, []byte(edited), 0o644); err != nil {
			t.Fatal(err)
		}
		s.approve()
		stderr, code, ran := s.countingRun("task", "agent")
		if code == 0 || ran || !strings.Contains(stderr, c.want) {
			t.Errorf("%s: exit %d, engine ran %v, want asb's own %q:\n%s", c.name, code, ran, c.want, stderr)
		}
	}
	if err := os.WriteFile(p, orig, 0o644); err != nil {
		t.Fatal(err)
	}
	s.approve()
	s.viaEngine(t, "the Taskfile as it was, approved again", "task", "agent")
	if got := s.warm(t, "task", "agent"); !slices.Equal(got, []string{"msb exec"}) {
		t.Errorf("the Taskfile as it was: warm again, it invoked %q", got)
	}
}
