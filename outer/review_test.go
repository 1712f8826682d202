package outer

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agents-sandbox/asb/schema"
)

// The review after an agent run: the table's files at the top of the tree
// the VM wrote, compared with what was last shown; each change once.
func TestReviewHostRun(t *testing.T) {
	dir := t.TempDir()
	ws := filepath.Join(dir, WorkspaceDir)
	write := func(rel, data string) {
		t.Helper()
		p := filepath.Join(ws, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("Makefile", "all:\n")
	write("src/main.go", "package main\n")
	table := schema.HostRunTable(schema.BaseHostRun)
	if err := ReviewBaseline(dir, "", func() (schema.HostRunTable, error) { return table, nil }); err != nil {
		t.Fatal(err)
	}
	review := func() (string, []HostRunChange) {
		t.Helper()
		var out bytes.Buffer
		changes, err := ReviewHostRun(dir, "", table, &out)
		if err != nil {
			t.Fatal(err)
		}
		return out.String(), changes
	}
	if out, changes := review(); len(changes) != 0 || out != "" {
		t.Fatalf("nothing changed: %q %v", out, changes)
	}
	// The VM's run: the Makefile changed (same size, so the hash tells),
	// a VS Code task and a link appeared, a source file changed.
	write("Makefile", "evl:\n")
	write(".vscode/tasks.json", "{}\n")
	write("src/main.go", "package main // changed\n")
	if err := os.Symlink("/etc/passwd", filepath.Join(ws, ".envrc")); err != nil {
		t.Fatal(err)
	}
	out, changes := review()
	want := map[string]string{"Makefile": "changed", ".vscode/tasks.json": "new", ".envrc": "new"}
	if len(changes) != len(want) {
		t.Fatalf("changes %+v, want %v", changes, want)
	}
	for _, c := range changes {
		if want[c.Path] != c.Change || c.Why == "" {
			t.Errorf("%+v, want %s", c, want[c.Path])
		}
	}
	if !strings.Contains(out, "look at them before you run them") || !strings.Contains(out, ".vscode/tasks.json") {
		t.Errorf("printed %q", out)
	}
	// Shown once: the next review is quiet, and does not write the record.
	record := filepath.Join(dir, ".asb", "review", "workspace.json")
	before, _ := os.Stat(record)
	if out, changes := review(); len(changes) != 0 || out != "" {
		t.Errorf("a second review: %q %v", out, changes)
	}
	if after, _ := os.Stat(record); !after.ModTime().Equal(before.ModTime()) {
		t.Error("an unchanged record was written again")
	}
	// A record that cannot be read is written anew (all of its files shown).
	good, _ := os.ReadFile(record)
	if err := os.WriteFile(record, []byte("{not json"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, changes := review(); len(changes) != 3 {
		t.Errorf("after a damaged record: %+v, want every file shown as new", changes)
	}
	if again, _ := os.ReadFile(record); string(again) != string(good) {
		t.Errorf("a damaged record was not written anew: %q, want %q", again, good)
	}
	if err := os.Remove(filepath.Join(ws, "Makefile")); err != nil {
		t.Fatal(err)
	}
	if _, changes := review(); len(changes) != 1 || changes[0].Change != "removed" {
		t.Errorf("a removed Makefile: %+v", changes)
	}
}
