package taskcmd_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/agents-sandbox/asb/generator"
	"github.com/agents-sandbox/asb/runner"
)

// TestWarmRecordMarksFolderChecks: the engine judges, once, which check is
// only a test for a folder (vm:create's precondition on the workspace) and
// says so in the record (WarmStep.IsDir), so a warm run stats it without
// parsing shell; a record of the version before that mark is not replayed
// (the run goes the full way, and records itself anew).
func TestWarmRecordMarksFolderChecks(t *testing.T) {
	s := newSandbox(t, generator.DefaultOptions("opencode", "demo"))
	s.viaEngine(t, "cold", "task", "agent")
	p, rec := onlyWarmRecord(t, s.dir)
	var marked []string
	for _, c := range rec.Checks {
		if c.IsDir != "" {
			marked = append(marked, c.Task+" "+c.Kind+" "+c.IsDir)
		}
	}
	if want := []string{"vm:create precondition ./workspace"}; !slices.Equal(marked, want) {
		t.Errorf("checks marked as folder tests: %q, want %q", marked, want)
	}
	if got := s.warm(t, "task", "agent"); !slices.Equal(got, []string{"msb exec"}) {
		t.Fatalf("warm run invoked %q, want the msb exec alone", got)
	}
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	format := fmt.Sprintf("asb-warm %d\n", runner.WarmVersion)
	if !bytes.HasPrefix(b, []byte(format)) {
		t.Fatalf("%s does not start with %q:\n%s", p, format, b)
	}
	b = append(fmt.Appendf(nil, "asb-warm %d\n", runner.WarmVersion-1), b[len(format):]...)
	if err := os.WriteFile(p, b, 0o600); err != nil {
		t.Fatal(err)
	}
	s.viaEngine(t, "a record of the previous version", "task", "agent")
	if _, rec := onlyWarmRecord(t, s.dir); rec.Version != runner.WarmVersion {
		t.Errorf("the full run left a record of version %d, want %d", rec.Version, runner.WarmVersion)
	}
	if got := s.warm(t, "task", "agent"); !slices.Equal(got, []string{"msb exec"}) {
		t.Errorf("then warm again, it invoked %q", got)
	}
}

// onlyWarmRecord reads the one warm record of the outer folder dir.
func onlyWarmRecord(t *testing.T, dir string) (string, runner.WarmRecord) {
	t.Helper()
	recs, _ := filepath.Glob(filepath.Join(dir, runner.WarmDir, "*"))
	if len(recs) != 1 {
		t.Fatalf("warm records: %v, want one", recs)
	}
	b, err := os.ReadFile(recs[0])
	r, ok := runner.DecodeWarm(b)
	if err != nil || !ok {
		t.Fatalf("%s: %v, decoded %v\n%s", recs[0], err, ok, b)
	}
	return recs[0], *r
}
