package generator

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/agents-sandbox/asb/schema"
)

// Action is what Apply does (or, in a dry run, would do) with one entry.
type Action string

// The actions, as `asb init` reports them.
const (
	Create    Action = "create"    // the file is new
	Unchanged Action = "unchanged" // the file already has this content
	Update    Action = "update"    // asb wrote it before, the user did not edit it since
	Kept      Action = "kept"      // the user edited it: left alone
	Overwrite Action = "overwrite" // edited, but --force: replaced, old copy in .orig
	Conflict  Action = "conflict"  // cannot be written (a folder where a file goes, …)
)

// Change is one line of the report.
type Change struct {
	Path   string
	Mode   fs.FileMode
	Dir    bool // a folder
	Action Action
	Why    string
	// Content, when set, is what is written instead of the plan's (a file
	// of AppendLines: the user's lines and the missing ones).
	Content []byte
}

// WriteOptions steer Apply.
type WriteOptions struct {
	DryRun bool // classify only, write nothing
	Force  bool // overwrite files the user edited, keeping FILE.orig
}

// ManifestPath records what asb wrote, to tell its own output from edits.
const ManifestPath = ".asb/generated.json"

type manifest struct {
	Files map[string]string `json:"files"` // path → sha256 of what asb wrote
}

// ConflictError lists the entries Apply cannot write; nothing was written.
type ConflictError struct{ Changes []Change }

func (e *ConflictError) Error() string {
	if len(e.Changes) == 1 {
		c := e.Changes[0]
		return fmt.Sprintf("cannot write the outer folder; nothing was changed: %s: %s", c.Path, c.Why)
	}
	var b strings.Builder
	b.WriteString("cannot write the outer folder; nothing was changed:")
	for _, c := range e.Changes {
		fmt.Fprintf(&b, "\n  %s: %s", c.Path, c.Why)
	}
	return b.String()
}

// Classify compares the plan with what is on disk under root.
func Classify(root string, plan *Plan, opts WriteOptions) ([]Change, error) {
	if fi, err := os.Stat(root); err == nil && !fi.IsDir() {
		return nil, fmt.Errorf("%s is a file, not a folder: choose another DIR", root)
	} else if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%s: %w", root, notDirHint(err))
	}
	prev := readManifest(root)
	var out []Change
	var blocked []string // folders of the plan that something is in the way of
	for _, f := range plan.Files {
		c := Change{Path: f.Path, Mode: f.Mode, Dir: f.Dir}
		fi, err := os.Lstat(filepath.Join(root, filepath.FromSlash(f.Path)))
		under := ""
		for _, b := range blocked {
			if strings.HasPrefix(f.Path, b+"/") {
				under = b
			}
		}
		switch {
		case under != "":
			c.Action, c.Why = Conflict, "under "+under+"/, which is in the way"
		case errors.Is(err, fs.ErrNotExist):
			c.Action = Create
		case err != nil:
			c.Action, c.Why = Conflict, notDirHint(err).Error()
		case f.Dir && fi.IsDir():
			c.Action = Unchanged
		case f.Dir:
			c.Action, c.Why = Conflict, "a file or link is in the way of a folder; move it away"
		case !fi.Mode().IsRegular():
			c.Action, c.Why = Conflict, "not a regular file (a folder or a link); move it away"
		default:
			cur, err := schema.ReadFile(filepath.Join(root, filepath.FromSlash(f.Path)))
			if err != nil {
				c.Action, c.Why = Conflict, err.Error()
				break
			}
			switch {
			case bytes.Equal(cur, f.Content) && fi.Mode().Perm() == f.Mode.Perm():
				c.Action = Unchanged
			case bytes.Equal(cur, f.Content):
				c.Action, c.Why = Update, fmt.Sprintf("mode %o → %o", fi.Mode().Perm(), f.Mode.Perm())
			case f.Preserve:
				c.Action, c.Why = Kept, "yours: never overwritten"
			case f.AppendLines:
				appendLines(&c, cur, f.Content)
			case prev.Files[f.Path] == digest(cur):
				c.Action = Update
			case opts.Force:
				c.Action, c.Why = Overwrite, "edited by you; old copy in "+f.Path+".orig"
				if why := inTheWay(filepath.Join(root, filepath.FromSlash(f.Path+".orig")), false); why != "" {
					c.Action, c.Why = Conflict, f.Path+".orig: "+why
				}
			default:
				c.Action, c.Why = Kept, "edited by you; --force overwrites it (keeping a .orig copy)"
			}
		}
		if c.Action == Conflict && f.Dir && under == "" {
			blocked = append(blocked, f.Path)
		}
		out = append(out, c)
	}
	// asb's own record must be writable too, or Apply would fail halfway
	// (and a dry run would not have said so). These come after the plan's
	// entries, so out[i] still describes plan.Files[i].
	for _, aux := range []struct {
		path string
		dir  bool
	}{{path.Dir(ManifestPath), true}, {ManifestPath, false}} {
		if why := inTheWay(filepath.Join(root, filepath.FromSlash(aux.path)), aux.dir); why != "" {
			mode := ModeFile
			if aux.dir {
				mode = ModeDir
			}
			out = append(out, Change{Path: aux.path, Mode: mode, Dir: aux.dir, Action: Conflict, Why: why})
			break
		}
	}
	return out, nil
}

// appendLines classifies a file of AppendLines that differs from the plan:
// the plan's lines it lacks are appended to it; none lacking, it is kept.
func appendLines(c *Change, cur, want []byte) {
	have := map[string]bool{}
	for l := range strings.SplitSeq(string(cur), "\n") {
		have[strings.TrimSpace(l)] = true
	}
	var missing []string
	for l := range strings.SplitSeq(string(want), "\n") {
		if t := strings.TrimSpace(l); t != "" && !strings.HasPrefix(t, "#") && !have[t] {
			missing = append(missing, t)
		}
	}
	if len(missing) == 0 {
		c.Action, c.Why = Kept, "yours: it has every line asb needs"
		return
	}
	out := string(cur)
	if out != "" && !strings.HasSuffix(out, "\n") {
		out += "\n"
	}
	out += "\n# Added by asb init: the outer folder needs these ignored (secrets.env holds credentials).\n" + strings.Join(missing, "\n") + "\n"
	c.Action, c.Why, c.Content = Update, "yours: added the lines asb needs: "+strings.Join(missing, " "), []byte(out)
}

// inTheWay says why the entry at p cannot be written as a folder (dir) or
// a regular file, or returns "" when p is absent or already of that kind.
func inTheWay(p string, dir bool) string {
	fi, err := os.Lstat(p)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return ""
	case err != nil:
		return notDirHint(err).Error()
	case dir && !fi.IsDir():
		return "a file or link is in the way of a folder; move it away"
	case !dir && !fi.Mode().IsRegular():
		return "not a regular file (a folder or a link); move it away"
	}
	return ""
}

// Apply writes the plan under root. Each file is written to a temporary file
// in its folder and renamed into place; if anything fails (or ctx is done)
// before the last rename, every change is rolled back, so a failed run leaves
// the folder as it was. It returns what it did, entry by entry.
func Apply(ctx context.Context, root string, plan *Plan, opts WriteOptions) ([]Change, error) {
	changes, _, err := ApplyUndoable(ctx, root, plan, opts)
	return changes, err
}

// ApplyUndoable is Apply that also returns undo, which takes back what
// this run wrote, and only that (files it created or replaced, folders it
// made), for a step after the write that fails (asb init's git init).
func ApplyUndoable(ctx context.Context, root string, plan *Plan, opts WriteOptions) (changes []Change, undo func() error, err error) {
	noop := func() error { return nil }
	changes, err = Classify(root, plan, opts)
	if err != nil {
		return nil, noop, err
	}
	var conflicts []Change
	for _, c := range changes {
		// Entries under a folder already in conflict add nothing to fix.
		if c.Action == Conflict && !strings.HasPrefix(c.Why, "under ") {
			conflicts = append(conflicts, c)
		}
	}
	if len(conflicts) > 0 {
		return changes, noop, &ConflictError{Changes: conflicts}
	}
	if opts.DryRun {
		return changes, noop, nil
	}
	tx := &txn{}
	if err := tx.run(ctx, root, plan, changes); err != nil {
		if rerr := tx.rollback(); rerr != nil {
			return nil, noop, fmt.Errorf("%w (and rolling back failed: %v)", err, rerr)
		}
		return nil, noop, err
	}
	return changes, tx.rollback, nil
}

// txn remembers every step so it can be undone.
type txn struct {
	createdDirs []string          // folders made, deepest last
	written     []string          // files renamed into place
	backups     map[string][]byte // original content of replaced files
	backupModes map[string]fs.FileMode
	temps       []string
}

func (t *txn) run(ctx context.Context, root string, plan *Plan, changes []Change) error {
	t.backups = map[string][]byte{}
	t.backupModes = map[string]fs.FileMode{}
	if err := t.mkdirAll(root); err != nil {
		return err
	}
	man := readManifest(root)
	if man.Files == nil {
		man.Files = map[string]string{}
	}
	// Stage: every new content in a temporary file beside its target.
	type staged struct{ tmp, dst string }
	var moves []staged
	for i, f := range plan.Files {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("interrupted: %w", err)
		}
		dst := filepath.Join(root, filepath.FromSlash(f.Path))
		act := changes[i].Action
		if f.Dir {
			if act == Create {
				if err := t.mkdirAll(dst); err != nil {
					return err
				}
			}
			continue
		}
		if act == Kept {
			continue
		}
		content := f.Content
		if changes[i].Content != nil {
			content = changes[i].Content
		}
		man.Files[f.Path] = digest(content)
		if act == Unchanged {
			continue
		}
		if err := t.mkdirAll(filepath.Dir(dst)); err != nil {
			return err
		}
		if act == Overwrite {
			old, err := os.ReadFile(dst)
			if err != nil {
				return err
			}
			if err := t.stageAndMove(dst+".orig", old, ModeFile); err != nil {
				return err
			}
		}
		// Only a file that replaces one needs its data on disk before the
		// rename: a crash could otherwise leave it empty where the old
		// content was. A new file has nothing to lose, and skipping the
		// fsync makes a fresh init several times faster.
		tmp, err := t.stage(dst, content, f.Mode, act != Create)
		if err != nil {
			return err
		}
		moves = append(moves, staged{tmp, dst})
	}
	manBytes, err := json.MarshalIndent(man, "", "  ")
	if err != nil {
		return err
	}
	manBytes = append(manBytes, '\n')
	manDst := filepath.Join(root, filepath.FromSlash(ManifestPath))
	// An unchanged record is left alone, so a re-init that changes nothing
	// writes nothing.
	if cur, rerr := os.ReadFile(manDst); rerr != nil || !bytes.Equal(cur, manBytes) {
		if err := t.mkdirAll(filepath.Dir(manDst)); err != nil {
			return err
		}
		manTmp, err := t.stage(manDst, manBytes, ModeFile, rerr == nil)
		if err != nil {
			return err
		}
		moves = append(moves, staged{manTmp, manDst})
	}
	// Commit: rename each staged file into place.
	for _, m := range moves {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("interrupted: %w", err)
		}
		if err := t.move(m.tmp, m.dst); err != nil {
			return err
		}
	}
	return nil
}

func (t *txn) mkdirAll(dir string) error {
	if fi, err := os.Stat(dir); err == nil {
		if !fi.IsDir() {
			return fmt.Errorf("%s is a file, not a folder", dir)
		}
		return nil
	}
	if err := t.mkdirAll(filepath.Dir(dir)); err != nil {
		return err
	}
	if err := os.Mkdir(dir, ModeDir); err != nil && !errors.Is(err, fs.ErrExist) {
		return notDirHint(err)
	}
	t.createdDirs = append(t.createdDirs, dir)
	return nil
}

// stage writes content to a new temporary file in dst's folder.
func (t *txn) stage(dst string, content []byte, mode fs.FileMode, sync bool) (string, error) {
	tmp, err := stageTemp(dst, content, mode, sync)
	if err != nil {
		return "", err
	}
	t.temps = append(t.temps, tmp)
	return tmp, nil
}

func (t *txn) stageAndMove(dst string, content []byte, mode fs.FileMode) error {
	tmp, err := t.stage(dst, content, mode, true)
	if err != nil {
		return err
	}
	return t.move(tmp, dst)
}

func (t *txn) move(tmp, dst string) error {
	if _, seen := t.backups[dst]; !seen {
		if old, err := os.ReadFile(dst); err == nil {
			t.backups[dst] = old
			if fi, err := os.Stat(dst); err == nil {
				t.backupModes[dst] = fi.Mode().Perm()
			}
		}
	}
	if err := os.Rename(tmp, dst); err != nil {
		return err
	}
	t.written = append(t.written, dst)
	return nil
}

// rollback undoes every step, newest first.
func (t *txn) rollback() error {
	var errs []error
	for _, tmp := range t.temps {
		if err := os.Remove(tmp); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	for i := len(t.written) - 1; i >= 0; i-- {
		dst := t.written[i]
		if old, ok := t.backups[dst]; ok {
			// WriteFile keeps the mode of the file it truncates (the new
			// one's), so the old mode is put back explicitly.
			if err := os.WriteFile(dst, old, t.backupModes[dst]); err != nil {
				errs = append(errs, err)
			} else if err := os.Chmod(dst, t.backupModes[dst]); err != nil {
				errs = append(errs, err)
			}
			continue
		}
		if err := os.Remove(dst); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	sort.Sort(sort.Reverse(sort.StringSlice(t.createdDirs)))
	for _, d := range t.createdDirs {
		if err := os.Remove(d); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

func readManifest(root string) manifest {
	var m manifest
	raw, err := schema.ReadFile(filepath.Join(root, filepath.FromSlash(ManifestPath)))
	if err == nil {
		_ = json.Unmarshal(raw, &m) // a damaged manifest only means "treat files as edited"
	}
	return m
}

func digest(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// notDirHint rewrites "not a directory" errors, which happen when a path
// runs through a regular file, into advice.
func notDirHint(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) && errors.Is(err, syscallENOTDIR()) {
		return fmt.Errorf("%s runs through a file, not a folder: choose a DIR that is not under a file", pe.Path)
	}
	return err
}
