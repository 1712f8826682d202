package runner

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/agents-sandbox/asb/internal/testkit/vmtree"
)

// importedWorkspace is workspace/ of an outer folder, one commit (a.txt)
// imported into the host repository.
func importedWorkspace(t *testing.T) (h *HostRepo, ws string) {
	t.Helper()
	dir, _, _ := folderWithWorkspace(t)
	return importedHostRepo(t, dir), filepath.Join(dir, "workspace")
}

// importedHostRepo is the host repository of the outer folder dir, with
// workspace/ imported.
func importedHostRepo(t *testing.T, dir string) *HostRepo {
	t.Helper()
	ctx := context.Background()
	h, err := OpenHostRepo(ctx, Git{}, dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.Import(ctx, WorkspaceSource()); err != nil {
		t.Fatal(err)
	}
	return h
}

// fakeRepo makes dir a folder git takes for a repository (HEAD, objects,
// refs), with no HEAD when noHead.
func fakeRepo(t *testing.T, dir string, noHead bool) {
	t.Helper()
	for _, d := range []string{"objects", "refs"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if !noHead {
		if err := os.WriteFile(filepath.Join(dir, "HEAD"), []byte("ref: refs/heads/main\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func mustDo(t *testing.T, errs ...error) {
	t.Helper()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
}

// The VM plants, in its checkout, what git would wait on for ever when
// session rm's check gives it the checkout as work tree: a FIFO git opens
// (a .gitignore, .gitattributes, a HEAD where git looks for a repository),
// or a link or gitdir: file git follows to one outside. Each is refused,
// by its path, and git never opens the FIFO.
func TestDirtyRefusesWhatGitWaitsOn(t *testing.T) {
	for name, c := range map[string]struct {
		plant func(t *testing.T, ws, elsewhere string) (fifo string)
		want  string
	}{
		"a FIFO .gitattributes": {func(t *testing.T, ws, _ string) string { return filepath.Join(ws, ".gitattributes") }, ".gitattributes"},
		"a FIFO .gitignore in a folder": {func(t *testing.T, ws, _ string) string {
			mustDo(t, os.Mkdir(filepath.Join(ws, "sub"), 0o755))
			return filepath.Join(ws, "sub", ".gitignore")
		}, "sub/.gitignore"},
		"a FIFO HEAD of a folder's repository": {func(t *testing.T, ws, _ string) string {
			fakeRepo(t, filepath.Join(ws, "nest", ".git"), true)
			return filepath.Join(ws, "nest", ".git", "HEAD")
		}, "nest/.git/HEAD"},
		"a .git link to a repository with a FIFO HEAD": {func(t *testing.T, ws, elsewhere string) string {
			fakeRepo(t, elsewhere, true)
			mustDo(t, os.Mkdir(filepath.Join(ws, "nest"), 0o755), os.Symlink(elsewhere, filepath.Join(ws, "nest", ".git")))
			return filepath.Join(elsewhere, "HEAD")
		}, "nest/.git"},
		"a gitdir: file to a repository with a FIFO HEAD": {func(t *testing.T, ws, elsewhere string) string {
			fakeRepo(t, elsewhere, true)
			mustDo(t, os.Mkdir(filepath.Join(ws, "nest"), 0o755), os.WriteFile(filepath.Join(ws, "nest", ".git"), []byte("gitdir: "+elsewhere+"\n"), 0o644))
			return filepath.Join(elsewhere, "HEAD")
		}, "nest/.git"},
		"a commondir link to a FIFO": {func(t *testing.T, ws, elsewhere string) string {
			fakeRepo(t, filepath.Join(ws, "nest", ".git"), false)
			mustDo(t, os.Symlink(filepath.Join(elsewhere, "fifo"), filepath.Join(ws, "nest", ".git", "commondir")))
			return filepath.Join(elsewhere, "fifo")
		}, "nest/.git/commondir"},
		"a .gitignore link to a FIFO": {func(t *testing.T, ws, elsewhere string) string {
			mustDo(t, os.Symlink(filepath.Join(elsewhere, "fifo"), filepath.Join(ws, ".gitignore")))
			return filepath.Join(elsewhere, "fifo")
		}, ".gitignore"},
	} {
		t.Run(name, func(t *testing.T) {
			h, ws := importedWorkspace(t)
			opened := watchFIFO(t, c.plant(t, ws, t.TempDir()))
			dirty, err := h.Dirty(context.Background(), ws, WorkspaceHeadRef)
			if opened() {
				t.Error("git opened the FIFO")
			}
			var we *WorkTreeError
			if !errors.As(err, &we) || we.Path != c.want {
				t.Errorf("Dirty = %q, %v; want %s refused", dirty, err, c.want)
			}
		})
	}
}

// A socket or a device is no file git reads either.
func TestDirtyRefusesASocket(t *testing.T) {
	h, ws := importedWorkspace(t)
	mustDo(t, syscall.Mknod(filepath.Join(ws, "sock"), syscall.S_IFSOCK|0o644, 0))
	_, err := h.Dirty(context.Background(), ws, WorkspaceHeadRef)
	var we *WorkTreeError
	if !errors.As(err, &we) || we.Path != "sock" || we.Why == "" {
		t.Errorf("Dirty: %v; want sock refused", err)
	}
}

// The VM makes files that cost it nothing (a sparse file) and that git
// reads whole: a tracked file (refresh hashes each one) or a .gitignore.
// Past the limit the check is refused; a large file git does not read (an
// untracked one) is only listed.
func TestDirtyBoundsWhatGitReads(t *testing.T) {
	defer func(was int64) { maxWorkTreeBytes = was }(maxWorkTreeBytes)
	maxWorkTreeBytes = 1 << 20
	for name, c := range map[string]struct{ file, refused string }{
		"a tracked file": {"a.txt", "a.txt"},
		"a .gitignore":   {"sub/.gitignore", "sub/.gitignore"},
		"an untracked":   {"big.bin", ""},
	} {
		t.Run(name, func(t *testing.T) {
			h, ws := importedWorkspace(t)
			p := filepath.Join(ws, filepath.FromSlash(c.file))
			mustDo(t, os.MkdirAll(filepath.Dir(p), 0o755), os.WriteFile(p, nil, 0o644), os.Truncate(p, 2<<20))
			dirty, err := h.Dirty(context.Background(), ws, WorkspaceHeadRef)
			var we *WorkTreeError
			switch {
			case c.refused == "" && (err != nil || len(dirty) != 1 || dirty[0] != c.file):
				t.Errorf("Dirty = %q, %v; want %s listed", dirty, err, c.file)
			case c.refused != "" && (!errors.As(err, &we) || we.Path != c.refused):
				t.Errorf("Dirty = %q, %v; want %s refused", dirty, err, c.refused)
			}
		})
	}
}

// Folders nested past the limit are refused: walking a chain of n costs
// n²/2 lookups, asb's and git's.
func TestDirtyBoundsDepth(t *testing.T) {
	defer func(was int) { maxWorkTreeDepth = was }(maxWorkTreeDepth)
	maxWorkTreeDepth = 8
	h, ws := importedWorkspace(t)
	vmtree.Nest(t, ws, 8)
	if _, err := h.Dirty(context.Background(), ws, WorkspaceHeadRef); err != nil {
		t.Fatalf("8 deep: %v", err)
	}
	vmtree.Nest(t, filepath.Join(ws, "a", "a", "a", "a", "a", "a", "a", "a"), 1)
	_, err := h.Dirty(context.Background(), ws, WorkspaceHeadRef)
	var we *WorkTreeError
	if !errors.As(err, &we) || we.Path != "a/a/a/a/a/a/a/a/a" {
		t.Errorf("9 deep: %v; want a/a/a/a/a/a/a/a/a refused", err)
	}
}

// What a project's checkout holds is no problem: a link out of it, a
// repository in an ignored folder (its .git a folder), a link to a
// folder. The check says what it always said.
func TestDirtyKeepsTheNormalCase(t *testing.T) {
	h, ws := importedWorkspace(t)
	mustDo(t, os.WriteFile(filepath.Join(ws, ".gitignore"), []byte("vendor/\nout\n"), 0o644),
		os.Symlink("/etc/hostname", filepath.Join(ws, "out")))
	vm(t, ws, "add", ".gitignore")
	vm(t, ws, "commit", "-qm", "ignore")
	ctx := context.Background()
	if _, err := h.Import(ctx, WorkspaceSource()); err != nil {
		t.Fatal(err)
	}
	fakeRepo(t, filepath.Join(ws, "vendor", "dep", ".git"), false)
	mustDo(t, os.Symlink("vendor", filepath.Join(ws, "deps")))
	dirty, err := h.Dirty(ctx, ws, WorkspaceHeadRef)
	if err != nil || len(dirty) != 1 || dirty[0] != "deps" {
		t.Errorf("Dirty = %q, %v; want only the new link deps", dirty, err)
	}
}
