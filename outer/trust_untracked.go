package outer

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"

	"github.com/agents-sandbox/asb/internal/folderfs"
	"github.com/agents-sandbox/asb/schema"
)

// Files below the top when asb cannot know what git tracks. The tracked
// rule (trust_tracked.go) leaves out a file below the top that git does
// not track, because a clone or a pull writes only tracked files: only
// this machine's user put it there. That holds only where the index is
// the record of what git wrote in the folder. It is not when no
// repository holds the folder (a tarball or zip of the team's repository,
// extracted again over the old one later), when its .git or index cannot
// be read (over the size asb reads, a format it does not know, damaged),
// when a .git file (a worktree's or a submodule's pointer) names a git
// folder with no index (git makes neither without one: a copy of a
// checkout carried the pointer, and no git wrote the files), or when the
// repository above the folder tracks none of its files (it did not bring
// them). Then every file below the top counts, but those the tracked rule
// leaves out whatever git says (subInSet: workspace/, .git, the folders
// read whole, the editors' schemas) and the records asb and go-task write
// in .asb/ and .task/ (ownRecord). The walk is bounded; past its bounds
// asb refuses the folder, never a set that left out what it did not read.

// Bounds of the walk (variables: tests lower them). The depth is the
// review's (maxReviewDepth): each open walks its path again from the top.
var (
	maxUntrackedDepth   = 32
	maxUntrackedEntries = 2000
)

// trackedOf is what git tracks in the folder dir, and why asb cannot rely
// on it ("" when it can). t is nil when no index was read.
func trackedOf(dir string) (t *folderfs.Tracked, repo folderfs.Repo, why string) {
	repo, ok, err := folderfs.FindRepo(dir)
	switch {
	case err != nil:
		return nil, repo, fmt.Sprintf("asb cannot read its .git (%v)", err)
	case !ok:
		return nil, repo, "no git repository holds it"
	}
	t, err = folderfs.ReadTracked(dir)
	switch {
	case err != nil:
		return nil, repo, fmt.Sprintf("asb cannot read its git index %s (%v)", repo.Index, err)
	case t.Unknown:
		return t, repo, fmt.Sprintf("asb cannot read its git index %s (larger than asb reads, a format it does not know, or damaged)", repo.Index)
	case repo.Pointer && t.Stamp.Missing:
		return t, repo, fmt.Sprintf("its .git file names a git folder with no index (%s): a copy of a worktree or submodule, not a checkout", filepath.Dir(repo.Index))
	case repo.Prefix != "" && len(t.Top) == 0:
		return t, repo, "the git repository above it tracks none of its files"
	}
	return t, repo, ""
}

// goTaskRecord is what go-task writes under .task/: a task's checksum
// (checksum/TASK: the task's name with every other character than a
// letter or digit made "-", holding xxh3's 128 bits in hex) or an empty
// timestamp/TASK, whose times it sets.
var goTaskRecord = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^(checksum|timestamp)/[A-Za-z0-9-]+$`)
})

var goTaskChecksum = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[0-9a-f]{1,32}\n$`) })

// ownRecord reports whether rest, a path under .asb/ (state) or .task/,
// is a record asb or go-task writes there, and so not in the set: under
// .asb/, one of asb's own entries (folderfs.IsStateEntry) or anything
// under it; under .task/, a record of go-task's with content go-task
// writes (a checksum, an empty timestamp file). By any other name, or
// with any other content (a script the Taskfile runs), it counts.
func ownRecord(state bool, rest string, content []byte) bool {
	if state {
		first, _, _ := strings.Cut(rest, "/")
		return folderfs.IsStateEntry(first)
	}
	if !goTaskRecord().MatchString(rest) {
		return false
	}
	if strings.HasPrefix(rest, "timestamp/") {
		return len(content) == 0
	}
	return goTaskChecksum().Match(content)
}

// untrackedWalk reads the files below the top of a folder whose tracked
// set asb cannot know.
type untrackedWalk struct {
	s     *TrustSet
	root  *folderfs.Root
	sc    trustScope
	st    *stamps
	left  int // entries the walk may still look at
	isWS  func(string) bool
	vm    map[string]bool // folders the VM writes (vmWritten): not walked
	state string          // the top folder that is .asb/ ("" none)
	task  string          // the top folder that is .task/ ("" none)
}

// readUntrackedSub adds every file below the top that no rule above read
// and the walk does not leave out (ownRecord, subInSet), stamping every
// folder it walked (a file added changes its folder's stamp).
func (s *TrustSet) readUntrackedSub(root *folderfs.Root, sc trustScope, st *stamps) error {
	w := &untrackedWalk{s: s, root: root, sc: sc, st: st, left: maxUntrackedEntries, isWS: workspaceIn(root.Dir()),
		vm: vmWritten(s.Files[SandboxFile])}
	isState, isTask := sameIn(root.Dir(), folderfs.StateDir), sameIn(root.Dir(), ".task")
	entries, err := fs.ReadDir(root.FS(), ".")
	if err != nil {
		return err
	}
	for _, e := range entries {
		name := e.Name()
		if !e.IsDir() || w.sc.topExcluded(name, w.isWS) || w.vm[name] {
			continue // a link at the top is readLink's; a file, the top's rules'
		}
		switch {
		case isState(name):
			w.state = name
		case isTask(name):
			w.task = name
		}
		if err := w.folder(name); err != nil {
			return err
		}
	}
	return nil
}

// folder reads what is under the folder rel.
func (w *untrackedWalk) folder(rel string) error {
	if strings.Count(rel, "/") >= maxUntrackedDepth {
		return w.refuse(fmt.Sprintf("has folders more than %d deep (%s)", maxUntrackedDepth, rel))
	}
	w.st.add(rel)
	f, err := w.root.OpenNoBlock(rel)
	if err != nil {
		return folderfs.Explain(rel, err)
	}
	// One more than may be looked at tells that there are more.
	entries, err := f.ReadDir(w.left + 1)
	f.Close()
	if err != nil && !errors.Is(err, io.EOF) {
		return fmt.Errorf("%s: %w", rel, err)
	}
	sort.Slice(entries, func(i, j int) bool { return entries[i].Name() < entries[j].Name() })
	for _, d := range entries {
		if w.left == 0 {
			return w.refuse(fmt.Sprintf("has more than %d files and folders below its top", maxUntrackedEntries))
		}
		w.left--
		if err := w.entry(rel+"/"+d.Name(), d); err != nil {
			return err
		}
	}
	return nil
}

// entry reads the entry p (d: as its folder lists it).
func (w *untrackedWalk) entry(p string, d fs.DirEntry) error {
	top, rest, _ := strings.Cut(p, "/")
	if top == w.state && ownRecord(true, rest, nil) {
		return nil // asb's own: not read (the sessions' checkouts are the VM's)
	}
	switch {
	case d.Type()&fs.ModeSymlink != 0:
		target, _ := w.root.Readlink(p)
		return fmt.Errorf("%s is a link (to %s), and %s: every file below the top then counts, and asb runs no folder whose files it cannot read as they are; replace the link with the file it leads to", p, target, w.why())
	case d.IsDir() && strings.EqualFold(d.Name(), ".git"):
		return fmt.Errorf("%s is a git repository inside the outer folder, and %s: every file below the top then counts, and what a repository holds (its hooks, which git runs) is not a file asb can approve; remove it, or make the outer folder a git repository asb reads (git init, git add -A, git commit)", p, w.why())
	case d.IsDir() && w.vm[p]:
		return nil // the VM's, as workspace/ is
	case d.IsDir():
		return w.folder(p)
	case !d.Type().IsRegular():
		return fmt.Errorf("%s is not a plain file (a FIFO, a socket or a device), and %s: every file below the top then counts, and asb runs no folder whose files it cannot read as they are; remove it", p, w.why())
	}
	if _, read := w.s.Files[p]; read || !w.sc.subInSet(p, w.isWS) {
		return nil
	}
	if err := w.s.readFile(w.root, p, d, w.st); err != nil {
		return err
	}
	if top == w.task && ownRecord(false, rest, w.s.Files[p]) {
		delete(w.s.Files, p) // go-task's; its stamp is kept, so a script written there is read again
	}
	return nil
}

func (w *untrackedWalk) why() string {
	return "asb cannot know what git tracks in the outer folder (" + w.s.untracked + ")"
}

// refuse is the walk stopped at a bound: what, where, how to fix.
func (w *untrackedWalk) refuse(what string) error {
	return fmt.Errorf("refused: the outer folder %s %s, and %s: every file below the top then counts, and asb approves no folder it cannot read whole; make it a git repository asb reads (git init, git add -A, git commit: then what git tracks counts), or move what is not the sandbox's out of it",
		w.root.Dir(), what, w.why())
}

// sameIn says whether a top folder of dir is want: by name, or, spelled in
// another case, by being the same folder (on macOS's file system a
// committed Workspace/ is workspace/).
func sameIn(dir, want string) func(top string) bool {
	return func(top string) bool {
		if top == want {
			return true
		}
		if !strings.EqualFold(top, want) {
			return false
		}
		a, err := os.Lstat(filepath.Join(dir, top))
		if err != nil {
			return false
		}
		b, err := os.Lstat(filepath.Join(dir, want))
		return err == nil && os.SameFile(a, b)
	}
}

// vmWritten are the folders below the top that sandbox (the set's
// sandbox.yaml) binds into the VM read-write, as slash paths from the top:
// the VM writes them, as it writes workspace/, so what it adds there is
// its data, not the folder's, and the walk does not read them (else each
// file the agent writes there would make the folder unapproved; the
// real-boot scenario's rw mounts did). A bind msb would expand (a "$"),
// one read-only, or one out of the folder names nothing here. In a folder
// git tracks, a tracked file there still counts (readTrackedSub); so does
// sandbox.yaml itself, which names them: the mounts are approved with it.
func vmWritten(sandbox []byte) map[string]bool {
	sb, _, _ := schema.LoadSandbox(SandboxFile, sandbox)
	if sb == nil {
		return nil
	}
	out := map[string]bool{}
	for _, m := range sb.Mounts {
		if m.Kind != "bind" || m.Readonly || m.Bind == "" || strings.Contains(m.Bind, "$") || filepath.IsAbs(m.Bind) {
			continue
		}
		rel := path.Clean(filepath.ToSlash(m.Bind))
		if rel != "." && rel != ".." && !strings.HasPrefix(rel, "../") {
			out[rel] = true
		}
	}
	return out
}
