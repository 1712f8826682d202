package outer

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"

	"github.com/agents-sandbox/asb/generator"
	"github.com/agents-sandbox/asb/internal/folderfs"
	"github.com/agents-sandbox/asb/schema"
)

// The cached verdict. asb task agent asks for the verdict at every run;
// reading and hashing the trust set each time is most of a warm run's own
// cost. So a trusted verdict is kept, beside the folder's approvals (in
// the user's state folder: a clone can never plant one), with the stamp
// (folderfs.Stamp: device, inode, size, modification and change times) of
// everything the full check read or consulted: each file and folder of
// the trust set, the .gitignore and git index it looked at, the approval
// it found, the policy files (present or not) and asb itself (its
// templates are the render). The next check stats them all and, when
// every stamp holds, is the verdict; any change runs the full check.

// trustReads counts the trust check's reads of file content (tests).
var trustReads atomic.Int64

// racyNs: a file changed this close before the check read it might change
// again within the same tick of the file system's clock, unseen by its
// stamp (git's "racily clean" entries): no verdict is cached then.
const racyNs = 50e6

// stamps are what a check read, by absolute path.
type stamps struct {
	root    *folderfs.Root
	Files   map[string]folderfs.Stamp
	tracked *folderfs.Tracked
}

func newStamps(root *folderfs.Root) *stamps {
	return &stamps{root: root, Files: map[string]folderfs.Stamp{}}
}

// add stamps rel of the folder (a file, a folder, or a name that is not
// there).
func (st *stamps) add(rel string) {
	if st == nil {
		return
	}
	fi, err := st.root.Lstat(rel)
	s := folderfs.Stamp{Missing: true}
	if err == nil {
		s = folderfs.StampOf(fi)
	}
	st.put(rel, s)
}

func (st *stamps) put(rel string, s folderfs.Stamp) {
	if st != nil {
		st.Files[filepath.Join(st.root.Dir(), filepath.FromSlash(rel))] = s
	}
}

func (st *stamps) putAbs(p string, s folderfs.Stamp) {
	if st != nil {
		st.Files[p] = s
	}
}

// verdictCache is a cached trusted verdict.
type verdictCache struct {
	Key     string                    `json:"key"`
	Why     string                    `json:"why"`
	Stamps  map[string]folderfs.Stamp `json:"stamps"`
	Tracked *folderfs.Tracked         `json:"tracked,omitempty"`
}

// cacheKey is what else a verdict depends on: the folder, where approvals
// and policies are looked for, $HOME (the mount rules').
func (j Judge) cacheKey(dir string, store *Approvals) string {
	sum := sha256.Sum256([]byte(resolvedDir(dir) + "\x00" + store.Dir + "\x00" + j.MachinePolicy + "\x00" +
		schema.UserPolicyPath(j.getenv) + "\x00" + j.getenv("HOME")))
	return hex.EncodeToString(sum[:])
}

func (a *Approvals) cachePath(dir string) string {
	return filepath.Join(a.folder(dir), "verdict.json")
}

// saveCache keeps v, a trusted verdict of a check that began at start,
// unless a file it read had just changed.
func (j Judge) saveCache(v *Verdict, start int64) {
	st := v.stamps
	if st == nil || v.Store == nil || !v.Trusted {
		return
	}
	for _, p := range j.policyPaths() {
		v.Store.stamp(st, p)
	}
	if self, err := os.Executable(); err == nil {
		v.Store.stamp(st, self)
	}
	// The approval as it is now (a render's was just recorded): revoking it
	// changes its stamp.
	v.Store.stamp(st, v.Store.setPath(v.Dir, v.Set.Hash()))
	for p, s := range st.Files {
		if strings.HasPrefix(p, st.root.Dir()+string(filepath.Separator)) && s.Since(start-racyNs) {
			return
		}
	}
	c := verdictCache{Key: j.cacheKey(v.Dir, v.Store), Why: v.Why, Stamps: st.Files, Tracked: st.tracked}
	if c.Tracked == nil {
		if t, err := folderfs.ReadTracked(v.Dir); err == nil {
			c.Tracked = t
			if t.Index != "" {
				st.putAbs(t.Index, t.Stamp)
			}
		}
	}
	raw, err := json.Marshal(c)
	if err != nil {
		return
	}
	dir := filepath.Dir(v.Store.cachePath(v.Dir))
	if os.MkdirAll(dir, 0o700) == nil {
		_ = generator.WriteFileAtomic(dir, "verdict.json", raw, 0o600)
	}
}

func (j Judge) policyPaths() []string {
	return schema.PolicyPaths(j.MachinePolicy, schema.UserPolicyPath(j.getenv))
}

// CheckTrustCached is the verdict for the hot path (asb task agent): the
// cached one when every stamp it was made from holds, which costs a read
// of the cache and a stat of each file; else the full check (Check).
func CheckTrustCached(dir string, j Judge) (*Verdict, error) {
	if v := j.cached(dir); v != nil {
		return v, nil
	}
	return j.Check(dir)
}

func (j Judge) cached(dir string) *Verdict {
	c, store := j.heldCache(dir)
	if c == nil {
		return nil
	}
	folderfs.RememberTracked(dir, c.Tracked)
	return &Verdict{Dir: dir, Trusted: true, Why: c.Why, Store: store, Cached: true, judge: j}
}

// heldCache is dir's cached verdict when it is of this judge's key and
// every stamp it was made from holds; nil otherwise.
func (j Judge) heldCache(dir string) (*verdictCache, *Approvals) {
	store, err := ApprovalStore(j.getenv)
	if err != nil {
		return nil, nil
	}
	raw, err := os.ReadFile(store.cachePath(dir))
	if err != nil {
		return nil, nil
	}
	var c verdictCache
	if json.Unmarshal(raw, &c) != nil || c.Key != j.cacheKey(dir, store) || len(c.Stamps) == 0 {
		return nil, nil
	}
	if !stampsHold(c.Stamps) {
		return nil, nil
	}
	return &c, store
}

// stampsHold reports whether every file (by absolute path) still has its
// stamp: the one test of a cached verdict and of a warm pass.
func stampsHold(stamps map[string]folderfs.Stamp) bool {
	for p, want := range stamps {
		if got, err := folderfs.StampPath(p); err != nil || got != want {
			return false
		}
	}
	return true
}

// TrustReads is how many files the trust checks of this process read (a
// cached verdict reads none): for tests that the hot path pays stats only.
func TrustReads() int64 { return trustReads.Load() }
