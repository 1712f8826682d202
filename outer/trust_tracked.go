package outer

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/agents-sandbox/asb/internal/folderfs"
	"github.com/agents-sandbox/asb/schema"
)

// Files below the top. A clone brings what git tracks, in any folder, and
// a Taskfile's approved line `sh ./scripts/lint.sh` covers the line, not
// the script: so every file git tracks below the top is in the set too
// (besides the folders read whole), but those of workspace/ (the VM's, and
// no clone's: the outer repository ignores it). A file git tracks in asb's
// and go-task's own folders (.asb/, .task/) counts too: no asb reads it
// from a clone, but the Taskfile may run it (`sh ./.task/lint.sh`), and
// asb writes no tracked file there. A file
// nobody tracks below the top is this machine's (a clone or a pull writes
// only tracked files), and not in the set. Without a repository asb can
// read, nothing below the top counts but the folders read whole: no clone
// brought the folder.

// subInSet reports whether the tracked path rel (below the top) is in the
// set when no other rule puts it there: not under workspace/ (isWorkspace:
// the folder itself, whatever the case a commit spells it in), nor under
// .git, nor under a folder read whole, nor one of the editors' schemas asb
// writes in .schemas/ (data nothing runs; any other file there counts).
// Those two are left out as README.md is at the top: a folder approved
// before its first commit stays approved when the commit adds them to the
// index.
func (sc trustScope) subInSet(rel string, isWorkspace func(top string) bool) bool {
	top, name, nested := strings.Cut(rel, "/")
	if !nested || sc.tree(top) || strings.EqualFold(top, ".git") || isWorkspace(top) {
		return false
	}
	return top != schema.SchemaDir || !slices.Contains(schema.JSONSchemaNames, name)
}

// workspaceIn says whether a top folder of dir is its workspace/: by name,
// or, spelled in another case, by being the same folder (on macOS's file
// system a committed Workspace/ is workspace/). On Linux's, Workspace/ is
// a folder of the clone like scripts/, and its tracked files count
// (hostile_fix_workspace_case.txtar).
func workspaceIn(dir string) func(top string) bool {
	return func(top string) bool {
		if top == WorkspaceDir {
			return true
		}
		if !strings.EqualFold(top, WorkspaceDir) {
			return false
		}
		a, err := os.Lstat(filepath.Join(dir, top))
		if err != nil {
			return false
		}
		b, err := os.Lstat(filepath.Join(dir, WorkspaceDir))
		return err == nil && os.SameFile(a, b)
	}
}

// readTrackedSub adds the tracked files below the top that no rule above
// read (st.tracked: the index dropIgnored read). A tracked file missing
// here is stamped as missing (nothing runs it; its return changes the
// verdict), a folder in its place (a submodule's) is left out, and a link
// is refused as readFile refuses one.
func (s *TrustSet) readTrackedSub(root *folderfs.Root, sc trustScope, st *stamps) error {
	if st.tracked == nil {
		return nil
	}
	isWorkspace := workspaceIn(root.Dir())
	for _, rel := range st.tracked.Sub {
		if _, read := s.Files[rel]; read || !sc.subInSet(rel, isWorkspace) {
			continue
		}
		fi, err := root.Lstat(rel)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			st.add(rel)
			continue
		case err != nil:
			return folderfs.Explain(rel, err)
		case fi.IsDir():
			continue
		}
		if err := s.readFile(root, rel, fs.FileInfoToDirEntry(fi), st); err != nil {
			return err
		}
	}
	return nil
}

// trackedSub is the set of dir's tracked paths below the top that are in
// its trust set by subInSet: what a render of the folder holds of them.
func (sc trustScope) trackedSub(dir string) map[string]bool {
	t, err := folderfs.ReadTracked(dir)
	if err != nil || t == nil {
		return nil
	}
	out := map[string]bool{}
	isWorkspace := workspaceIn(dir)
	for _, rel := range t.Sub {
		if sc.subInSet(rel, isWorkspace) {
			out[rel] = true
		}
	}
	return out
}
