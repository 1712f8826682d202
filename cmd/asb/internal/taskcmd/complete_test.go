package taskcmd_test

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agents-sandbox/asb/generator"
	"github.com/agents-sandbox/asb/runner"
)

// TestCompletionTakesTheTaskfilesRecord: completion (every Tab) lists the
// tasks from the record of the Taskfile's facts while the Taskfile is the
// one they were read from, as a warm run does, and from the Taskfile once
// it changed; it records nothing itself.
func TestCompletionTakesTheTaskfilesRecord(t *testing.T) {
	s := newSandbox(t, generator.DefaultOptions("opencode", "demo"))
	complete := func() string {
		t.Helper()
		out, errOut, code := s.run("", "__complete", "task", "")
		if code != 0 {
			t.Fatalf("asb __complete task: exit %d\n%s", code, errOut)
		}
		return out
	}
	if out := complete(); !strings.Contains(out, "vm:exec") {
		t.Fatalf("completion without a record: want the Taskfile's tasks:\n%s", out)
	}
	if _, err := os.Stat(filepath.Join(s.dir, runner.TaskfileFactsPath)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("completion recorded the Taskfile's facts: %v", err)
	}
	s.viaEngine(t, "cold", "task", "agent")
	s.warm(t, "task", "agent")
	p := filepath.Join(s.dir, runner.TaskfileFactsPath)
	raw, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	var rec runner.TaskfileFacts
	if err := json.Unmarshal(raw, &rec); err != nil {
		t.Fatal(err)
	}
	rec.Names = append(rec.Names, "from-the-record")
	b, _ := json.Marshal(rec)
	if err := os.WriteFile(p, b, 0o600); err != nil {
		t.Fatal(err)
	}
	if out := complete(); !strings.Contains(out, "from-the-record") {
		t.Errorf("completion parsed the Taskfile its record is of, want the record's names:\n%s", out)
	}
	appendTo(t, s.dir, "Taskfile.yml", "\n")
	if out := complete(); strings.Contains(out, "from-the-record") || !strings.Contains(out, "vm:exec") {
		t.Errorf("completion believed the record of a Taskfile since changed:\n%s", out)
	}
}
