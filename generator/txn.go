package generator

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"

	"github.com/agents-sandbox/asb/internal/folderfs"
	"github.com/agents-sandbox/asb/schema"
)

// txn remembers every step so it can be undone. Inside the folder every
// step goes through its confined root r; only the folder itself (and the
// folders above it that were missing) is made by path, before r exists.
type txn struct {
	r           *folderfs.Root
	madeOutside []string          // the folder and missing parents, absolute, outermost first
	createdDirs []string          // folders made inside, relative, deepest last
	written     []string          // files renamed into place
	backups     map[string][]byte // original content of replaced files
	backupModes map[string]fs.FileMode
	temps       []*staging // each open (locked) until placed or dropped
}

// staged is a temporary file waiting to be renamed onto dst.
type staged struct {
	tmp *staging
	dst string
}

func (t *txn) run(ctx context.Context, root string, plan *Plan, changes []Change) error {
	t.backups = map[string][]byte{}
	t.backupModes = map[string]fs.FileMode{}
	if err := t.makeFolder(root); err != nil {
		return err
	}
	r, err := folderfs.Open(root)
	if err != nil {
		return err
	}
	t.r = r
	man := readManifest(r)
	if man.Files == nil {
		man.Files = map[string]string{}
	}
	// Stage: every new content in a temporary file beside its target.
	var moves []staged
	for i, f := range plan.Files {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("interrupted: %w", err)
		}
		m, err := t.stageEntry(f, changes[i], man)
		if err != nil {
			return err
		}
		if m != nil {
			moves = append(moves, *m)
		}
	}
	m, err := t.stageManifest(man)
	if err != nil {
		return err
	}
	if m != nil {
		moves = append(moves, *m)
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

// makeFolder makes the outer folder itself and the folders above it that
// are missing, remembering them for the rollback.
func (t *txn) makeFolder(dir string) error {
	if fi, err := os.Stat(dir); err == nil {
		if !fi.IsDir() {
			return fmt.Errorf("%s is a file, not a folder", dir)
		}
		return nil
	}
	if err := t.makeFolder(filepath.Dir(dir)); err != nil {
		return err
	}
	if err := os.Mkdir(dir, ModeDir); err != nil && !errors.Is(err, fs.ErrExist) {
		return notDirHint(err)
	}
	t.madeOutside = append(t.madeOutside, dir)
	return nil
}

// stageEntry makes a folder of the plan, or stages a file's new content
// (after putting aside the user's copy it overwrites) and records its
// digest in man. It returns the rename still to do, if any.
func (t *txn) stageEntry(f File, c Change, man manifest) (*staged, error) {
	if f.Dir {
		if c.Action == Create {
			return nil, t.mkdirAll(f.Path)
		}
		return nil, nil
	}
	if c.Action == Kept {
		return nil, nil
	}
	content := f.Content
	if c.Content != nil {
		content = c.Content
	}
	man.Files[f.Path] = digest(content)
	if c.Action == Unchanged {
		return nil, nil
	}
	if err := t.mkdirAll(path.Dir(f.Path)); err != nil {
		return nil, err
	}
	if c.Action == Overwrite {
		old, err := t.r.ReadFile(f.Path, schema.MaxFileSize)
		if err != nil {
			return nil, err
		}
		if err := t.stageAndMove(f.Path+".orig", old, ModeFile); err != nil {
			return nil, err
		}
	}
	// Only a file that replaces one needs its data on disk before the
	// rename: a crash could otherwise leave it empty where the old
	// content was. A new file has nothing to lose, and skipping the
	// fsync makes a fresh init several times faster.
	tmp, err := t.stage(f.Path, content, f.Mode, c.Action != Create)
	if err != nil {
		return nil, err
	}
	return &staged{tmp, f.Path}, nil
}

// stageManifest stages asb's record of what it wrote. An unchanged record
// is left alone, so a re-init that changes nothing writes nothing.
func (t *txn) stageManifest(man manifest) (*staged, error) {
	manBytes, err := json.MarshalIndent(man, "", "  ")
	if err != nil {
		return nil, err
	}
	manBytes = append(manBytes, '\n')
	cur, rerr := t.r.ReadFile(ManifestPath, schema.MaxFileSize)
	if rerr == nil && bytes.Equal(cur, manBytes) {
		return nil, nil
	}
	if err := t.mkdirAll(path.Dir(ManifestPath)); err != nil {
		return nil, err
	}
	tmp, err := t.stage(ManifestPath, manBytes, ModeFile, rerr == nil)
	if err != nil {
		return nil, err
	}
	return &staged{tmp, ManifestPath}, nil
}

// mkdirAll makes the folder rel inside the outer folder, and those above
// it, remembering each it made.
func (t *txn) mkdirAll(rel string) error {
	if rel == "." {
		return nil
	}
	if fi, err := t.r.Stat(rel); err == nil {
		if !fi.IsDir() {
			return fmt.Errorf("%s is a file, not a folder", rel)
		}
		return nil
	}
	if err := t.mkdirAll(path.Dir(rel)); err != nil {
		return err
	}
	if err := t.r.Mkdir(rel, ModeDir); err != nil && !errors.Is(err, fs.ErrExist) {
		return folderfs.Explain(rel, notDirHint(err))
	}
	t.createdDirs = append(t.createdDirs, rel)
	return nil
}

// stage writes content to a new staging file in dst's folder.
func (t *txn) stage(dst string, content []byte, mode fs.FileMode, sync bool) (*staging, error) {
	tmp, err := stageTemp(t.r, dst, content, mode, sync)
	if err != nil {
		return nil, err
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

func (t *txn) move(tmp *staging, dst string) error {
	if _, seen := t.backups[dst]; !seen {
		if old, err := t.r.ReadFile(dst, 0); err == nil {
			t.backups[dst] = old
			if fi, err := t.r.Stat(dst); err == nil {
				t.backupModes[dst] = fi.Mode().Perm()
			}
		}
	}
	if err := tmp.place(t.r, dst); err != nil {
		return folderfs.Explain(dst, err)
	}
	t.written = append(t.written, dst)
	return nil
}

// rollback undoes every step, newest first.
func (t *txn) rollback() error {
	var errs []error
	if t.r != nil {
		errs = t.rollbackInside()
		_ = t.r.Close()
		t.r = nil
	}
	for i := len(t.madeOutside) - 1; i >= 0; i-- {
		if err := os.Remove(t.madeOutside[i]); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// rollbackInside undoes the steps inside the folder: staging files,
// written files (restored or removed), made folders.
func (t *txn) rollbackInside() []error {
	var errs []error
	for _, tmp := range t.temps {
		if err := tmp.drop(t.r); err != nil {
			errs = append(errs, err)
		}
	}
	for i := len(t.written) - 1; i >= 0; i-- {
		dst := t.written[i]
		if old, ok := t.backups[dst]; ok {
			if err := restoreFile(t.r, dst, old, t.backupModes[dst]); err != nil {
				errs = append(errs, err)
			}
			continue
		}
		if err := t.r.Remove(dst); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	sort.Sort(sort.Reverse(sort.StringSlice(t.createdDirs)))
	for _, d := range t.createdDirs {
		if err := t.r.Remove(d); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	return errs
}

// restoreFile puts old back as dst's content, in mode (a staging file
// renamed over it: never half the old content and half the new).
func restoreFile(r *folderfs.Root, dst string, old []byte, mode fs.FileMode) error {
	tmp, err := stageTemp(r, dst, old, mode, true)
	if err != nil {
		return err
	}
	if err := tmp.place(r, dst); err != nil {
		_ = tmp.drop(r)
		return err
	}
	return nil
}
