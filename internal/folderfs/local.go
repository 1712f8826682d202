package folderfs

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"sync"
)

// Runtime state is this machine's alone. .asb/ holds what asb records
// for this clone on this machine (the home volume's name, the served
// port, the warm records, the secrets' stamps, sessions). It is
// git-ignored, but `git add -f` commits it, and then a clone carries
// someone else's state: another folder's home volume, a port where
// another service listens. So every reader of a file under .asb/ asks
// Local first, and a file the outer folder's git tracks is never read:
// asb says so once (OnIgnored) and goes on as if it were missing.

// StateDir is the outer folder's folder of runtime state.
const StateDir = ".asb"

// TrackedError is a file of .asb/ that the outer folder's git tracks: it
// came with the clone, so asb does not read it. It is fs.ErrNotExist to a
// reader, which then does what it does for a missing file.
type TrackedError struct{ Rel string }

func (e *TrackedError) Error() string {
	return fmt.Sprintf("%s is tracked by the outer folder's git: asb reads no runtime state that came with a clone", e.Rel)
}

// Is makes a TrackedError a missing file to errors.Is.
func (e *TrackedError) Is(target error) bool { return target == fs.ErrNotExist }

// Tracked is what the outer folder's git index says: the index's stamp,
// and the tracked paths that matter to asb.
type Tracked struct {
	Index string `json:"index,omitempty"` // "" when the folder is in no repository
	Stamp Stamp  `json:"stamp"`           // the index's
	// State lists the tracked paths under .asb/ (and .asb itself, as a
	// submodule's entry), relative to the folder.
	State []string `json:"state,omitempty"`
	// Top lists the tracked names at the folder's top (a folder's name
	// when something under it is tracked). Not cached: only the trust
	// check reads it, when it runs in full.
	Top []string `json:"-"`
	// Sub lists the tracked paths below the top, those under .asb/ (State)
	// left out, relative to the folder; not cached, as Top.
	Sub []string `json:"-"`
	// Gitlinks lists the submodules' paths (at the top or below it),
	// relative to the folder; not cached, as Top.
	Gitlinks []string `json:"-"`
	// Unknown: the index could not be read; every file of .asb/ counts
	// as tracked.
	Unknown bool `json:"unknown,omitempty"`
}

// Has reports whether the index tracks rel, a path under .asb/: rel
// itself, a folder above it (a sparse index's folder entry, a submodule's
// or a link's entry: what is under it came with the clone too), or, when
// rel is a folder, anything under it. Case is ignored: on a file system
// that ignores it (macOS's, Windows'), a commit of .ASB/serve.json is what
// asb opens as .asb/serve.json.
func (t *Tracked) Has(rel string) bool {
	if t.Unknown {
		return true
	}
	rel = strings.ToLower(rel)
	for _, p := range t.State {
		p = strings.ToLower(strings.TrimSuffix(p, "/"))
		if p == rel || strings.HasPrefix(rel, p+"/") || strings.HasPrefix(p, rel+"/") {
			return true
		}
	}
	return false
}

// TopTracked reports whether the index tracks the top-level name (or
// anything under it). With no repository nothing is untracked: every
// file counts.
func (t *Tracked) TopTracked(name string) bool {
	return t.Index == "" || t.Unknown || slices.Contains(t.Top, name)
}

var tracked = struct {
	sync.Mutex
	byDir map[string]*Tracked
	said  map[string]bool
}{byDir: map[string]*Tracked{}, said: map[string]bool{}}

// OnIgnored, when set (the command layer sets it to print a line on
// stderr), is told of each tracked file of .asb/ a reader met, once per
// process.
var OnIgnored func(rel string)

// Local returns nil when rel (a path under .asb/ of the outer folder dir)
// is this machine's own, and a *TrackedError (fs.ErrNotExist to
// errors.Is) when the outer folder's git tracks it. Its cost is a stat of
// the index once it was read (or remembered: RememberTracked).
func Local(dir, rel string) error {
	rel = filepath.ToSlash(filepath.Clean(rel))
	t, err := TrackedStateOf(dir)
	if err != nil {
		t = &Tracked{Unknown: true}
	}
	if !t.Has(rel) {
		return nil
	}
	key := dirKey(dir) + "\x00" + rel
	tracked.Lock()
	say := !tracked.said[key]
	tracked.said[key] = true
	tracked.Unlock()
	if say && OnIgnored != nil {
		OnIgnored(rel)
	}
	return &TrackedError{Rel: rel}
}

// ReadTracked reads what the index of the repository holding dir tracks:
// from memory when the index's stamp is the one last read or remembered.
func ReadTracked(dir string) (*Tracked, error) {
	repo, ok, err := FindRepo(dir)
	if err != nil {
		return nil, err
	}
	if !ok {
		return &Tracked{}, nil
	}
	st, err := StampPath(repo.Index)
	if err != nil {
		return nil, err
	}
	key := dirKey(dir)
	tracked.Lock()
	t := tracked.byDir[key]
	tracked.Unlock()
	if t != nil && t.Index == repo.Index && t.Stamp == st && (t.Top != nil || st.Missing) {
		return t, nil
	}
	if t, err = readIndex(repo, st); err != nil {
		return nil, err
	}
	tracked.Lock()
	tracked.byDir[key] = t
	tracked.Unlock()
	return t, nil
}

// TrackedStateOf is ReadTracked for the .asb/ readers alone: a remembered
// answer for the index's current stamp serves, without the top names.
func TrackedStateOf(dir string) (*Tracked, error) {
	repo, ok, err := FindRepo(dir)
	if err != nil || !ok {
		return &Tracked{}, err
	}
	st, err := StampPath(repo.Index)
	if err != nil {
		return nil, err
	}
	tracked.Lock()
	t := tracked.byDir[dirKey(dir)]
	tracked.Unlock()
	if t != nil && t.Index == repo.Index && t.Stamp == st {
		return t, nil
	}
	return ReadTracked(dir)
}

// RememberTracked takes t (read earlier, kept by the caller outside the
// folder) as the answer while the index keeps t's stamp.
func RememberTracked(dir string, t *Tracked) {
	if t == nil {
		return
	}
	tracked.Lock()
	if cur := tracked.byDir[dirKey(dir)]; cur == nil || cur.Stamp != t.Stamp {
		tracked.byDir[dirKey(dir)] = t
	}
	tracked.Unlock()
}

func readIndex(repo Repo, st Stamp) (*Tracked, error) {
	t := &Tracked{Index: repo.Index, Stamp: st, Top: []string{}}
	if st.Missing {
		return t, nil // a repository with nothing added yet
	}
	ix, got, err := ReadIndex(repo.Index)
	if errors.Is(err, fs.ErrNotExist) {
		t.Stamp = Stamp{Missing: true}
		return t, nil
	}
	if err != nil {
		t.Unknown = true
		return t, nil //nolint:nilerr // an index asb cannot read: every .asb/ file counts as tracked
	}
	t.Stamp = got
	for _, p := range ix.Gitlinks {
		if rel, ok := strings.CutPrefix(p, repo.Prefix); ok && rel != "" {
			t.Gitlinks = append(t.Gitlinks, rel)
		}
	}
	for _, p := range ix.Paths {
		rel, ok := strings.CutPrefix(p, repo.Prefix)
		if !ok {
			continue
		}
		top, _, nested := strings.Cut(rel, "/")
		switch {
		case inState(rel):
			t.State = append(t.State, rel)
		case nested:
			t.Sub = append(t.Sub, rel)
		}
		if top != "" && (len(t.Top) == 0 || t.Top[len(t.Top)-1] != top) {
			t.Top = append(t.Top, top)
		}
	}
	slices.Sort(t.Top)
	t.Top = slices.Compact(t.Top)
	return t, nil
}

// inState reports whether rel (an index path relative to the folder) is
// .asb or under it, in any case.
func inState(rel string) bool {
	n := len(StateDir)
	return len(rel) >= n && strings.EqualFold(rel[:n], StateDir) && (len(rel) == n || rel[n] == '/')
}

func dirKey(dir string) string {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return dir
	}
	if r, err := filepath.EvalSymlinks(abs); err == nil {
		return r
	}
	return abs
}
