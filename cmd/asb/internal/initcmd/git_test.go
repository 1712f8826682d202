package initcmd

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agents-sandbox/asb/runner"
)

// A .git that git cannot use is made again when it is what a killed git
// init left (its lock would fail every later git init), and completed, its
// history kept, when it holds any.
func TestUnusableGitDir(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	git := func(dir string, args ...string) string {
		t.Helper()
		out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	wd := t.TempDir()

	killed := filepath.Join(wd, "killed")
	git(wd, "init", "-q", killed)
	for _, f := range []string{"HEAD", "config"} {
		_ = os.Remove(filepath.Join(killed, ".git", f))
	}
	if err := os.WriteFile(filepath.Join(killed, ".git", "config.lock"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := run(t, wd, &runner.Git{}, "--agent", "opencode", "killed"); err != nil {
		t.Fatalf("init over a killed git init's .git: %v\n%s", err, out)
	}
	if _, err := os.Stat(filepath.Join(killed, ".git", "config.lock")); err == nil {
		t.Error("the stale config.lock is still there")
	}
	git(killed, "status", "--short")

	broken := filepath.Join(wd, "broken")
	git(wd, "init", "-q", broken)
	git(broken, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "--allow-empty", "-m", "mine")
	commit := git(broken, "rev-parse", "HEAD")
	if err := os.Remove(filepath.Join(broken, ".git", "HEAD")); err != nil {
		t.Fatal(err)
	}
	if out, err := run(t, wd, &runner.Git{}, "--agent", "opencode", "broken"); err != nil {
		t.Fatalf("init over a repository without HEAD: %v\n%s", err, out)
	}
	git(broken, "cat-file", "-e", commit[:len(commit)-1])
}

// Into a new folder git init begins before the checks (early.go); a check
// that fails then takes back the folders and the .git it made.
func TestEarlyGitInitTakenBackWhenACheckFails(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	wd := t.TempDir()
	out, err := run(t, wd, &runner.Git{}, "--agent", "opencode", "new/parent/Not A Name")
	if err == nil || !strings.Contains(err.Error(), "is not a project name") {
		t.Fatalf("err = %v, want the name check's\n%s", err, out)
	}
	if _, err := os.Lstat(filepath.Join(wd, "new")); !os.IsNotExist(err) {
		t.Errorf("the folders made for the early git init are still there (%v)", err)
	}
	// The same path with a name: made, and a repository.
	if out, err := run(t, wd, &runner.Git{}, "--agent", "opencode", "--name", "fine", "new/parent/Not A Name"); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if !runner.IsRepoRoot(filepath.Join(wd, "new", "parent", "Not A Name")) {
		t.Error("no repository made")
	}
}
