package taskcmd_test

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agents-sandbox/asb/generator"
	"github.com/agents-sandbox/asb/outer"
)

// keptPass runs a warm asb task agent past the window in which a file
// just written cannot be told by its stamp, so that its decisions are
// kept (outer/warmpass.go), and returns the pass's file.
func (s *sandbox) keptPass(t *testing.T) string {
	t.Helper()
	time.Sleep(200 * time.Millisecond)
	mustRun(t, s, "task", "agent")
	store, err := outer.ApprovalStore(os.Getenv)
	if err != nil {
		t.Fatal(err)
	}
	all, _ := filepath.Glob(filepath.Join(store.Dir, "folders", "*", "warm-*.pass"))
	var passes []string // this folder's (the tests share the state folder)
	for _, p := range all {
		if raw, _ := os.ReadFile(p); strings.Contains(string(raw), strconv.Quote(filepath.Join(s.dir, "Taskfile.yml"))) {
			passes = append(passes, p)
		}
	}
	if len(passes) != 1 {
		t.Fatalf("passes kept of %s: %q, want one", s.dir, passes)
	}
	s.calls()
	return passes[0]
}

// TestWarmPassDecidesOnce: once a warm run kept its decisions, the next
// one takes them: it reads no verdict (a damaged cache changes nothing, and
// no file of the trust set is read) and is the one msb exec; the pass
// names no value of a secret. A secret changed in the environment, or in
// secrets.env, is not taken from it: the VM restarts, as without a pass.
func TestWarmPassDecidesOnce(t *testing.T) {
	s := newSandbox(t, generator.DefaultOptions("opencode", "demo"))
	mustRun(t, s, "task", "agent") // cold
	s.keptPass(t)
	pass := s.keptPass(t)
	verdict := filepath.Join(filepath.Dir(pass), "verdict.json")
	if err := os.WriteFile(verdict, []byte("{damaged"), 0o600); err != nil {
		t.Fatal(err)
	}
	before := outer.TrustReads()
	if got := s.warm(t, "task", "agent"); !slices.Equal(got, []string{"msb exec"}) {
		t.Fatalf("with a pass: %q, want the msb exec alone", got)
	}
	if n := outer.TrustReads() - before; n != 0 {
		t.Errorf("with a pass, the trust check read %d files (it ran again)", n)
	}
	raw, err := os.ReadFile(pass)
	if err != nil || strings.Contains(string(raw), os.Getenv("OPENCODE_API_KEY")) {
		t.Errorf("the pass holds the secret's value (or is gone: %v):\n%s", err, raw)
	}

	t.Setenv("OPENCODE_API_KEY", "canary-rotated-in-env-77e1")
	_, stderr, code := s.run("", "task", "agent")
	if calls := s.calls(); code != 0 || len(find(calls, "msb", "stop")) != 1 || !strings.Contains(stderr, "the secrets changed") {
		t.Fatalf("a secret changed in the environment: exit %d, calls %q, want a restart\n%s", code, summary(calls), stderr)
	}

	s.keptPass(t)
	t.Setenv("OPENCODE_API_KEY", "")
	os.Unsetenv("OPENCODE_API_KEY") // from secrets.env now
	s.keptPass(t)
	appendTo(t, s.dir, "secrets.env", "OPENCODE_API_KEY=canary-rotated-in-file-0b2c\n")
	_, stderr, code = s.run("", "task", "agent")
	if calls := s.calls(); code != 0 || len(find(calls, "msb", "stop")) != 1 {
		t.Fatalf("a secret changed in secrets.env: exit %d, calls %q, want a restart\n%s", code, summary(calls), stderr)
	}
}
