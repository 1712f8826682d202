package runner

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"testing"
)

// The folder's lock lives in the shared temporary folder under a name any
// local user can compute from the folder's path (FolderLockPath). A link
// planted there must not be followed: asb truncates the lock file and
// writes its holder into it, so through a link it would empty whatever
// file the link names (the victim's ~/.bashrc, say, on a host without
// fs.protected_symlinks, or where TMPDIR is shared).
func TestFolderLockFollowsNoPlantedLink(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", filepath.Join(tmp, "shared-tmp"))
	if err := os.Mkdir(os.Getenv("TMPDIR"), 0o1777); err != nil {
		t.Fatal(err)
	}
	victim := filepath.Join(tmp, "home", ".bashrc")
	if err := os.MkdirAll(filepath.Dir(victim), 0o700); err != nil {
		t.Fatal(err)
	}
	const content = "export PATH=$HOME/bin:$PATH\n"
	if err := os.WriteFile(victim, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(tmp, "home", "proj")
	if err := ensureLockDir(); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(victim, FolderLockPath(dir)); err != nil {
		t.Fatal(err)
	}
	l, err := LockFolder(context.Background(), dir, "asb test", io.Discard)
	if err == nil {
		l.Release()
	}
	got, rerr := os.ReadFile(victim)
	if rerr != nil || string(got) != content {
		t.Fatalf("the lock went through the planted link: %s now holds %q (lock err: %v)", victim, got, err)
	}
}

// TestLockDirPlanted: the folder of the locks in the shared temporary
// folder, planted by someone else as a link (to a folder they can write)
// or with its mode opened, is refused or made private again.
func TestLockDirPlanted(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", filepath.Join(tmp, "shared-tmp"))
	if err := os.Mkdir(os.Getenv("TMPDIR"), 0o1777); err != nil {
		t.Fatal(err)
	}
	theirs := filepath.Join(tmp, "theirs")
	if err := os.Mkdir(theirs, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(theirs, lockDir()); err != nil {
		t.Fatal(err)
	}
	if l, err := LockFolder(context.Background(), filepath.Join(tmp, "proj"), "asb test", io.Discard); err == nil {
		l.Release()
		t.Fatalf("a lock taken through a planted link %s -> %s", lockDir(), theirs)
	}
	if err := os.Remove(lockDir()); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(lockDir(), 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(lockDir(), 0o777); err != nil {
		t.Fatal(err)
	}
	l, err := LockFolder(context.Background(), filepath.Join(tmp, "proj"), "asb test", io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	l.Release()
	if fi, err := os.Stat(lockDir()); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("the folder of the locks: %v, %v; want 0700", fi.Mode(), err)
	}
}
