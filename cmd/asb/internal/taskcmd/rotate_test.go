package taskcmd_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/agents-sandbox/asb/generator"
	"github.com/agents-sandbox/asb/internal/testkit/fakes"
	"github.com/agents-sandbox/asb/internal/testkit/testenv"
)

// TestSecretRotationRestartsTheVM: a changed value in secrets.env is an
// input of the running VM: the next asb task agent says so and restarts it
// (one stop and one start), an unchanged one restarts nothing, and the
// values appear in no other file and no output.
func TestSecretRotationRestartsTheVM(t *testing.T) {
	s := newSandbox(t, generator.DefaultOptions("opencode", "demo"))
	t.Setenv("OPENCODE_API_KEY", "") // restored at the end
	os.Unsetenv("OPENCODE_API_KEY")  // the value comes from secrets.env
	const first, second = "canary-rotate-first-91c3", "canary-rotate-second-4be7"
	env := filepath.Join(s.dir, "secrets.env")
	if err := os.WriteFile(env, []byte("OPENCODE_API_KEY="+first+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	out := mustRun(t, s, "task", "agent")
	if n := len(find(s.calls(), "msb", "create")); n != 1 {
		t.Fatalf("cold run: %d msb create, want 1", n)
	}

	_, stderr, code := s.run("", "task", "agent")
	calls := s.calls()
	if code != 0 || len(find(calls, "msb", "stop")) != 0 || len(find(calls, "msb", "start")) != 0 {
		t.Fatalf("unchanged secrets: exit %d, calls %q\n%s", code, summary(calls), stderr)
	}

	if err := os.WriteFile(env, []byte("OPENCODE_API_KEY="+second+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, stderr2, code := s.run("", "task", "agent")
	calls = s.calls()
	got := summary(calls)
	if code != 0 || len(find(calls, "msb", "stop")) != 1 || len(find(calls, "msb", "start")) != 1 || slices.Contains(got, "msb create") {
		t.Fatalf("changed secrets: exit %d, calls %q, want one msb stop and one msb start\n%s", code, got, stderr2)
	}
	// The restart's stop has a budget: without one msb waits for ever on
	// a VM that does not shut down (runner.StopBudget).
	if stop := find(calls, "msb", "stop"); !slices.Contains(stop[0], "--timeout") {
		t.Errorf("the restart's msb stop has no --timeout: %q", stop[0])
	}
	if !strings.Contains(stderr2, "the secrets changed since demo-") || !strings.Contains(stderr2, "restarting it") {
		t.Errorf("the restart was not said:\n%s", stderr2)
	}
	_, stderr3, _ := s.run("", "task", "agent")
	if calls := s.calls(); len(find(calls, "msb", "stop")) != 0 {
		t.Errorf("after the restart, nothing changed, and the VM was stopped again: %q\n%s", summary(calls), stderr3)
	}

	for _, blob := range []string{out, stderr, stderr2, stderr3} {
		if strings.Contains(blob, first) || strings.Contains(blob, second) {
			t.Errorf("a secret's value in the output:\n%s", blob)
		}
	}
	// No file but secrets.env holds a value (the stamp is keyed).
	if err := os.Rename(env, filepath.Join(t.TempDir(), "secrets.env")); err != nil {
		t.Fatal(err)
	}
	testenv.NoValueOnDisk(t, s.dir, first, second)
	testenv.NoValueOnDisk(t, s.state, first, second)
}

// TestFromSecretRunsOnlyAtStart: a secret from a command gets its value
// when the VM starts (docs/rotation.md): a warm asb task agent runs no
// command (a command that hands out a fresh value at each call restarts
// nothing) and is the one msb exec; vm:stop, then agent, runs it once and
// starts the VM with the new value.
func TestFromSecretRunsOnlyAtStart(t *testing.T) {
	s := newSandbox(t, generator.DefaultOptions("opencode", "demo"))
	counter := filepath.Join(t.TempDir(), "runs")
	fresh := `echo run >>` + counter + `; printf 'fresh-token-%s\n' "$(wc -l <` + counter + ` | tr -d ' ')"`
	if _, e, code := s.run("", "secret", "add", "GITHUB_TOKEN", "--allow", "api.github.com", "--from", fresh); code != 0 {
		t.Fatalf("secret add --from: exit %d\n%s", code, e)
	}
	runs := func() int {
		raw, _ := os.ReadFile(counter)
		return strings.Count(string(raw), "run")
	}
	mustRun(t, s, "task", "agent")
	s.calls()
	before := runs()
	for range 2 {
		if got := s.warm(t, "task", "agent"); !slices.Equal(got, []string{"msb exec"}) {
			t.Fatalf("warm agent with a --from secret invoked %q", got)
		}
	}
	if runs() != before {
		t.Errorf("a warm asb task agent ran the secret's command (%d runs, %d before)", runs(), before)
	}
	mustRun(t, s, "task", "vm:stop")
	mustRun(t, s, "task", "agent")
	got := summary(s.calls())
	if !slices.Contains(got, "msb start") || runs() == before {
		t.Errorf("after vm:stop, agent: calls %q, command runs %d (before %d): want msb start with a new value", got, runs(), before)
	}
	vm, err := fakes.VM(s.state, s.identity().VM)
	if err != nil {
		t.Fatal(err)
	}
	if vm.Status != "Running" {
		t.Errorf("the VM is %s", vm.Status)
	}
}
