package runner

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/agents-sandbox/asb/internal/testkit/vmtree"
)

// The VM swaps a FIFO in for an object file between the directory read
// that says "a plain file" and the open: an open of a FIFO blocks until a
// writer comes, which the VM never sends, so asb (fetch, session new, ls,
// diff, rm) hangs, holding the host repository's lock. The copy must not
// block on what the VM puts in a file's place.
func TestStageFIFORace(t *testing.T) {
	dir, _, _ := folderWithWorkspace(t)
	git := filepath.Join(dir, "workspace", ".git")
	pack := filepath.Join(git, "objects", "pack", "pack-1111111111111111111111111111111111111111.pack")
	// A plain file of a new size (so the copy staged is stale), then a
	// FIFO in its place.
	defer vmtree.Churn(func(i int) {
		tmp := pack + ".tmp"
		_ = os.WriteFile(tmp, make([]byte, 1+i%64), 0o644)
		_ = os.Rename(tmp, pack)
		_ = syscall.Mkfifo(tmp, 0o644)
		_ = os.Rename(tmp, pack)
	})()
	src, err := OpenGitDir(filepath.Join(dir, "workspace"), "workspace/.git")
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	if err := os.MkdirAll(filepath.Join(dir, "staged"), 0o755); err != nil {
		t.Fatal(err)
	}
	dst, err := os.OpenRoot(filepath.Join(dir, "staged"))
	if err != nil {
		t.Fatal(err)
	}
	defer dst.Close()
	done := make(chan struct{})
	go func() {
		defer close(done)
		for range 3000 {
			_ = stageObjects(src, dst)
		}
	}()
	select {
	case <-done:
	case <-time.After(15 * time.Second):
		// The open stays blocked (its FIFO is unlinked since: nothing can
		// ever open it to write); the test ends with it.
		t.Fatal("staging blocked on a FIFO the VM put in an object file's place")
	}
}
