package generator

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"regexp"
	"sync"

	"github.com/agents-sandbox/asb/internal/folderfs"
	"github.com/agents-sandbox/asb/schema"
)

// WriteFileAtomic replaces dir/rel with data: it writes a staging file in
// the same folder (mode 0600), syncs it, sets mode, renames it over rel and
// syncs the folder. A reader sees the old content or the new one, never a
// mix; on error rel is left as it was. A new file is neither synced nor its
// folder, as asb init's are not (generator.Apply): a power loss can lose
// it, which loses no earlier content; a replaced file is never left empty.
// Like every write of asb's in an outer folder, it goes through the
// folder's confined root: a link out of dir is refused, never followed.
func WriteFileAtomic(dir, rel string, data []byte, mode fs.FileMode) error {
	return WriteFilesAtomic(dir, []PendingFile{{Path: rel, Data: data, Mode: mode}})
}

// PendingFile is one file of WriteFilesAtomic: Path is relative to the
// folder, slash-separated.
type PendingFile struct {
	Path string
	Data []byte
	Mode fs.FileMode
}

// WriteFilesAtomic writes several files under dir all or nothing (making
// the folders they go in, when missing): every
// content is staged and synced beside its target first, and only then
// renamed into place. If a rename fails, the files already renamed are put
// back as they were (or removed, when they did not exist before).
func WriteFilesAtomic(dir string, files []PendingFile) error {
	r, err := folderfs.Open(dir)
	if err != nil {
		return err
	}
	defer r.Close()
	return WriteFilesIn(r, files)
}

// WriteFilesIn is WriteFilesAtomic in an opened root.
func WriteFilesIn(r *folderfs.Root, files []PendingFile) error {
	staged := make([]*stagedFile, 0, len(files))
	defer func() {
		for _, s := range staged {
			_ = s.tmp.drop(r)
		}
	}()
	for _, f := range files {
		s := &stagedFile{PendingFile: f}
		if err := r.MkdirAll(path.Dir(f.Path), ModeDir); err != nil {
			return folderfs.Explain(f.Path, err)
		}
		if fi, err := r.Lstat(f.Path); err == nil {
			if !fi.Mode().IsRegular() {
				return fmt.Errorf("%s is not a regular file (a folder or a link); move it away", f.Path)
			}
			if s.old, err = r.ReadFile(f.Path, 0); err != nil {
				return err
			}
			s.existed, s.oldMode = true, fi.Mode().Perm()
		} else if !errors.Is(err, fs.ErrNotExist) {
			return folderfs.Explain(f.Path, err)
		}
		tmp, err := stageTemp(r, f.Path, f.Data, f.Mode, s.existed)
		if err != nil {
			return err
		}
		s.tmp = tmp
		staged = append(staged, s)
	}
	for i, s := range staged {
		if err := s.tmp.place(r, s.Path); err != nil {
			errs := []error{fmt.Errorf("write %s: %w", s.Path, err)}
			for j := i - 1; j >= 0; j-- {
				if rerr := staged[j].restore(r); rerr != nil {
					errs = append(errs, fmt.Errorf("and restoring %s failed: %w", staged[j].Path, rerr))
				}
			}
			return errors.Join(errs...)
		}
	}
	for _, d := range foldersOf(replaced(staged)) {
		r.SyncDir(d)
	}
	return nil
}

// replaced are the files of staged that replaced one.
func replaced(staged []*stagedFile) []PendingFile {
	var out []PendingFile
	for _, s := range staged {
		if s.existed {
			out = append(out, s.PendingFile)
		}
	}
	return out
}

type stagedFile struct {
	PendingFile
	tmp     *staging // the staged content, until renamed into place
	old     []byte   // what Path held before
	oldMode fs.FileMode
	existed bool
}

// restore puts back what Path held before it was replaced.
func (s *stagedFile) restore(r *folderfs.Root) error {
	if !s.existed {
		return r.Remove(s.Path)
	}
	tmp, err := stageTemp(r, s.Path, s.old, s.oldMode, true)
	if err != nil {
		return err
	}
	if err := tmp.place(r, s.Path); err != nil {
		_ = tmp.drop(r)
		return err
	}
	return nil
}

// staging is a staging file, open and so locked (folderfs.CreateTemp) until
// it is placed or dropped: no other asb takes it for a killed write's.
type staging struct {
	f    *os.File
	name string
}

// place renames the staged file over dst, then lets it go.
func (t *staging) place(r *folderfs.Root, dst string) error {
	if err := r.Rename(t.name, dst); err != nil {
		return err
	}
	t.f.Close()
	t.f = nil
	return nil
}

// drop removes the staged file unless it was placed; nil is dropped.
func (t *staging) drop(r *folderfs.Root) error {
	if t == nil || t.f == nil {
		return nil
	}
	err := r.Remove(t.name)
	t.f.Close()
	t.f = nil
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return err
}

// stageTemp writes data to a new staging file beside dst (created 0600,
// set to mode once written; fsynced when sync is set) and returns it, still
// open; on failure it leaves no file behind.
func stageTemp(r *folderfs.Root, dst string, data []byte, mode fs.FileMode, sync bool) (*staging, error) {
	f, name, err := r.CreateTemp(dst)
	if err != nil {
		return nil, folderfs.Explain(dst, err)
	}
	t := &staging{f: f, name: name}
	fail := func(err error) (*staging, error) {
		_ = t.drop(r)
		return nil, err
	}
	if _, err := f.Write(data); err != nil {
		return fail(err)
	}
	if sync {
		if err := f.Sync(); err != nil {
			return fail(err)
		}
	}
	if err := f.Chmod(mode.Perm()); err != nil {
		return fail(err)
	}
	return t, nil
}

func foldersOf(files []PendingFile) []string {
	seen := map[string]bool{}
	var out []string
	for _, f := range files {
		if d := path.Dir(f.Path); !seen[d] {
			seen[d] = true
			out = append(out, d)
		}
	}
	return out
}

// StagingPattern is the name of a staging file a write stages its content
// in (.NAME.asb-HEX, beside NAME); the generated .gitignore ignores it.
const StagingPattern = ".*" + folderfs.StagingInfix + "*"

var stagingRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^\..+\.asb-[0-9a-f]+$`) })

// CleanStaging removes the staging files a write that was killed left in
// the folder dir (workspace/, a session's checkout, .git and node_modules
// are not looked into; links are not followed), and returns their paths relative to dir. A live
// write's staging files are locked while it writes, and left alone
// (folderfs.RemoveStaging), whether or not that write holds the folder's
// lock: asb task writes its state and records under its run lock only.
func CleanStaging(dir string) ([]string, error) {
	r, err := folderfs.Open(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer r.Close()
	var removed []string
	err = fs.WalkDir(r.FS(), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == "." {
				return err
			}
			return nil // a folder that cannot be read holds nothing asb staged
		}
		if d.IsDir() && p != "." && (d.Name() == ".git" || p == "workspace" || d.Name() == "node_modules" || sessionCheckout(p)) {
			return fs.SkipDir
		}
		if d.Type().IsRegular() && stagingRe().MatchString(d.Name()) {
			gone, err := r.RemoveStaging(p)
			if err != nil {
				return err
			}
			if gone {
				removed = append(removed, p)
			}
		}
		return nil
	})
	return removed, err
}

// sessionCheckout reports whether p (slash-separated, relative to the outer
// folder) is a session's checkout, .asb/sessions/NAME/workspace: the
// project on another branch, /workspace of the session's VM, whose files
// are the user's and the agent's, never asb's staging, as workspace/'s.
func sessionCheckout(p string) bool {
	name := path.Base(path.Dir(p))
	return path.Dir(path.Dir(p)) == schema.SessionsDir && p == schema.SessionPathsOf(name).Workspace
}
