package runner

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agents-sandbox/asb/internal/testkit/vmtree"
)

// vm runs git in repo as the VM's git would: with the repository's own
// config, none of the host's.
func vm(t *testing.T, repo string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-C", repo}, args...)...)
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null",
		"GIT_AUTHOR_NAME=a", "GIT_AUTHOR_EMAIL=a@vm", "GIT_COMMITTER_NAME=a", "GIT_COMMITTER_EMAIL=a@vm")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

// folderWithWorkspace is an outer folder whose workspace/ is a repository
// with one commit on main, and a secret repository of the host beside it.
func folderWithWorkspace(t *testing.T) (dir, secret, secretID string) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	base := t.TempDir()
	dir, secret = filepath.Join(base, "outer"), filepath.Join(base, "secret")
	for _, repo := range []string{filepath.Join(dir, "workspace"), secret} {
		if err := os.MkdirAll(repo, 0o755); err != nil {
			t.Fatal(err)
		}
		vm(t, repo, "init", "-q", "-b", "main")
		if err := os.WriteFile(filepath.Join(repo, "a.txt"), []byte("hello "+filepath.Base(repo)+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		vm(t, repo, "add", "a.txt")
		vm(t, repo, "commit", "-qm", "first of "+filepath.Base(repo))
	}
	vm(t, secret, "repack", "-adq")
	return dir, secret, vm(t, secret, "rev-parse", "HEAD")
}

func TestImportWorkspace(t *testing.T) {
	dir, _, _ := folderWithWorkspace(t)
	ctx := context.Background()
	h, err := OpenHostRepo(ctx, Git{}, dir)
	if err != nil {
		t.Fatal(err)
	}
	imp, err := h.Import(ctx, WorkspaceSource())
	if err != nil {
		t.Fatal(err)
	}
	want := vm(t, filepath.Join(dir, "workspace"), "rev-parse", "HEAD")
	if imp.Head.Ref != "refs/heads/main" || len(imp.Updated) != 2 {
		t.Errorf("import: head %+v, updated %+v", imp.Head, imp.Updated)
	}
	if c, ok := h.Commit(ctx, WorkspaceBranches+"main"); !ok || c != want {
		t.Errorf("workspace/main in the host repository: %q %v, want %s", c, ok, want)
	}
	// A second import of nothing new changes nothing.
	if imp, err = h.Import(ctx, WorkspaceSource()); err != nil || len(imp.Updated) != 0 {
		t.Errorf("second import: %+v, %v", imp, err)
	}
	// The VM deletes a branch and makes another: the namespace follows.
	ws := filepath.Join(dir, "workspace")
	vm(t, ws, "checkout", "-qb", "feature")
	vm(t, ws, "branch", "-qD", "main")
	if imp, err = h.Import(ctx, WorkspaceSource()); err != nil {
		t.Fatal(err)
	}
	if len(imp.Updated) != 2 {
		t.Errorf("a branch removed, another made: updated %+v", imp.Updated)
	}
	if _, ok := h.Commit(ctx, WorkspaceBranches+"main"); ok {
		t.Error("workspace/main outlived its branch")
	}
	if _, ok := h.Commit(ctx, WorkspaceBranches+"feature"); !ok {
		t.Error("no workspace/feature")
	}
}

// Each shape that points a reader at another repository is refused, by
// name, before anything is read.
func TestOpenGitDirRefuses(t *testing.T) {
	for _, c := range []struct {
		name  string
		plant func(git, secret string) error
		want  string
	}{
		{"gitdir file", func(git, secret string) error {
			if err := os.Rename(git, git+"-was"); err != nil {
				return err
			}
			return os.WriteFile(git, []byte("gitdir: "+secret+"/.git\n"), 0o644)
		}, ".git is a file"},
		{".git link", func(git, secret string) error {
			if err := os.Rename(git, git+"-was"); err != nil {
				return err
			}
			return os.Symlink(secret+"/.git", git)
		}, ".git is a link"},
		{"commondir", func(git, secret string) error {
			return os.WriteFile(git+"/commondir", []byte(secret+"/.git\n"), 0o644)
		}, "it has commondir"},
		{"alternates", func(git, secret string) error {
			return os.WriteFile(git+"/objects/info/alternates", []byte(secret+"/.git/objects\n"), 0o644)
		}, "objects/info/alternates"},
		{"http-alternates", func(git, secret string) error {
			return os.WriteFile(git+"/objects/info/http-alternates", []byte("http://x/\n"), 0o644)
		}, "objects/info/http-alternates"},
		{"linked ref", func(git, secret string) error {
			return os.Symlink(secret+"/.git/refs/heads/main", git+"/refs/heads/steal")
		}, "refs/heads/steal is a link"},
		{"linked pack", func(git, secret string) error {
			packs, _ := filepath.Glob(secret + "/.git/objects/pack/*.pack")
			return os.Symlink(packs[0], git+"/objects/pack/"+filepath.Base(packs[0]))
		}, "is a link"},
		{"linked objects", func(git, secret string) error {
			if err := os.RemoveAll(git + "/objects"); err != nil {
				return err
			}
			return os.Symlink(secret+"/.git/objects", git+"/objects")
		}, "objects is a link or a file"},
		{"linked HEAD", func(git, secret string) error {
			if err := os.Remove(git + "/HEAD"); err != nil {
				return err
			}
			return os.Symlink(secret+"/.git/HEAD", git+"/HEAD")
		}, "HEAD is a link"},
		{"linked packed-refs", func(git, secret string) error {
			return os.Symlink(secret+"/.git/packed-refs", git+"/packed-refs")
		}, "packed-refs is a link"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir, secret, _ := folderWithWorkspace(t)
			if err := c.plant(filepath.Join(dir, "workspace", ".git"), secret); err != nil {
				t.Fatal(err)
			}
			_, err := OpenGitDir(filepath.Join(dir, "workspace"), "workspace/.git")
			var se *ShapeError
			if !errors.As(err, &se) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v, want a ShapeError naming %q", err, c.want)
			}
		})
	}
}

// The race a shape check alone leaves open: the VM runs alongside asb and
// puts alternates, linked packs and a branch at a commit of another
// repository of the host into .git while asb imports it (after the check,
// before the fetch). What is fetched is read through an os.Root of .git,
// into a staged copy that takes no alternates or link: the secret commit
// never reaches the host repository, however the two interleave.
func TestImportRaceWithTheVM(t *testing.T) {
	dir, secret, secretID := folderWithWorkspace(t)
	git := filepath.Join(dir, "workspace", ".git")
	ctx := context.Background()
	h, err := OpenHostRepo(ctx, Git{}, dir)
	if err != nil {
		t.Fatal(err)
	}
	packs, _ := filepath.Glob(filepath.Join(secret, ".git", "objects", "pack", "pack-*"))
	alt := filepath.Join(git, "objects", "info", "alternates")
	steal := filepath.Join(git, "refs", "heads", "steal")
	stop := vmtree.Churn(func(i int) {
		time.Sleep(time.Duration(i%7) * time.Millisecond)
		_ = os.WriteFile(alt, []byte(filepath.Join(secret, ".git", "objects")+"\n"), 0o644)
		for _, p := range packs {
			_ = os.Symlink(p, filepath.Join(git, "objects", "pack", filepath.Base(p)))
		}
		_ = os.WriteFile(steal, []byte(secretID+"\n"), 0o644)
		time.Sleep(time.Duration(i%3) * time.Millisecond)
		_ = os.Remove(alt)
		_ = os.Remove(steal)
		for _, p := range packs {
			_ = os.Remove(filepath.Join(git, "objects", "pack", filepath.Base(p)))
		}
	})
	passed := 0
	for range 40 {
		if _, err := h.Import(ctx, WorkspaceSource()); err == nil {
			passed++
		}
	}
	stop()
	t.Logf("%d of 40 imports went through while the VM raced them", passed)
	if _, ok := h.Commit(ctx, secretID); ok {
		t.Fatal("the secret repository's commit reached the host repository")
	}
	if _, err := h.Import(ctx, WorkspaceSource()); err != nil {
		t.Fatal(err)
	}
	if _, ok := h.Commit(ctx, WorkspaceBranches+"main"); !ok {
		t.Error("workspace/main never arrived")
	}
}

// The staged copy takes what a fetch needs and nothing else: no config,
// hooks, info/ or alternates.
func TestStageCopiesData(t *testing.T) {
	dir, _, _ := folderWithWorkspace(t)
	git := filepath.Join(dir, "workspace", ".git")
	if err := os.WriteFile(filepath.Join(git, "config"), []byte("[core]\n\tfsmonitor = /bin/evil\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(git, "hooks"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(git, "hooks", "post-checkout"), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	src, err := OpenGitDir(filepath.Join(dir, "workspace"), "workspace/.git")
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	dstDir := t.TempDir()
	dst, err := os.OpenRoot(dstDir)
	if err != nil {
		t.Fatal(err)
	}
	defer dst.Close()
	st, err := stage(src, dst)
	if err != nil {
		t.Fatal(err)
	}
	if !st.has("HEAD") || !st.has("refs/heads/main") {
		t.Errorf("staged: %+v", st)
	}
	cfg, _ := os.ReadFile(filepath.Join(dstDir, "config"))
	if string(cfg) != stageConfig {
		t.Errorf("the staged config is not asb's: %q", cfg)
	}
	for _, p := range []string{"hooks", "info", "description", "index"} {
		if _, err := os.Lstat(filepath.Join(dstDir, p)); err == nil {
			t.Errorf("%s was copied", p)
		}
	}
}

func TestReadAsData(t *testing.T) {
	for _, c := range []struct {
		in   string
		want Head
		ok   bool
	}{
		{"ref: refs/heads/main\n", Head{Ref: "refs/heads/main"}, true},
		{strings.Repeat("a", 40) + "\n", Head{Commit: strings.Repeat("a", 40)}, true},
		{"ref: refs/heads/../../x\n", Head{}, false},
		{"ref: refs/tags/v1\n", Head{}, false},
		{"ref: refs/heads/a\x1b[2K\n", Head{}, false},
		{"garbage", Head{}, false},
	} {
		got, err := parseHead([]byte(c.in))
		if (err == nil) != c.ok || got != c.want {
			t.Errorf("parseHead(%q) = %+v, %v", c.in, got, err)
		}
	}
	for name, ok := range map[string]bool{"refs/heads/main": true, "refs/heads/a/b": true, "refs/heads/.x": false, "refs/heads/a..b": false,
		"refs/heads/x.lock": false, "refs/heads/": false, "heads/main": false, "refs/heads/a b": false} {
		if ValidRefName(name) != ok {
			t.Errorf("ValidRefName(%q) = %v", name, !ok)
		}
	}
	cfg := []byte("[core]\n\tbare = false\n[remote \"upstream\"]\n\turl = https://x/y\n[Remote \"origin\"]\n\tfetch = +refs/heads/*:refs/remotes/origin/*\n\tURL = \"git@example.com:me/app.git\" ; comment\n[include]\n\tpath = /evil\n")
	if got := configValue(cfg, `remote "origin"`, "url"); got != "git@example.com:me/app.git" {
		t.Errorf("configValue: %q", got)
	}
}

// Dirty reads the checkout's work tree from the host repository: a change
// and a new file are seen; the checkout's own filter, named by its config
// and attributes, and its fsmonitor never run.
func TestDirtyRunsNothingOfTheCheckout(t *testing.T) {
	dir, _, _ := folderWithWorkspace(t)
	ws := filepath.Join(dir, "workspace")
	canary := filepath.Join(t.TempDir(), "ran")
	prog := filepath.Join(t.TempDir(), "canary.sh")
	if err := os.WriteFile(prog, []byte("#!/bin/sh\necho \"$0 $*\" >>"+canary+"\nexit 1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ws, ".gitattributes"), []byte("* filter=x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	vm(t, ws, "add", ".gitattributes")
	vm(t, ws, "commit", "-qm", "attributes")
	f, _ := os.OpenFile(filepath.Join(ws, ".git", "config"), os.O_APPEND|os.O_WRONLY, 0)
	_, _ = f.WriteString("[filter \"x\"]\n\tclean = " + prog + "\n\tprocess = " + prog + "\n[core]\n\tfsmonitor = " + prog + "\n")
	f.Close()
	ctx := context.Background()
	h := importedHostRepo(t, dir)
	clean, err := h.Dirty(ctx, ws, WorkspaceHeadRef)
	if err != nil || len(clean) != 0 {
		t.Errorf("a clean checkout: %q, %v", clean, err)
	}
	if err := os.WriteFile(filepath.Join(ws, "a.txt"), []byte("changed\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ws, "new.txt"), []byte("new\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	dirty, err := h.Dirty(ctx, ws, WorkspaceHeadRef)
	if err != nil || !slices.Contains(dirty, "a.txt") || !slices.Contains(dirty, "new.txt") {
		t.Errorf("a changed checkout: %q, %v", dirty, err)
	}
	if ran, err := os.ReadFile(canary); err == nil {
		t.Errorf("the checkout's programs ran: %s", ran)
	}
}
