package runner

import (
	"context"
	"os"
	"path/filepath"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/agents-sandbox/asb/internal/testkit/vmtree"
)

// watchFIFO makes a FIFO at p and reports whether anything opened it to
// read. Whatever opens it is let through (a writer comes and goes, the
// reader reads nothing), so that code that opens it is caught rather than
// left waiting for ever.
func watchFIFO(t *testing.T, p string) (opened func() bool) {
	t.Helper()
	if err := syscall.Mkfifo(p, 0o644); err != nil {
		t.Fatal(err)
	}
	var n atomic.Int32
	t.Cleanup(vmtree.Churn(func(int) {
		// A writer's open that does not wait succeeds only while a reader
		// has the FIFO open (or waits in its open).
		if f, err := os.OpenFile(p, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			n.Add(1)
			f.Close()
		}
		time.Sleep(time.Millisecond)
	}))
	return func() bool { return n.Load() > 0 }
}

// checkoutWithSubmodule is workspace/ of an outer folder with a committed
// submodule at mod, imported into the host repository.
func checkoutWithSubmodule(t *testing.T) (h *HostRepo, ws string) {
	t.Helper()
	dir, secret, _ := folderWithWorkspace(t)
	ws = filepath.Join(dir, "workspace")
	vm(t, ws, "-c", "protocol.file.allow=always", "submodule", "add", "-q", secret, "mod")
	vm(t, ws, "commit", "-qm", "a submodule")
	return importedHostRepo(t, dir), ws
}

// The VM points a submodule's .git (a gitdir: file, or a link) at a
// folder outside the checkout (another VM's checkout, workspace/) whose
// HEAD is a FIFO. git's refresh and diff-files resolve a submodule's HEAD
// even with --ignore-submodules (an option update-index takes only before
// --refresh), and wait on the FIFO for ever: session rm hangs. The check
// must not look into a submodule at all.
func TestDirtyDoesNotEnterSubmodules(t *testing.T) {
	for _, how := range []string{"gitdir file", "link"} {
		t.Run(how, func(t *testing.T) {
			h, ws := checkoutWithSubmodule(t)
			elsewhere := t.TempDir()
			for _, d := range []string{"objects", "refs"} {
				if err := os.Mkdir(filepath.Join(elsewhere, d), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			opened := watchFIFO(t, filepath.Join(elsewhere, "HEAD"))
			dotgit := filepath.Join(ws, "mod", ".git")
			if err := os.RemoveAll(dotgit); err != nil {
				t.Fatal(err)
			}
			var err error
			if how == "link" {
				err = os.Symlink(elsewhere, dotgit)
			} else {
				err = os.WriteFile(dotgit, []byte("gitdir: "+elsewhere+"\n"), 0o644)
			}
			if err != nil {
				t.Fatal(err)
			}
			dirty, err := h.Dirty(context.Background(), ws, WorkspaceHeadRef)
			if opened() {
				t.Error("git opened the FIFO a submodule's .git leads to")
			}
			if err != nil || len(dirty) != 0 {
				t.Errorf("a checkout whose submodule's .git changed: %q, %v (want clean: submodules are not entered)", dirty, err)
			}
		})
	}
}

// A submodule checked out as git does (its .git a gitdir: file into the
// checkout's .git/modules) is no problem: the checkout is clean, and a
// change beside it is seen.
func TestDirtyWithASubmoduleCheckedOut(t *testing.T) {
	h, ws := checkoutWithSubmodule(t)
	ctx := context.Background()
	if dirty, err := h.Dirty(ctx, ws, WorkspaceHeadRef); err != nil || len(dirty) != 0 {
		t.Fatalf("a clean checkout with a submodule: %q, %v", dirty, err)
	}
	if err := os.WriteFile(filepath.Join(ws, "a.txt"), []byte("changed\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	dirty, err := h.Dirty(ctx, ws, WorkspaceHeadRef)
	if err != nil || len(dirty) != 1 || dirty[0] != "a.txt" {
		t.Errorf("a change beside a submodule: %q, %v", dirty, err)
	}
}
