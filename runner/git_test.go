package runner

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

func TestNoHistory(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	ctx := context.Background()
	// What a git init killed midway leaves: a config lock, no HEAD.
	killed := t.TempDir()
	if err := (Git{}).Init(ctx, killed); err != nil {
		t.Fatal(err)
	}
	gitDir := filepath.Join(killed, ".git")
	for _, f := range []string{"HEAD", "config"} {
		if err := os.Remove(filepath.Join(gitDir, f)); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(gitDir, "config.lock"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if (Git{}).IsRepo(ctx, killed) || !NoHistory(killed) {
		t.Errorf("a killed git init's .git: IsRepo %v, NoHistory %v; want false, true", (Git{}).IsRepo(ctx, killed), NoHistory(killed))
	}

	// A repository with a commit holds history, usable or not.
	repo := t.TempDir()
	for _, args := range [][]string{{"init", "-q"}, {"-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "--allow-empty", "-m", "x"}} {
		if out, err := exec.Command("git", append([]string{"-C", repo}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	if err := os.Remove(filepath.Join(repo, ".git", "HEAD")); err != nil {
		t.Fatal(err)
	}
	if NoHistory(repo) {
		t.Error("a repository with a commit (and no HEAD) is taken for a killed git init")
	}
}
