package taskcmd_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agents-sandbox/asb/generator"
)

// TestAgentAddRunsBothInOneVM: asb agent add codex in an OpenCode outer
// folder whose files the user edited keeps the edits, and both agents' tasks
// then run with the stand-ins in one VM, with both configs mounted
// read-only at their own targets.
func TestAgentAddRunsBothInOneVM(t *testing.T) {
	s := newSandbox(t, generator.DefaultOptions("opencode", "demo"))
	t.Setenv("OPENAI_API_KEY", "canary-openai-key-77d0")
	sb := filepath.Join(s.dir, "sandbox.yaml")
	raw, err := os.ReadFile(sb)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(sb, []byte(strings.Replace(string(raw), "cpus: 2", "cpus: 3 # mine", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	s.approve() // as asb trust does after an edit by hand
	out := mustRun(t, s, "agent", "add", "codex")
	for _, want := range []string{"merged        sandbox.yaml", "created       codex/config.toml", "asb task agent:codex"} {
		if !strings.Contains(out, want) {
			t.Errorf("agent add lacks %q:\n%s", want, out)
		}
	}
	edited, _ := os.ReadFile(sb)
	if !strings.Contains(string(edited), "cpus: 3 # mine") || !strings.Contains(string(edited), `target: "/etc/codex"`) {
		t.Errorf("sandbox.yaml after agent add:\n%s", edited)
	}

	mustRun(t, s, "task", "agent")
	mustRun(t, s, "task", "agent:codex", "--", "exec", "hi")
	calls := s.calls()
	creates := find(calls, "msb", "create")
	if len(creates) != 1 {
		t.Fatalf("%d msb create, want one VM: %q", len(creates), summary(calls))
	}
	execs := find(calls, "msb", "exec")[1:] // the first is vm:create's, as root
	if len(execs) != 2 || !strings.HasSuffix(execs[0].String(), "-- opencode") ||
		!strings.HasSuffix(execs[1].String(), "-- codex --dangerously-bypass-approvals-and-sandbox exec hi") {
		t.Fatalf("the two agents ran %q", execs)
	}
	vm := func(c string) string {
		before, _, _ := strings.Cut(c, " -- ")
		f := strings.Fields(before)
		return f[len(f)-1]
	}
	if a, b := vm(execs[0].String()), vm(execs[1].String()); a != b || !strings.HasPrefix(a, "demo-") {
		t.Errorf("the agents ran in %s and %s, want one VM", a, b)
	}
	conf, _ := os.ReadFile(sb)
	for _, want := range []string{`target: "/home/dev/.config/opencode"`, `target: "/etc/codex"`} {
		if !strings.Contains(string(conf), want) {
			t.Errorf("sandbox.yaml lacks the mount %s", want)
		}
	}
	if n := strings.Count(string(conf), "readonly: true"); n < 2 {
		t.Errorf("%d read-only mounts, want both configs read-only", n)
	}
}
