package outer

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agents-sandbox/asb/internal/testkit/vmtree"
	"github.com/agents-sandbox/asb/schema"
)

// The VM nests folders 2000 deep in each folder of the table (.vscode/,
// .idea/, .github/workflows/…): within the walk's 2000 entries, but each
// open of an os.Root walks its path again from the top, so each folder
// cost 2000²/2 opens, seconds at the end of every agent run. A walk stops
// at a depth no tool's settings reach, and says so (unread).
func TestReviewDeepFolders(t *testing.T) {
	dir := t.TempDir()
	table := schema.HostRunTable(schema.BaseHostRun)
	for _, e := range table {
		if !strings.HasSuffix(e.Path, "/") {
			continue
		}
		d := filepath.Join(dir, WorkspaceDir, e.Path)
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		vmtree.Nest(t, d, 2000)
	}
	start := time.Now()
	changes, err := ReviewHostRun(dir, "", table, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took > 2*time.Second {
		t.Fatalf("the review took %v over folders nested 2000 deep", took)
	}
	found := false
	for _, c := range changes {
		found = found || c.Path == ".vscode/" && c.Change == kindUnread
	}
	if !found {
		t.Errorf(".vscode/ is not listed unread: %v", changes)
	}
}
