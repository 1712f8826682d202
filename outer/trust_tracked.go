package outer

import (
	"errors"
	"io/fs"
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

// subExcluded are the top folders whose tracked files are not in the set.
var subExcluded = []string{WorkspaceDir, ".git"}

// subInSet reports whether the tracked path rel (below the top) is in the
// set when no other rule puts it there: not under an excluded folder (in
// any case: on macOS a committed Workspace/ is workspace/), nor under a
// folder read whole, nor one of the editors' schemas asb writes in
// .schemas/ (data nothing runs; any other file there counts). Those two
// are left out as README.md is at the top: a folder approved before its
// first commit stays approved when the commit adds them to the index.
func (sc trustScope) subInSet(rel string) bool {
	top, name, nested := strings.Cut(rel, "/")
	if !nested || sc.tree(top) || slices.ContainsFunc(subExcluded, func(d string) bool { return strings.EqualFold(d, top) }) {
		return false
	}
	return top != schema.SchemaDir || !slices.Contains(schema.JSONSchemaNames, name)
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
	for _, rel := range st.tracked.Sub {
		if _, read := s.Files[rel]; read || !sc.subInSet(rel) {
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
	for _, rel := range t.Sub {
		if sc.subInSet(rel) {
			out[rel] = true
		}
	}
	return out
}
