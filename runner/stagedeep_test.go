package runner

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/agents-sandbox/asb/internal/testkit/vmtree"
)

// The VM nests folders thousands deep under .git/refs and .git/objects
// (no file, no link: nothing refused). Each walk of asb's (the shape
// check, the staging) opens every folder through an os.Root, which walks
// its path again from the top: a chain of n folders costs n²/2 opens, and
// n = 100000 keeps asb fetch, session new, ls, diff and rm busy for hours.
// No ref can be that deep (a ref's name is at most 1024 bytes), and git
// reads no folder below objects/XX and objects/pack: the walks must stop
// there.
func TestImportDeepFolders(t *testing.T) {
	dir, _, _ := folderWithWorkspace(t)
	git := filepath.Join(dir, "workspace", ".git")
	vmtree.Nest(t, filepath.Join(git, "refs", "heads"), 5000)
	vmtree.Nest(t, filepath.Join(git, "objects", "pack"), 5000)
	ctx := context.Background()
	h, err := OpenHostRepo(ctx, Git{}, dir)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if _, err := h.Import(ctx, WorkspaceSource()); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Fatalf("the import took %v over folders the VM nested 5000 deep", took)
	}
	if _, ok := h.Commit(ctx, WorkspaceBranches+"main"); !ok {
		t.Error("workspace/main did not arrive")
	}
}
