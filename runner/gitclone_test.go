package runner

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agents-sandbox/asb/schema"
)

// bareRepo makes a bare repository with one commit on main, and a git
// config of the user's own in which https://example.invalid/ is rewritten
// to it (as a user's insteadOf may be): a recorded https URL that git
// would turn into a local one.
func bareRepo(t *testing.T) (bare string) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	dir := t.TempDir()
	bare = filepath.Join(dir, "app.git")
	seed := filepath.Join(dir, "seed")
	for _, args := range [][]string{
		{"init", "-q", "--bare", "-b", "main", bare},
		{"init", "-q", "-b", "main", seed},
		{"-C", seed, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "--allow-empty", "-m", "x"},
		{"-C", seed, "push", "-q", bare, "HEAD:main"},
	} {
		if out, err := exec.Command("git", args...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	cfg := filepath.Join(dir, "gitconfig")
	if err := os.WriteFile(cfg, []byte("[url \""+bare+"\"]\n\tinsteadOf = https://example.invalid/app.git\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("GIT_CONFIG_GLOBAL", cfg)
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	return bare
}

func TestCloneAtRefusesLocalOrigins(t *testing.T) {
	bare := bareRepo(t)
	ctx := context.Background()
	for _, url := range []string{bare, "file://" + bare, "ext::sh -c touch% pwned", "-" + bare, "/x::y"} {
		dst := filepath.Join(t.TempDir(), "ws")
		_, err := (Git{}).CloneAt(ctx, schema.WorkspaceOrigin{URL: url}, dst)
		if err == nil || !strings.HasPrefix(err.Error(), "asb.yaml: workspace.url") {
			t.Errorf("%q: got %v, want the record's origin refused", url, err)
		}
		if _, err := os.Stat(dst); !os.IsNotExist(err) {
			t.Errorf("%q: %s exists", url, dst)
		}
	}
	// An https URL that the user's config turns into a local path is
	// refused by git itself: the file transport is off.
	dst := filepath.Join(t.TempDir(), "ws")
	_, err := (Git{}).CloneAt(ctx, schema.WorkspaceOrigin{URL: "https://example.invalid/app.git"}, dst)
	if err == nil || !strings.Contains(err.Error(), "transport 'file' not allowed") {
		t.Errorf("https rewritten to a local path: got %v, want git's transport 'file' not allowed", err)
	}
	if _, err := (Git{}).CloneAt(ctx, schema.WorkspaceOrigin{URL: "git@example.invalid:app.git", Branch: "--upload-pack=x"}, dst); err == nil || !strings.Contains(err.Error(), "workspace.branch") {
		t.Errorf("a branch that is an option: got %v", err)
	}
}

func TestCloneTyped(t *testing.T) {
	bare := bareRepo(t)
	ctx := context.Background()
	for _, src := range []string{bare, "file://" + bare} {
		dst := filepath.Join(t.TempDir(), "ws")
		if err := (Git{}).CloneTyped(ctx, src, dst); err != nil {
			t.Errorf("%s: %v", src, err)
		}
		if _, err := os.Stat(filepath.Join(dst, ".git")); err != nil {
			t.Errorf("%s: no clone: %v", src, err)
		}
	}
	if err := (Git{}).CloneTyped(ctx, "ext::sh -c x", filepath.Join(t.TempDir(), "ws")); err == nil {
		t.Error("ext:: typed: cloned")
	}
	// A typed https URL never reaches a local repository either.
	err := (Git{}).CloneTyped(ctx, "https://example.invalid/app.git", filepath.Join(t.TempDir(), "ws"))
	if err == nil || !strings.Contains(err.Error(), "transport 'file' not allowed") {
		t.Errorf("typed https rewritten to a local path: got %v", err)
	}
}
