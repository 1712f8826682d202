package outer

import (
	"crypto/sha256"
	"encoding/hex"
	"maps"
	"os"
	"path/filepath"

	"github.com/agents-sandbox/asb/generator"
	"github.com/agents-sandbox/asb/internal/folderfs"
)

// The warm pass. Before its one msb exec, a warm `asb task agent` made
// four decisions, each from its own record: the trust verdict (its
// cache), the Taskfile's facts (after hashing the Taskfile), this clone's
// identity (state.yaml) and the secrets' rotation rule (secrets.yaml,
// secrets.env, the stamp). Each was cheap; together, decoding four records
// was most of what a warm run cost beyond asb's own start.
//
// The pass is their one record, kept beside the verdict's cache in the
// user's state folder (a clone can never plant one), one per kind of run:
// what the decisions concluded (the clone's vars, the Taskfile's sum), the
// stamp (folderfs.Stamp) of every file they read, the trust verdict's own
// stamps included, and a keyed fingerprint of the environment's values the
// rotation rule compares. A run of the same kind stats those files and,
// when every stamp holds and the fingerprint is the same, takes the
// conclusions; anything else makes the four decisions again, as before,
// and keeps a new pass. It is kept only from a trusted verdict that is
// cached and holds, when the folder's git tracks nothing of .asb/ and
// nothing it stamps had just changed (racyNs), so a pass never says more
// than the decisions it stands for would say now.

// WarmPass is what a run's decisions concluded, and what they read.
type WarmPass struct {
	Vars   map[string]string // this clone's names (runner.Identity's vars)
	Sum    string            // the Taskfile's sha256, as its facts hold it
	Refs   []string          // the variables the rotation rule reads
	EnvMAC string            // their values' keyed fingerprint (runner.RotationEnvMAC)
	// Files are the files the decisions read beside the trust set
	// (absolute paths): their stamps are kept.
	Files  []string
	stamps map[string]folderfs.Stamp
	index  string // the git index whose stamp is kept ("" none)
}

// warmPassPath is the pass of run (what the run is: its tasks, flags and
// working folder, the caller's words) of dir, and its key: it names the
// verdict's own key too (the folder, where approvals and policies are
// looked for, $HOME).
func (j Judge) warmPassPath(dir, run string) (path, key string, err error) {
	store, err := ApprovalStore(j.getenv)
	if err != nil {
		return "", "", err
	}
	sum := sha256.Sum256([]byte(j.cacheKey(dir, store) + "\x00" + run))
	key = hex.EncodeToString(sum[:])
	return filepath.Join(store.folder(dir), "warm-"+key[:24]+".pass"), key, nil
}

// LoadWarmPass returns run's pass when every stamp it keeps holds; nil
// when there is none or anything it was made from changed.
func (j Judge) LoadWarmPass(dir, run string) *WarmPass {
	path, key, err := j.warmPassPath(dir, run)
	if err != nil {
		return nil
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	p, ok := decodeWarmPass(raw, key)
	if !ok || !stampsHold(p.stamps) {
		return nil
	}
	if p.index != "" {
		folderfs.RememberTracked(dir, &folderfs.Tracked{Index: p.index, Stamp: p.stamps[p.index]})
	}
	return p
}

// SaveWarmPass keeps p for run: with the stamps of p.Files and of what the
// trust verdict was made from, when that verdict is cached and holds now,
// the folder's git tracks nothing under .asb/, and nothing stamped
// changed at or after start (UnixNano) less racyNs. Else it keeps none: the
// next run decides again.
func (j Judge) SaveWarmPass(dir, run string, p *WarmPass, start int64) {
	path, key, err := j.warmPassPath(dir, run)
	if err != nil {
		return
	}
	t, err := folderfs.TrackedStateOf(dir)
	if err != nil || t.Unknown || len(t.State) > 0 {
		return
	}
	c, _ := j.heldCache(dir)
	if c == nil {
		return
	}
	stamps := maps.Clone(c.Stamps)
	files := p.Files
	if t.Index != "" {
		files = append(files[:len(files):len(files)], t.Index)
	}
	for _, f := range files {
		s, err := folderfs.StampPath(f)
		if err != nil {
			return
		}
		stamps[f] = s
	}
	for _, s := range stamps {
		if s.Since(start - racyNs) {
			return
		}
	}
	kept := *p
	kept.stamps, kept.index = stamps, t.Index
	folder := filepath.Dir(path)
	if os.MkdirAll(folder, 0o700) == nil {
		_ = generator.WriteFileAtomic(folder, filepath.Base(path), kept.encode(key), 0o600)
	}
}
