package generator

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
)

// WriteFileAtomic replaces path with data: it writes a temporary file in the
// same folder with mode, syncs it, renames it over path and syncs the folder.
// A reader sees the old content or the new one, never a mix; on error path is
// left as it was.
func WriteFileAtomic(path string, data []byte, mode fs.FileMode) error {
	return WriteFilesAtomic([]PendingFile{{Path: path, Data: data, Mode: mode}})
}

// PendingFile is one file of WriteFilesAtomic.
type PendingFile struct {
	Path string
	Data []byte
	Mode fs.FileMode
}

// WriteFilesAtomic writes several files all or nothing: every content is
// staged and synced in a temporary file beside its target first, and only
// then renamed into place. If a rename fails, the files already renamed are
// put back as they were (or removed, when they did not exist before).
func WriteFilesAtomic(files []PendingFile) error {
	staged := make([]*stagedFile, 0, len(files))
	defer func() {
		for _, s := range staged {
			if s.tmp != "" {
				_ = os.Remove(s.tmp)
			}
		}
	}()
	for _, f := range files {
		s := &stagedFile{PendingFile: f}
		if fi, err := os.Lstat(f.Path); err == nil {
			if !fi.Mode().IsRegular() {
				return fmt.Errorf("%s is not a regular file (a folder or a link); move it away", f.Path)
			}
			if s.old, err = os.ReadFile(f.Path); err != nil {
				return err
			}
			s.existed, s.oldMode = true, fi.Mode().Perm()
		} else if !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		tmp, err := stageTemp(f.Path, f.Data, f.Mode, true)
		if err != nil {
			return err
		}
		s.tmp = tmp
		staged = append(staged, s)
	}
	for i, s := range staged {
		if err := os.Rename(s.tmp, s.Path); err != nil {
			errs := []error{fmt.Errorf("write %s: %w", s.Path, err)}
			for j := i - 1; j >= 0; j-- {
				if rerr := staged[j].restore(); rerr != nil {
					errs = append(errs, fmt.Errorf("and restoring %s failed: %w", staged[j].Path, rerr))
				}
			}
			return errors.Join(errs...)
		}
		s.tmp = ""
	}
	for _, dir := range foldersOf(files) {
		_ = syncDir(dir) // best effort: not every file system syncs folders
	}
	return nil
}

type stagedFile struct {
	PendingFile
	tmp     string // the staged content, until renamed into place
	old     []byte // what Path held before
	oldMode fs.FileMode
	existed bool
}

// restore puts back what Path held before it was replaced.
func (s *stagedFile) restore() error {
	if !s.existed {
		return os.Remove(s.Path)
	}
	tmp, err := stageTemp(s.Path, s.old, s.oldMode, true)
	if err != nil {
		return err
	}
	if err := os.Rename(tmp, s.Path); err != nil {
		os.Remove(tmp)
		return err
	}
	return nil
}

// stageTemp writes data to a new temporary file beside dst (fsynced when
// sync is set) and returns its name; on failure it leaves no file behind.
func stageTemp(dst string, data []byte, mode fs.FileMode, sync bool) (string, error) {
	f, err := os.CreateTemp(filepath.Dir(dst), "."+filepath.Base(dst)+".asb-*")
	if err != nil {
		return "", err
	}
	name := f.Name()
	fail := func(err error) (string, error) {
		f.Close()
		os.Remove(name)
		return "", err
	}
	if err := f.Chmod(mode.Perm()); err != nil {
		return fail(err)
	}
	if _, err := f.Write(data); err != nil {
		return fail(err)
	}
	if sync {
		if err := f.Sync(); err != nil {
			return fail(err)
		}
	}
	if err := f.Close(); err != nil {
		os.Remove(name)
		return "", err
	}
	return name, nil
}

func foldersOf(files []PendingFile) []string {
	seen := map[string]bool{}
	var out []string
	for _, f := range files {
		if d := filepath.Dir(f.Path); !seen[d] {
			seen[d] = true
			out = append(out, d)
		}
	}
	return out
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// StagingPattern is the name of a temporary file a write stages its content
// in (.NAME.asb-NNNN, beside NAME); the generated .gitignore ignores it.
const StagingPattern = ".*.asb-*"

var stagingRe = regexp.MustCompile(`^\..+\.asb-[0-9]+$`)

// CleanStaging removes the staging files a write that was killed left under
// root (workspace/ and .git are not looked into), and returns their paths
// relative to root. Call it holding the folder's lock: a live write's
// staging files are its own.
func CleanStaging(root string) ([]string, error) {
	var removed []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if errors.Is(err, fs.ErrNotExist) && p == root {
			return filepath.SkipAll
		}
		if err != nil {
			return err
		}
		if d.IsDir() && p != root && (d.Name() == ".git" || d.Name() == "workspace" && filepath.Dir(p) == root || d.Name() == "node_modules") {
			return filepath.SkipDir
		}
		if d.Type().IsRegular() && stagingRe.MatchString(d.Name()) {
			if err := os.Remove(p); err != nil {
				return err
			}
			rel, _ := filepath.Rel(root, p)
			removed = append(removed, filepath.ToSlash(rel))
		}
		return nil
	})
	return removed, err
}
