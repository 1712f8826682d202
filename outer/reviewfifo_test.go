package outer

import (
	"io"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/agents-sandbox/asb/internal/testkit/vmtree"
	"github.com/agents-sandbox/asb/schema"
)

// After an agent run the VM, still running, swaps a FIFO in for a folder
// of the table (.vscode/, here a link it points at a folder, then at a
// FIFO) between the review's Stat and its open of the folder: the open
// waits for a writer that never comes, and asb hangs at the end of the
// agent run.
func TestReviewFIFORace(t *testing.T) {
	dir := t.TempDir()
	ws := filepath.Join(dir, WorkspaceDir)
	// .vscode is a link the VM points, atomically, at a folder or a FIFO.
	for _, d := range []string{"conf/real", "conf"} {
		if err := os.MkdirAll(filepath.Join(ws, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	fifo := filepath.Join(ws, "conf", "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	point := func(to string) {
		tmp := filepath.Join(ws, ".vscode.tmp")
		_ = os.Remove(tmp)
		_ = os.Symlink(to, tmp)
		_ = os.Rename(tmp, filepath.Join(ws, ".vscode"))
	}
	point("conf/real")
	table := schema.HostRunTable(schema.BaseHostRun)
	defer vmtree.Churn(func(int) {
		point("conf/real")
		point("conf/fifo")
	})()
	done := make(chan struct{})
	go func() {
		defer close(done)
		for range 3000 {
			_, _ = ReviewHostRun(dir, "", table, io.Discard)
		}
	}()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		go func() { // a writer lets the blocked open return
			for {
				if f, err := os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
					f.Close()
				}
				select {
				case <-done:
					return
				default:
				}
			}
		}()
		<-done
		t.Fatal("the review blocked on a FIFO the VM put in a folder's place")
	}
}
