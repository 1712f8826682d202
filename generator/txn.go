package generator

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
)

// txn remembers every step so it can be undone.
type txn struct {
	createdDirs []string          // folders made, deepest last
	written     []string          // files renamed into place
	backups     map[string][]byte // original content of replaced files
	backupModes map[string]fs.FileMode
	temps       []string
}

// staged is a temporary file waiting to be renamed onto dst.
type staged struct{ tmp, dst string }

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
	var moves []staged
	for i, f := range plan.Files {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("interrupted: %w", err)
		}
		m, err := t.stageEntry(root, f, changes[i], man)
		if err != nil {
			return err
		}
		if m != nil {
			moves = append(moves, *m)
		}
	}
	m, err := t.stageManifest(root, man)
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

// stageEntry makes a folder of the plan, or stages a file's new content
// (after putting aside the user's copy it overwrites) and records its
// digest in man. It returns the rename still to do, if any.
func (t *txn) stageEntry(root string, f File, c Change, man manifest) (*staged, error) {
	dst := filepath.Join(root, filepath.FromSlash(f.Path))
	if f.Dir {
		if c.Action == Create {
			return nil, t.mkdirAll(dst)
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
	if err := t.mkdirAll(filepath.Dir(dst)); err != nil {
		return nil, err
	}
	if c.Action == Overwrite {
		old, err := os.ReadFile(dst)
		if err != nil {
			return nil, err
		}
		if err := t.stageAndMove(dst+".orig", old, ModeFile); err != nil {
			return nil, err
		}
	}
	// Only a file that replaces one needs its data on disk before the
	// rename: a crash could otherwise leave it empty where the old
	// content was. A new file has nothing to lose, and skipping the
	// fsync makes a fresh init several times faster.
	tmp, err := t.stage(dst, content, f.Mode, c.Action != Create)
	if err != nil {
		return nil, err
	}
	return &staged{tmp, dst}, nil
}

// stageManifest stages asb's record of what it wrote. An unchanged record
// is left alone, so a re-init that changes nothing writes nothing.
func (t *txn) stageManifest(root string, man manifest) (*staged, error) {
	manBytes, err := json.MarshalIndent(man, "", "  ")
	if err != nil {
		return nil, err
	}
	manBytes = append(manBytes, '\n')
	manDst := filepath.Join(root, filepath.FromSlash(ManifestPath))
	cur, rerr := os.ReadFile(manDst)
	if rerr == nil && bytes.Equal(cur, manBytes) {
		return nil, nil
	}
	if err := t.mkdirAll(filepath.Dir(manDst)); err != nil {
		return nil, err
	}
	tmp, err := t.stage(manDst, manBytes, ModeFile, rerr == nil)
	if err != nil {
		return nil, err
	}
	return &staged{tmp, manDst}, nil
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
