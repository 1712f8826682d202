package outer

import (
	"errors"
	"fmt"
	"io/fs"
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
// only tracked files), and not in the set. Where asb cannot know what git
// tracks (no repository holds the folder, an index it cannot read, …),
// every file below the top counts instead (trust_untracked.go).

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
	if !nested || sc.topExcluded(top, isWorkspace) {
		return false
	}
	return top != schema.SchemaDir || !slices.Contains(schema.JSONSchemaNames, name)
}

// topExcluded reports whether the top folder top holds no file of the
// tracked rule: a folder read whole (its own rule reads it), .git, or
// workspace/.
func (sc trustScope) topExcluded(top string, isWorkspace func(top string) bool) bool {
	return sc.tree(top) || strings.EqualFold(top, ".git") || isWorkspace(top)
}

// workspaceIn says whether a top folder of dir is its workspace/: by name,
// or, spelled in another case, by being the same folder (sameIn). On
// Linux's file system, Workspace/ is a folder of the clone like scripts/,
// and its tracked files count (hostile_fix_workspace_case.txtar).
func workspaceIn(dir string) func(top string) bool { return sameIn(dir, WorkspaceDir) }

// readTrackedSub adds the tracked files below the top that no rule above
// read (st.tracked: the index dropIgnored read), each as readTracked
// reads it, those under .asb/ included; a submodule's files are read from
// its own index (readSubmodule).
func (s *TrustSet) readTrackedSub(root *folderfs.Root, sc trustScope, st *stamps) error {
	if s.untracked != "" || st.tracked == nil {
		return s.readUntrackedSub(root, sc, st)
	}
	isWorkspace := workspaceIn(root.Dir())
	for _, rel := range trackedBelow(st.tracked) {
		if _, read := s.Files[rel]; read || !sc.subInSet(rel, isWorkspace) {
			continue
		}
		if err := s.readTracked(root, rel, st); err != nil {
			return err
		}
	}
	for _, g := range st.tracked.Gitlinks {
		top, _, nested := strings.Cut(g, "/")
		if nested && !sc.subInSet(g, isWorkspace) || !nested && sc.topExcluded(top, isWorkspace) {
			continue
		}
		if err := s.readSubmodule(root, g, st, 0); err != nil {
			return err
		}
	}
	return nil
}

// maxSubmoduleDepth bounds the submodules of submodules asb reads.
const maxSubmoduleDepth = 8

// readSubmodule adds the files the submodule checked out at rel tracks,
// as its own index lists them: a clone with --recurse-submodules (or a
// submodule update) brings them, and the Taskfile may run them (`sh
// ./tools/lint.sh`), while the outer index holds one entry for the whole
// folder (hostile_fix_submodule_script.txtar). One not checked out adds
// nothing; its folder's stamp changes when it is.
func (s *TrustSet) readSubmodule(root *folderfs.Root, rel string, st *stamps, depth int) error {
	st.add(rel)
	fi, err := root.Lstat(rel)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return folderfs.Explain(rel, err)
	case !fi.IsDir():
		return nil // a file in its place is read as any tracked file would be
	case depth >= maxSubmoduleDepth:
		return fmt.Errorf("%s: submodules more than %d deep: asb approves no folder it cannot read whole", rel, maxSubmoduleDepth)
	}
	st.add(rel + "/.git")
	if _, err := root.Lstat(rel + "/.git"); err != nil {
		return nil //nolint:nilerr // not checked out: nothing of it is here
	}
	repo, ok, err := folderfs.FindRepo(filepath.Join(root.Dir(), filepath.FromSlash(rel)))
	if err != nil || !ok || repo.Prefix != "" {
		return fmt.Errorf("%s is a submodule whose repository asb cannot read (%v): asb approves no folder it cannot read whole", rel, err)
	}
	ix, stamp, err := folderfs.ReadIndex(repo.Index)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("%s is a submodule whose index asb cannot read: %w", rel, err)
	}
	st.putAbs(repo.Index, stamp)
	for _, p := range ix.Paths {
		sub := rel + "/" + p
		if _, read := s.Files[sub]; read {
			continue
		}
		if slices.Contains(ix.Gitlinks, p) {
			if err := s.readSubmodule(root, sub, st, depth+1); err != nil {
				return err
			}
			continue
		}
		if err := s.readTracked(root, sub, st); err != nil {
			return err
		}
	}
	return nil
}

// readTracked adds rel, a file git tracks, to the set: missing here, it is
// stamped as missing (nothing runs it; its return changes the verdict); a
// folder in its place (a sparse index's, a submodule's) is left out; a
// link is refused as readFile refuses one.
func (s *TrustSet) readTracked(root *folderfs.Root, rel string, st *stamps) error {
	fi, err := root.Lstat(rel)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		st.add(rel)
		return nil
	case err != nil:
		return folderfs.Explain(rel, err)
	case fi.IsDir():
		return nil
	}
	return s.readFile(root, rel, fs.FileInfoToDirEntry(fi), st)
}

// renderSub says which files of a render of dir below the top are in its
// trust set, as readTrackedSub reads the folder: the tracked ones by
// subInSet, or, where asb cannot know what git tracks, every one the walk
// would not leave out.
func (sc trustScope) renderSub(dir string) func(rel string, content []byte) bool {
	isWorkspace := workspaceIn(dir)
	t, _, why := trackedOf(dir)
	if why != "" || t == nil {
		return func(rel string, content []byte) bool {
			top, rest, _ := strings.Cut(rel, "/")
			own := (top == folderfs.StateDir || top == ".task") && ownRecord(top == folderfs.StateDir, rest, content)
			return sc.subInSet(rel, isWorkspace) && !own
		}
	}
	sub := map[string]bool{}
	for _, rel := range trackedBelow(t) {
		if sc.subInSet(rel, isWorkspace) {
			sub[rel] = true
		}
	}
	return func(rel string, _ []byte) bool { return sub[rel] }
}

// trackedBelow lists the tracked paths below the top the tracked rule reads:
// those under .asb/ too, which folderfs keeps apart (State) for its
// readers of runtime state. A commit that tracks .asb/lint.sh brings it
// to every clone like scripts/lint.sh, and the Taskfile may run it.
func trackedBelow(t *folderfs.Tracked) []string {
	return append(t.Sub[:len(t.Sub):len(t.Sub)], t.State...)
}
