package runner

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/agents-sandbox/asb/generator"
	"github.com/agents-sandbox/asb/internal/folderfs"
	"github.com/agents-sandbox/asb/schema"
)

// The warm path. A warm `asb task agent` (everything up to date) used to
// start go-task only for it to run two status checks and the final
// `msb exec`: 80 ms of engine start for 4 ms of work. So, as make-style
// tools keep a log of what a no-op run checked, the engine records, after a
// run, what go-task evaluated: for every task the named ones depend on, its
// status commands, preconditions and source trees; for the named tasks,
// their compiled commands. The next run with the same key re-verifies what
// can change behind asb's back (it runs the status checks and
// preconditions, and fingerprints the source trees, so an edited
// sandbox.yaml or a VM removed by hand is noticed), and, when all of it
// holds, runs the commands itself, without the engine. Anything else (a
// failed check, a changed Taskfile, another asb build, a flag) goes to the
// engine as before. A record is written only for Taskfiles whose templates
// depend on nothing but the Taskfile, asb's vars and the run's own key
// (see engine/warm.go), so a record never holds the environment's values,
// and never a secret from secrets.env: dotenv files are read again at each
// run.

// WarmDir holds this clone's warm records (under .asb/, git-ignored).
const WarmDir = ".asb/warm"

// WarmVersion is the record format; a record of another version is ignored.
// 2: checks a running VM passes name it (WarmStep.VM); runs with arguments
// after -- are recorded (WarmKey.Args, warmargs.go). 3: a check that only
// tests for a folder names it (WarmStep.IsDir). 4: lines, not JSON
// (warmcodec.go). 5: a plain command's words (WarmStep.Argv).
const WarmVersion = 5

// WarmKey is what a run is: the same key, the same compiled commands.
type WarmKey struct {
	Dir    string
	Cwd    string // USER_WORKING_DIR
	Tasks  []string
	Vars   map[string]string // what asb set over the Taskfile's
	Silent bool
	// Args: the run has arguments after -- (CLI_ARGS); the record holds
	// marks where they go (warmargs.go), never the arguments.
	Args bool
}

// WarmRecord is one recorded run.
type WarmRecord struct {
	Version  int
	Key      WarmKey
	Taskfile string      // the sha256 of the Taskfile it was recorded from
	Binaries []FileStamp // asb and asb-task as they were
	Sources  []TreeStamp // the dependencies' source trees
	Checks   []WarmStep  // status and preconditions, in go-task's order
	Cmds     []WarmStep  // the named tasks' commands
	// Session: the last named task is interactive (the run lock is not held
	// while its commands run).
	Session bool
}

// WarmStep is one command as go-task would run it.
type WarmStep struct {
	Task string
	// Kind is "status", "precondition", "uptodate" (a line go-task prints
	// for a dependency that is up to date; Log is the line) or "cmd".
	Kind        string
	Cmd         string
	Log         string // what go-task echoes ("" when silent)
	Dir         string
	Env         []string // the task's literal env: entries
	Dotenv      []string // files whose values are read at each run
	Set         []string
	Shopt       []string
	IgnoreError bool
	// VM names the VM of a status check that a running VM passes
	// (VMCheck): the warm run takes msb's lifecycle lock of that VM as its
	// answer, and runs the check only when the lock does not say.
	VM string
	// IsDir is the path a check only tests to be a folder (DirCheck), as
	// written: the warm run answers it with a stat, and parses no shell.
	IsDir string
	// Argv are the words of a command that is one plain program call
	// (plainArgv): the last one runs as asb's child without a shell.
	Argv []string
}

// FileStamp identifies a file's content without reading it.
type FileStamp struct {
	Path  string
	Size  int64
	ModNs int64
}

// TreeStamp fingerprints a file or folder tree (names, sizes, modes and
// modification times of everything under Root).
type TreeStamp struct {
	Root string
	Sum  string
}

// warmRel is the record file of key, relative to the outer folder.
func warmRel(key WarmKey) string { return warmRelOf(keyBytes(key)) }

// warmRelOf is warmRel of a key as keyBytes wrote it.
func warmRelOf(kb []byte) string {
	sum := sha256.Sum256(kb)
	return WarmDir + "/" + hex.EncodeToString(sum[:12]) + warmExt
}

// warmExt ends a record's file name (a record made before version 4 ends
// in .json: it is never read, and pruned as records are).
const warmExt = ".rec"

// LoadWarm returns the record of key, nil when there is none (or it is of
// another version or key).
func LoadWarm(key WarmKey) *WarmRecord {
	kb := keyBytes(key) // written once: it names the record and is its key
	rel := warmRelOf(kb)
	if folderfs.Local(key.Dir, rel) != nil {
		return nil // one a clone carried (folderfs.Local): never replayed
	}
	raw, err := schema.ReadFile(filepath.Join(key.Dir, filepath.FromSlash(rel)))
	if err != nil {
		return nil
	}
	r, ok := DecodeWarm(raw)
	if !ok || !bytes.Equal(keyBytes(r.Key), kb) {
		return nil
	}
	return r
}

// SaveWarm writes r (mode 0600, atomically) and keeps at most 16 records.
func SaveWarm(r *WarmRecord) error {
	r.Version = WarmVersion
	if err := generator.WriteFileAtomic(r.Key.Dir, warmRel(r.Key), encodeWarm(r), 0o600); err != nil {
		return err
	}
	pruneWarm(r.Key.Dir, 16)
	return nil
}

// DropWarm removes the record of key (a run that failed, or changed what
// the record says).
func DropWarm(key WarmKey) {
	if root, err := folderfs.Open(key.Dir); err == nil {
		_ = root.Remove(warmRel(key))
		_ = root.Close()
	}
}

// pruneWarm keeps the keep newest records of the outer folder dir.
func pruneWarm(dir string, keep int) {
	root, err := folderfs.Open(dir)
	if err != nil {
		return
	}
	defer root.Close()
	entries, err := fs.ReadDir(root.FS(), WarmDir)
	if err != nil || len(entries) <= keep {
		return
	}
	type rec struct {
		name string
		mod  int64
	}
	var recs []rec
	for _, e := range entries {
		if fi, err := e.Info(); err == nil && (strings.HasSuffix(e.Name(), warmExt) || strings.HasSuffix(e.Name(), ".json")) {
			recs = append(recs, rec{e.Name(), fi.ModTime().UnixNano()})
		}
	}
	sort.Slice(recs, func(i, j int) bool { return recs[i].mod > recs[j].mod })
	for _, r := range recs[min(keep, len(recs)):] {
		_ = root.Remove(WarmDir + "/" + r.name)
	}
}

// Fresh reports whether what r was recorded from is unchanged: the
// Taskfile (taskfileSum: the hex sha256 of the bytes the caller read and
// took its facts from, ReadTaskfileFacts, so that both are judged on one
// read), the binaries, the source trees. (The checks are run by RunWarm:
// they look at msb and the builder, outside the files.)
func (r *WarmRecord) Fresh(taskfileSum string, binaries []string) bool {
	if taskfileSum == "" || taskfileSum != r.Taskfile {
		return false
	}
	stamps, err := StampFiles(binaries)
	if err != nil || !slices.Equal(stamps, r.Binaries) {
		return false
	}
	for _, s := range r.Sources {
		if sum, err := TreeSum(s.Root); err != nil || sum != s.Sum {
			return false
		}
	}
	return true
}

// StampFiles stamps each file.
func StampFiles(paths []string) ([]FileStamp, error) {
	out := make([]FileStamp, 0, len(paths))
	for _, p := range paths {
		fi, err := os.Stat(p)
		if err != nil {
			return nil, err
		}
		out = append(out, FileStamp{Path: p, Size: fi.Size(), ModNs: fi.ModTime().UnixNano()})
	}
	return out, nil
}

// TreeSum fingerprints root: a file, or a folder and everything under it
// (names, sizes, modes and modification times; a missing root is a sum of
// its own, so its appearance is noticed).
func TreeSum(root string) (string, error) {
	h := sha256.New()
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if errors.Is(err, fs.ErrNotExist) && p == root {
			h.Write([]byte("missing"))
			return nil
		}
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		_, err = h.Write([]byte(rel + "\x00" + fi.Mode().String() + "\x00" +
			itoa(fi.Size()) + "\x00" + itoa(fi.ModTime().UnixNano()) + "\n"))
		return err
	})
	if err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// GlobRoot is the part of a glob before its first pattern character: the
// tree TreeSum must cover so that it sees every file the glob could match
// (a superset, so a change is never missed).
func GlobRoot(dir, glob string) string {
	glob = strings.TrimPrefix(glob, "!")
	if !filepath.IsAbs(glob) {
		glob = filepath.Join(dir, glob)
	}
	parts := strings.Split(filepath.ToSlash(glob), "/")
	for i, part := range parts {
		if strings.ContainsAny(part, "*?[{\\") {
			return filepath.FromSlash(strings.Join(parts[:i], "/"))
		}
	}
	return filepath.Clean(glob)
}
