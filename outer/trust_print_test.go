package outer

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/agents-sandbox/asb/runner"
)

// On a machine without git (a minimal one, or the nested guest of the
// real-boot tests) a file that differs from asb's render is named with its
// sizes and the reason there is no diff, in words: not git's whole command
// line and Go's lookup error.
func TestPrintFilesWithoutGitSaysSo(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	v := &Verdict{
		Dir:    t.TempDir(),
		Set:    &TrustSet{Files: map[string][]byte{"opencode/opencode.json": []byte(`{"model":"x"}`)}},
		Render: &TrustSet{Files: map[string][]byte{"opencode/opencode.json": []byte(`{}`)}},
	}
	var b bytes.Buffer
	if err := v.printFiles(context.Background(), &b, runner.Git{}, nil); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	want := "opencode/opencode.json differs from asb's render (13 bytes against 2; no diff: git is not installed)\n"
	if !strings.Contains(out, want) || strings.Contains(out, "--no-index") {
		t.Errorf("printFiles without git:\n%s\nwant the line %q", out, want)
	}
}

// Where asb cannot know what git tracks (here a .git file naming a git
// folder with no index), the files that differ say why every file counts,
// and none is labelled as one .gitignore could keep out of the set.
func TestPrintFilesWithoutATrackedSet(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	dir := t.TempDir()
	writeFile(t, dir, ".git", "gitdir: ../.git/modules/demo\n")
	writeFile(t, dir, ".gitignore", "notes.txt\n")
	writeFile(t, dir, "notes.txt", "mine\n")
	writeFile(t, dir, "scripts/lint.sh", "echo lint\n")
	set, err := ReadTrustSet(dir)
	if err != nil {
		t.Fatal(err)
	}
	v := &Verdict{Dir: dir, Set: set}
	var b bytes.Buffer
	if err := v.printFiles(context.Background(), &b, runner.Git{}, nil); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{"asb cannot know what git tracks here: its .git file names a git folder with no index", "notes.txt ", "scripts/lint.sh "} {
		if !strings.Contains(out, want) {
			t.Errorf("printFiles:\n%s\nwant %q", out, want)
		}
	}
	if strings.Contains(out, "stays out of the set") {
		t.Errorf("printFiles says .gitignore keeps a file out:\n%s", out)
	}
}
