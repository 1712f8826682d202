package runner

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
)

const factsTaskfile = "version: '3'\nvars:\n  AGENT: opencode\ntasks:\n  agent:\n    cmds: [echo]\n  vm:start:\n    cmds: [echo]\n"

// TestTaskfileFactsFromTheirRecord: the facts of a Taskfile come from
// their record only while the Taskfile holds the very bytes they were read
// from; an edited Taskfile, or a record of another version, is parsed.
// (The record is altered by hand so that where an answer came from shows.)
func TestTaskfileFactsFromTheirRecord(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, TaskfileName, factsTaskfile)
	f, err := ReadTaskfileFacts(dir, false)
	if err != nil || f.Agent != "opencode" || !slices.Equal(f.Names, []string{"agent", "vm:start"}) || f.Includes {
		t.Fatalf("parsed: %+v, %v", f, err)
	}
	if _, err := os.Stat(filepath.Join(dir, TaskfileFactsPath)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("recorded without save: %v", err)
	}
	if _, err := ReadTaskfileFacts(dir, true); err != nil {
		t.Fatal(err)
	}
	forge := func(mut func(*TaskfileFacts)) {
		t.Helper()
		var rec TaskfileFacts
		raw, err := os.ReadFile(filepath.Join(dir, TaskfileFactsPath))
		if err != nil || json.Unmarshal(raw, &rec) != nil {
			t.Fatalf("the record: %v\n%s", err, raw)
		}
		mut(&rec)
		b, _ := json.Marshal(rec)
		writeFile(t, dir, TaskfileFactsPath, string(b))
	}
	forge(func(r *TaskfileFacts) { r.Agent = "from-the-record" })
	if f, _ := ReadTaskfileFacts(dir, true); f.Agent != "from-the-record" {
		t.Errorf("the same bytes were parsed again (agent %q), want the record's facts", f.Agent)
	}
	forge(func(r *TaskfileFacts) { r.Version = TaskfileFactsVersion + 1 })
	if f, _ := ReadTaskfileFacts(dir, false); f.Agent != "opencode" {
		t.Errorf("a record of another version was believed: agent %q", f.Agent)
	}
	forge(func(r *TaskfileFacts) { r.Version = TaskfileFactsVersion; r.Agent = "from-the-record" })
	writeFile(t, dir, TaskfileName, factsTaskfile+"  extra:\n    cmds: [echo]\n")
	f, _ = ReadTaskfileFacts(dir, true)
	if f.Agent != "opencode" || !slices.Contains(f.Names, "extra") {
		t.Errorf("an edited Taskfile was not parsed: %+v", f)
	}
	if f, _ := ReadTaskfileFacts(dir, false); !slices.Contains(f.Names, "extra") {
		t.Errorf("the edited Taskfile's facts were not recorded: %+v", f)
	}
	var unknown *UnknownTaskError
	if err := f.Check("agent", "nope"); !errors.As(err, &unknown) || unknown.Name != "nope" {
		t.Errorf("Check(nope) = %v", err)
	}
}

func writeFile(t *testing.T, dir, rel, text string) {
	t.Helper()
	p := filepath.Join(dir, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestTaskfileFactsOfACloneAreNotBelieved: a record of the Taskfile's
// facts that the outer folder's git tracks (a teammate force-committed
// .asb/taskfile.json, with the right sha256 and a lying AGENT and task
// list) is never believed: the Taskfile is parsed.
func TestTaskfileFactsOfACloneAreNotBelieved(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, TaskfileName, factsTaskfile)
	if _, err := ReadTaskfileFacts(dir, true); err != nil {
		t.Fatal(err)
	}
	var rec TaskfileFacts
	raw, err := os.ReadFile(filepath.Join(dir, TaskfileFactsPath))
	if err != nil || json.Unmarshal(raw, &rec) != nil {
		t.Fatalf("the record: %v\n%s", err, raw)
	}
	rec.Agent, rec.Names = "evil", []string{"agent", "vm:start", "steal"}
	b, _ := json.Marshal(rec)
	writeFile(t, dir, TaskfileFactsPath, string(b))
	for _, args := range [][]string{{"init", "-q"}, {"add", "-f", TaskfileFactsPath}} {
		cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	f, err := ReadTaskfileFacts(dir, false)
	if err != nil || f.Agent != "opencode" || !slices.Equal(f.Names, []string{"agent", "vm:start"}) {
		t.Fatalf("a tracked record was believed: %+v, %v", f, err)
	}
}
