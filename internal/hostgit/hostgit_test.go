package hostgit

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The environment of asb's git: none of the caller's GIT_* variables (a
// GIT_DIR would make git use another repository, GIT_CONFIG_PARAMETERS
// add config, GIT_EXEC_PATH run other programs), no system or global
// config, no prompt, no pager; a UserConfig run keeps the user's config
// and ways to reach a remote, and nothing else of GIT_*.
func TestEnviron(t *testing.T) {
	parent := []string{"HOME=/home/u", "PATH=/bin", "PAGER=evil", "GIT_DIR=/elsewhere/.git", "GIT_WORK_TREE=/x",
		"GIT_CONFIG_PARAMETERS='core.fsmonitor'='evil'", "GIT_CONFIG_COUNT=1", "GIT_CONFIG_KEY_0=core.pager", "GIT_CONFIG_VALUE_0=evil",
		"GIT_EXEC_PATH=/evil", "GIT_SSH_COMMAND=ssh -i key", "GIT_INDEX_FILE=/evil", "GIT_CONFIG_GLOBAL=/home/u/.gitconfig"}
	asb := Environ(parent, AsbOnly)
	for _, want := range []string{"HOME=/home/u", "PATH=/bin", "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=" + os.DevNull, "GIT_TERMINAL_PROMPT=0", "GIT_PAGER=cat", "PAGER=cat"} {
		if !slices.Contains(asb, want) {
			t.Errorf("AsbOnly lacks %s: %q", want, asb)
		}
	}
	for _, kv := range asb {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "GIT_") && !slices.Contains([]string{"GIT_CONFIG_NOSYSTEM", "GIT_CONFIG_GLOBAL", "GIT_TERMINAL_PROMPT", "GIT_PAGER", "GIT_OPTIONAL_LOCKS",
			"GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL"}, k) {
			t.Errorf("AsbOnly keeps the caller's %s", kv)
		}
		if kv == "PAGER=evil" || kv == "GIT_CONFIG_GLOBAL=/home/u/.gitconfig" {
			t.Errorf("AsbOnly keeps %s", kv)
		}
	}
	user := Environ(parent, UserConfig)
	for _, want := range []string{"GIT_CONFIG_GLOBAL=/home/u/.gitconfig", "GIT_SSH_COMMAND=ssh -i key", "GIT_CONFIG_COUNT=1"} {
		if !slices.Contains(user, want) {
			t.Errorf("UserConfig lacks the user's %s", want)
		}
	}
	for _, bad := range []string{"GIT_DIR=/elsewhere/.git", "GIT_WORK_TREE=/x", "GIT_EXEC_PATH=/evil", "GIT_INDEX_FILE=/evil", "PAGER=evil"} {
		if slices.Contains(user, bad) {
			t.Errorf("UserConfig keeps %s", bad)
		}
	}
}

func TestMayBeInWorkTree(t *testing.T) {
	root := t.TempDir()
	plain := filepath.Join(root, "plain", "sub")
	repo := filepath.Join(root, "repo")
	for _, d := range []string{plain, filepath.Join(repo, ".git"), filepath.Join(repo, "a", "b")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// A worktree's or a submodule's .git is a file.
	wt := filepath.Join(root, "wt")
	if err := os.MkdirAll(wt, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(wt, ".git"), []byte("gitdir: /elsewhere\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// A temporary folder inside a repository would make every case true.
	if MayBeInWorkTree(root) {
		t.Skipf("%s is inside a repository", root)
	}
	for dir, want := range map[string]bool{plain: false, repo: true, filepath.Join(repo, "a", "b"): true, wt: true} {
		if got := MayBeInWorkTree(dir); got != want {
			t.Errorf("MayBeInWorkTree(%s) = %v, want %v", dir, got, want)
		}
	}
}

// git sees the working folder with its links resolved: a link to a
// folder inside a repository may be in a work tree, wherever the link is.
func TestMayBeInWorkTreeThroughALink(t *testing.T) {
	root := t.TempDir()
	if MayBeInWorkTree(root) {
		t.Skipf("%s is inside a repository", root)
	}
	sub := filepath.Join(root, "repo", "sub")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(root, "repo", ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(root, "elsewhere", "link")
	if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(sub, link); err != nil {
		t.Fatal(err)
	}
	if !MayBeInWorkTree(link) {
		t.Errorf("MayBeInWorkTree(%s), a link to %s: false, want true", link, sub)
	}
	if p, _, ok := DotGitAbove(link); ok {
		t.Errorf("DotGitAbove takes its folder as it is: found %s above the link", p)
	}
}
